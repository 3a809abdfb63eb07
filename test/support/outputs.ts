// Answers user code may give in the wrong shape (hook outputs, permission decisions), each with what the
// fail-closed message must name; shared by the Effect and Promise API tests.
import { Hooks } from "effect-claude-agent"

/** Malformed PreToolUse hook outputs. */
export const malformedPreToolUse: ReadonlyArray<readonly [unknown, RegExp]> = [
  // garbage
  ["deny", /not an object/],
  [42, /not an object/],
  [null, /not an object/],
  [[Hooks.deny("no")], /not an object/],
  // a deny without hookEventName
  [{ hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "no" } }, /hookEventName/],
  // a deny for another event
  [{ hookSpecificOutput: { hookEventName: "PostToolUse", permissionDecision: "deny" } }, /hookEventName/],
  // a decision at the top level
  [{ permissionDecision: "deny", permissionDecisionReason: "no" }, /permissionDecision.*hookSpecificOutput/],
  [{ hookEventName: "PreToolUse", permissionDecision: "deny" }, /hookSpecificOutput/],
  // a decision value the CLI does not know
  [{ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "block" } }, /permissionDecision/],
  // a PermissionRequest-style decision in a PreToolUse answer
  [{ hookSpecificOutput: { hookEventName: "PreToolUse", decision: { behavior: "deny" } } }, /decision/],
  // a legacy block inside hookSpecificOutput
  [{ hookSpecificOutput: { hookEventName: "PreToolUse", decision: "block", reason: "no" } }, /decision/],
  // a canUseTool decision returned by a hook
  [{ behavior: "deny", message: "no" }, /behavior/],
  // known fields with the wrong type or value
  [
    { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: "rm -rf /" } },
    /updatedInput/
  ],
  [{ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecisionReason: 7 } }, /permissionDecisionReason/],
  [{ decision: "deny", reason: "no" }, /decision/],
  [{ continue: "no" }, /continue/],
  [{ hookSpecificOutput: "deny" }, /hookSpecificOutput/],
  [{ async: true, asyncTimeout: "soon" }, /asyncTimeout/],
  [{ async: "yes" }, /async/]
]

/** Malformed decisions, each with what the deny message must name. */
export const malformedDecisions: ReadonlyArray<readonly [unknown, RegExp]> = [
  ["allow", /not an object/],
  [42, /not an object/],
  [[{ behavior: "allow" }], /not an object/],
  [{ behavior: "maybe" }, /behavior/],
  [{ behavior: "ask" }, /behavior/],
  [{ allow: true }, /behavior/],
  [{ behavior: "allow", updatedInput: "rm -rf /" }, /updatedInput/],
  [{ behavior: "allow", updatedInput: ["rm", "-rf"] }, /updatedInput/],
  [{ behavior: "allow", updatedPermissions: { type: "setMode" } }, /updatedPermissions/],
  [{ behavior: "allow", updatedPermissions: ["Bash"] }, /updatedPermissions/],
  [{
    behavior: "allow",
    updatedPermissions: [{ type: "addRules", rules: "Bash", behavior: "allow", destination: "session" }]
  }, /updatedPermissions.*rules/],
  [{
    behavior: "allow",
    updatedPermissions: [{
      type: "addRules",
      rules: [{ toolName: "Bash" }],
      behavior: "always",
      destination: "session"
    }]
  }, /updatedPermissions.*behavior/],
  [{ behavior: "allow", decisionClassification: "sure" }, /decisionClassification/],
  [{ behavior: "deny" }, /message/],
  [{ behavior: "deny", message: 42 }, /message/],
  [{ behavior: "deny", message: "no", interrupt: "yes" }, /interrupt/]
]
