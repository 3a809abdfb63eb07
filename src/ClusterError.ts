/**
 * The error of the agent cluster itself (not of the session it runs): the cluster could not take or store a message.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-claude-agent/ClusterError")

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * The cluster refused or lost a message before its entity answered:
 * - `MailboxFull`: the entity has as many requests waiting as its mailbox holds;
 * - `AlreadyProcessingMessage`: the same request is already running (a retry that came too early);
 * - `PersistenceError`: the cluster's database could not store or read it.
 *
 * @since 0.1.0
 * @category errors
 */
export class ClusterError extends Schema.TaggedError<ClusterError>("effect-claude-agent/ClusterError")("ClusterError", {
  reason: Schema.Literal("MailboxFull", "AlreadyProcessingMessage", "PersistenceError"),
  cause: Schema.optional(Schema.Defect)
}) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId
  /** @since 0.1.0 */
  override get message(): string {
    return this.reason === "MailboxFull"
      ? "The agent session's mailbox is full"
      : this.reason === "AlreadyProcessingMessage"
      ? "The agent session is already processing this request"
      : "The agent cluster could not store or read a message"
  }
}
