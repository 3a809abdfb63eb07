import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { ScriptedModelServer } from "effect-claude-agent/testing"
import * as fs from "node:fs"
import * as path from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { pageRoutes } from "../../examples/_chatPage.js"
import { noClaudeLeft, realCli, tempDir } from "../support/cli.js"
import { ownedProcesses } from "../support/process.js"
import { eventually } from "../support/wait.js"
import { chatServer, type ChunkLog, newLog, readChunks } from "./support.js"

const { reply, thinking, toolUse } = ScriptedModelServer

/** Debian's Chromium (`.ci/chromium` installs it). */
const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
/** Where the screenshots go: `.tmp/screenshots`, or `ECA_SCREENSHOTS` (the README's are made with `docs/images`). */
const screenshots = process.env["ECA_SCREENSHOTS"] ?? path.join(import.meta.dirname, "..", "..", ".tmp", "screenshots")

/**
 * The page's model: a thought, a sentence and a Bash call that needs an approval, streamed 40 ms per event; after
 * the tool, what the shell said. `SLOW` answers 300 words, 200 ms apart (to leave mid-answer).
 */
const model: ScriptedModelServer.Handler = (request) => {
  const prompt = request.lastUserText ?? ""
  if (prompt.startsWith("SLOW")) {
    return {
      ...reply(Array.from({ length: 300 }, (_, i) => `word${i} `).join("")),
      eventDelayMs: 200,
      textDeltaChars: 6
    }
  }
  return {
    ...(request.toolResults.length > 0
      ? reply(`The shell says: ${request.toolResults[0]?.content.trim()}`)
      : reply(
        thinking("A file and a listing will show it."),
        "Let me write a file and list the directory.",
        toolUse("Bash", { command: "echo hello > hello.txt && ls", description: "Write hello.txt and list" })
      )),
    eventDelayMs: 40,
    textDeltaChars: 8
  }
}

/** Headless Chromium with a fresh profile, closed (and reaped) with the scope. */
const browser = Effect.gen(function*() {
  const profile = yield* tempDir("eca-chromium-")
  return yield* Effect.acquireRelease(
    Effect.promise(() =>
      chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        viewport: { width: 900, height: 760 },
        // without the background-networking flags, Chromium's own connections are refused many at a time here
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync"
        ]
      })
    ),
    (context) => Effect.promise(() => context.close())
  )
})

const shot = (page: Page, name: string) =>
  Effect.promise(async () => {
    fs.mkdirSync(screenshots, { recursive: true })
    await page.screenshot({ path: path.join(screenshots, `${name}.png`), fullPage: true })
  })

const step = <A>(what: (page: Page) => Promise<A>, page: Page) => Effect.promise(() => what(page))

/**
 * Every `/api/chat` response the page read to its end, parsed and judged by `ai`'s `uiMessageChunkSchema` into
 * `log` (`readChunks`: each must also end with `[DONE]`). The effect returned waits for the bodies read so far and
 * fails on the first bad one.
 */
const recordChunks = (page: Page, log: ChunkLog) => {
  // each settles to its failure (or undefined): none is left rejected with no one waiting for it
  const bodies: Array<Promise<unknown>> = []
  page.on("requestfinished", (request) => {
    if (request.method() !== "POST" || !request.url().endsWith("/api/chat")) return
    bodies.push(
      request.response().then(async (response) => {
        if (response === null) throw new Error("a finished /api/chat request has no response")
        await readChunks(new Response(await response.text()), log)
      }).then(() => undefined, (error: unknown) => error)
    )
  })
  return Effect.flatMap(Effect.promise(() => Promise.all(bodies)), (failures) => {
    const failure = failures.find((f) => f !== undefined)
    return failure === undefined ? Effect.void : Effect.die(failure)
  })
}

const open = (context: BrowserContext, url: string) =>
  Effect.promise(async () => {
    const page = await context.newPage()
    await page.goto(url)
    await page.waitForSelector("[data-testid=chat][data-loaded=true]")
    return page
  })

const live = <A, E>(name: string, body: () => Effect.Effect<A, E, Scope.Scope>) =>
  it.live(name, () => noClaudeLeft(Effect.scoped(body())), 120_000)

describe("the example chat page in headless Chromium (useChat, real CLI)", () => {
  live(
    "type a prompt, see text stream and a tool card, approve it, see its output, reload, leave mid-answer",
    () =>
      Effect.gen(function*() {
        const { cwd, options } = yield* realCli({ handler: model })
        const url = yield* chatServer({ options: options() }, undefined, undefined, yield* pageRoutes)
        const context = yield* browser
        const page = yield* open(context, `${url}/?chat=browser-test`)
        const log = newLog()
        const checkChunks = recordChunks(page, log)

        // type a prompt; text streams in (seen while the chat is still streaming), then a tool card asks
        yield* step(async (p) => {
          await p.fill("[data-testid=prompt]", "Say hello using the shell")
          await p.click("[data-testid=send]")
          await p.waitForFunction(() =>
            document.querySelector("[data-testid=chat]")?.getAttribute("data-status") === "streaming" &&
            (document.querySelector("[data-testid=message-assistant] [data-testid=text]")?.textContent ?? "").length > 0
          )
          await p.waitForSelector("[data-testid=tool-card][data-state=approval-requested]")
          await p.waitForSelector("[data-testid=chat][data-status=ready]")
        }, page)
        expect(yield* step((p) => p.textContent("[data-testid=message-assistant] [data-testid=text]"), page)).toBe(
          "Let me write a file and list the directory."
        )
        expect(fs.existsSync(path.join(cwd, "hello.txt"))).toBe(false)
        yield* shot(page, "chat-approval")

        // approve: the same card gets the command's output, and the answer follows
        yield* step(async (p) => {
          await p.click("[data-testid=approve]")
          await p.waitForSelector("[data-testid=tool-card][data-state=output-available]")
          await p.waitForFunction(() => document.body.textContent?.includes("The shell says: hello.txt") === true)
          await p.waitForSelector("[data-testid=chat][data-status=ready]")
        }, page)
        expect(fs.existsSync(path.join(cwd, "hello.txt"))).toBe(true)
        expect(yield* step((p) => p.textContent("[data-testid=tool-output]"), page)).toBe("hello.txt")
        yield* shot(page, "chat-tool-result")

        // the page read two responses (to the approval, then the rest; read before the reload drops their bodies):
        // every chunk passed ai's schema
        yield* checkChunks
        expect(log.bodies.length).toBe(2)
        expect(log.rejected).toEqual([])
        expect(log.chunks).toContainEqual(expect.objectContaining({ type: "tool-approval-request" }))
        expect(log.chunks).toContainEqual(expect.objectContaining({ type: "tool-output-available" }))

        // reload: the chat comes back from the server's history
        yield* step(async (p) => {
          await p.reload()
          await p.waitForSelector("[data-testid=chat][data-loaded=true]")
        }, page)
        expect(yield* step((p) => p.locator("[data-testid=message-user]").count(), page)).toBe(1)
        expect(yield* step((p) => p.getAttribute("[data-testid=tool-card]", "data-state"), page)).toBe(
          "output-available"
        )
        expect(yield* step((p) => p.textContent("[data-testid=message-assistant]"), page)).toContain(
          "The shell says: hello.txt"
        )
        yield* shot(page, "chat-reloaded")

        // leave mid-answer: closing the tab interrupts the turn and the CLI is reaped (G2: SIGTERM, SIGKILL 2 s later)
        yield* step(async (p) => {
          await p.fill("[data-testid=prompt]", "SLOW")
          await p.click("[data-testid=send]")
          await p.waitForFunction(() => document.body.textContent?.includes("word2") === true)
        }, page)
        expect(ownedProcesses().length).toBeGreaterThan(0)
        // the bound runs from the tab being gone (its connection closed); how long Chromium takes to close a tab
        // under load is the browser's, not the SDK's
        yield* step((p) => p.close(), page)
        const closedAt = Date.now()
        // SIGTERM, SIGKILL 2 s later (G2); the rest is slack for a loaded machine
        yield* eventually("the CLI reaped after the tab closed", () => ownedProcesses().length === 0, "5 seconds")
        expect(Date.now() - closedAt).toBeLessThan(5000)
      })
  )
})
