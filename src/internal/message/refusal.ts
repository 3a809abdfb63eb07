/** @internal */
import { InputClosed, type ProcessExited } from "../../AgentError.js"

/**
 * Why a frame cannot be written, if it cannot: the writer's own end of input wins over an exit that may have followed
 * it (`InputClosed`), else the exit (`exited`, when there is one). The one statement of that rule, for the transports
 * and the control protocol.
 *
 * @internal
 */
export const refusal = <E extends ProcessExited | InputClosed>(
  inputEnded: boolean,
  exited: (() => E) | undefined
): E | InputClosed | undefined => inputEnded ? new InputClosed({ reason: "InputEnded" }) : exited?.()
