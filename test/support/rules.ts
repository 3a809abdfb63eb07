import * as Effect from "effect/Effect"
import { Permissions } from "effect-claude-agent"

const FALLBACK = "fell to the fallback"

/** A permission request as the rules see it. */
export const request = (
  toolName: string,
  input: Record<string, unknown>,
  cwd = "/work/repo"
): Permissions.PermissionRequest => ({ toolName, input, cwd }) as Permissions.PermissionRequest

/** The rules of a `Permissions.rules` spec. */
export interface Spec {
  readonly allow?: ReadonlyArray<string>
  readonly deny?: ReadonlyArray<string>
  readonly ask?: ReadonlyArray<string>
}

/** One policy per rule set, as an application makes it once and decides every request with it. */
const policies = new Map<string, Permissions.Policy>()

const policyOf = (spec: Spec): Permissions.Policy => {
  const key = JSON.stringify([spec.allow, spec.deny, spec.ask])
  const known = policies.get(key)
  if (known !== undefined) return known
  const policy = Permissions.rules(spec, () => Effect.succeed(Permissions.deny(FALLBACK)))
  policies.set(key, policy)
  return policy
}

/** What `rules` decides: "allow", "deny" (by a rule), or "fallback". */
export const decide = (spec: Spec, toolName: string, input: Record<string, unknown>, cwd?: string) =>
  Effect.runPromise(
    policyOf(spec)(request(toolName, input, cwd)).pipe(
      Effect.map((result) => result.behavior === "allow" ? "allow" : result.message === FALLBACK ? "fallback" : "deny")
    )
  )

/** What `rules` decides for a Bash command. */
export const bash = (spec: Spec, command: string, cwd?: string) => decide(spec, "Bash", { command }, cwd)
