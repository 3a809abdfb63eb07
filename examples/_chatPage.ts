/**
 * The example page's routes: `GET /` (the HTML) and `GET /app.js` (page.tsx with React and the AI SDK, bundled by
 * esbuild once, in memory, when the routes are made). Used by examples/chat.ts and the browser test (test/ui/Chat.browser.test.ts).
 */
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as esbuild from "esbuild"
import * as path from "node:path"

const root = path.join(import.meta.dirname, "..")

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Claude Code chat</title>
<style>
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background: #f4f3ef; color: #1f1e1c; }
  main { max-width: 760px; margin: 0 auto; min-height: 100vh; display: flex; flex-direction: column; padding: 0 16px; }
  header { display: flex; align-items: center; gap: 12px; padding: 14px 0; border-bottom: 1px solid #ddd9cf; }
  header h1 { font-size: 17px; margin: 0; flex: 1; }
  header a { color: #8a5a2b; text-decoration: none; font-size: 13px; }
  .status { font-size: 12px; color: #6b675e; background: #e8e5dc; border-radius: 10px; padding: 2px 8px; }
  .messages { flex: 1; padding: 16px 0; display: flex; flex-direction: column; gap: 12px; }
  .message { border-radius: 12px; padding: 10px 14px; max-width: 100%; }
  .message.user { align-self: flex-end; background: #d9683a; color: white; max-width: 80%; }
  .message.assistant { background: white; border: 1px solid #e4e0d6; }
  .text { white-space: pre-wrap; margin: 4px 0; }
  .reasoning { color: #6b675e; font-style: italic; margin: 4px 0; }
  .reasoning summary { cursor: pointer; font-style: normal; font-size: 12px; }
  .tool { border: 1px solid #e0dccf; border-radius: 8px; margin: 8px 0; background: #faf9f6; overflow: hidden; }
  .tool-head { display: flex; justify-content: space-between; padding: 6px 10px; background: #efece4; font-size: 13px; }
  .tool-name { font-weight: 600; font-family: ui-monospace, monospace; }
  .tool-state { color: #6b675e; }
  .tool-approval-requested { border-color: #d9683a; }
  .tool-output-available .tool-state { color: #2f7d4a; }
  .tool-output-error .tool-state, .tool-output-denied .tool-state { color: #b3392f; }
  pre { margin: 0; padding: 8px 10px; font: 12.5px/1.4 ui-monospace, monospace; white-space: pre-wrap; word-break: break-word; }
  .tool-output { background: #1f1e1c; color: #e9e6dd; }
  .tool-error, .tool-denied { color: #b3392f; padding: 8px 10px; font-size: 13px; }
  .approval, .question { display: flex; gap: 8px; align-items: center; padding: 8px 10px; background: #fff4ec; font-size: 13px; }
  .approval span, .question span { flex: 1; }
  .subagent { margin: 0 10px 10px 22px; border-left: 2px solid #e0dccf; padding-left: 10px; }
  button { border: 0; border-radius: 6px; padding: 6px 12px; font: inherit; cursor: pointer; background: #d9683a; color: white; }
  button[data-testid="deny"], button[data-testid="stop"] { background: #6b675e; }
  form { display: flex; gap: 8px; padding: 12px 0 20px; position: sticky; bottom: 0; background: #f4f3ef; }
  input { flex: 1; border: 1px solid #d5d0c4; border-radius: 8px; padding: 10px 12px; font: inherit; background: white; }
  .error { color: #b3392f; }
</style>
</head>
<body><div id="root"></div><script type="module" src="/app.js"></script></body>
</html>
`

/** The page's routes; the bundle is built once, here. */
export const pageRoutes = Effect.gen(function*() {
  // esbuild keeps a service process for later builds: stopped once this one is done
  const result = yield* Effect.acquireUseRelease(Effect.void, () =>
    Effect.promise(() =>
      esbuild.build({
        entryPoints: [path.join(import.meta.dirname, "chat", "page.tsx")],
        bundle: true,
        write: false,
        format: "esm",
        platform: "browser",
        target: "es2022",
        minify: true,
        jsx: "automatic",
        define: { "process.env.NODE_ENV": "\"production\"" },
        // the page imports the package as a user's would; here it is the sources
        alias: { "effect-claude-agent/ui/client": path.join(root, "src", "uiClient.ts") },
        tsconfig: path.join(import.meta.dirname, "chat", "tsconfig.json"),
        logLevel: "silent"
      })
    ), () => Effect.promise(() => esbuild.stop()))
  const script = result.outputFiles[0]!.contents
  return HttpRouter.empty.pipe(
    HttpRouter.get("/", Effect.succeed(HttpServerResponse.text(html, { contentType: "text/html; charset=utf-8" }))),
    HttpRouter.get(
      "/app.js",
      Effect.succeed(HttpServerResponse.uint8Array(script, { contentType: "text/javascript; charset=utf-8" }))
    )
  )
})
