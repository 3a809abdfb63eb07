import { FakeCli } from "effect-claude-agent/testing"

/**
 * Fake CLIs that stall where a session may be closed under them: before `initialize` is answered; mid-turn with a
 * grandchild holding the pipes; a CLI that ignores SIGTERM, with a grandchild.
 */
export const stalledCliScenarios = (): ReadonlyArray<FakeCli.Scenario> => [
  FakeCli.scenario([FakeCli.stall], { answers: { initialize: FakeCli.noAnswer } }),
  FakeCli.scenario([
    FakeCli.expectUser(),
    FakeCli.init(),
    FakeCli.spawnGrandchild,
    FakeCli.assistant("busy"),
    FakeCli.stall
  ]),
  FakeCli.scenario([FakeCli.expectUser(), FakeCli.ignoreSigterm, FakeCli.spawnGrandchild, FakeCli.stall])
]
