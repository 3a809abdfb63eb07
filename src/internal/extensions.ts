/** @internal */
import * as Effect from "effect/Effect"
import type { Extensions, Options } from "../AgentOptions.js"
import type { InboundHandler } from "../ControlProtocol.js"
import type * as Message from "../Message.js"

/** What the optional services (permissions, hooks, MCP) contribute to a session. @internal */
export interface SessionExtensions extends Extensions {
  readonly handlers: ReadonlyMap<string, InboundHandler>
  /** Runs once the CLI answered `initialize`; a failure fails the session. */
  readonly onInitialized: (response: Message.InitializeResponse) => Effect.Effect<void>
}

/** Without an `onElicitation` handler the official SDK declines MCP elicitations. */
const declineElicitation: InboundHandler = () => Effect.succeed({ action: "decline" })

/** @internal */
export const collectExtensions = (_options: Options): Effect.Effect<SessionExtensions> =>
  Effect.succeed({
    handlers: new Map([["elicitation", declineElicitation]]),
    onInitialized: () => Effect.void
  })
