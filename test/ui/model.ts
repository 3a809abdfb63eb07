import { ScriptedModelServer } from "effect-claude-agent/testing"

const { reply, thinking, toolUse } = ScriptedModelServer

/** The Bash call of `TOOL Bash …` prompts. */
export const bash = (command: string) => `TOOL Bash ${JSON.stringify({ command, description: "scripted" })}`

/**
 * The scripted model of the chat tests, on top of the server's rule-based handler (`SAY`, `TOOL`, `HISTORY`):
 * - `THINK <thought> SAY <text>`: a reply with a thinking block, then text;
 * - `DELEGATE <command>`: a synchronous subagent (the `Agent` tool) that says something, runs `<command>` with Bash
 *   and reports; the main agent then says `tool said: …`;
 * - `TWO <command> AND <command>`: two Bash calls in one reply;
 * - `ASK <question>`: an AskUserQuestion call with the options red and blue;
 * - `SLOW <n>`: a reply of `n` words, 200 ms apart (to leave mid-answer).
 */
export const chatModel: ScriptedModelServer.Handler = (request) => {
  const subtask = request.userPrompts.find((p) => p.startsWith("SUBTASK "))
  if (subtask !== undefined) {
    if (request.toolResults.length > 0) return reply("sub done")
    return reply(thinking("a subagent thinks"), "sub working", toolUse("Bash", { command: subtask.slice(8) }))
  }
  const prompt = (request.lastUserText ?? "").trim()
  const think = /^THINK (.+?) SAY (.+)$/.exec(prompt)
  if (think !== null && request.toolResults.length === 0) return reply(thinking(think[1]!), think[2]!)
  const delegate = /^DELEGATE (.+)$/.exec(prompt)
  if (delegate !== null && request.toolResults.length === 0) {
    return reply(
      "delegating",
      toolUse("Agent", {
        description: "run it",
        prompt: `SUBTASK ${delegate[1]}`,
        subagent_type: "general-purpose",
        run_in_background: false
      })
    )
  }
  const two = /^TWO (.+) AND (.+)$/.exec(prompt)
  if (two !== null && request.toolResults.length === 0) {
    return reply(toolUse("Bash", { command: two[1] }), toolUse("Bash", { command: two[2] }))
  }
  const ask = /^ASK (.+)$/.exec(prompt)
  if (ask !== null && request.toolResults.length === 0) {
    return reply(toolUse("AskUserQuestion", {
      questions: [{
        question: ask[1],
        header: "Color",
        options: [{ label: "red", description: "warm" }, { label: "blue", description: "cool" }],
        multiSelect: false
      }]
    }))
  }
  const slow = /^SLOW (\d+)$/.exec(prompt)
  if (slow !== null) {
    const words = Array.from({ length: Number(slow[1]) }, (_, i) => `word${i} `).join("")
    return { ...reply(words), eventDelayMs: 200, textDeltaChars: 6 }
  }
  return ScriptedModelServer.defaultHandler(request)
}
