/** @internal */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Equal from "effect/Equal"
import * as Hash from "effect/Hash"
import * as Option from "effect/Option"
import * as RcMap from "effect/RcMap"
import * as Scope from "effect/Scope"
import { VersionIncompatible } from "../../AgentError.js"
import type { LookupRequest, Options, ResolvedCli, Service, VersionProbe } from "../../CliResolver.js"
import {
  type BundledCandidate,
  commonInstallDirs,
  detectMusl,
  type Host,
  lookUpBundled,
  nodeHost,
  resolveCliWithRuntime
} from "./cliPath.js"
import { judge, packageVersion, PROBE_TIMEOUT_MILLIS, spawnProbe, versionKey } from "./version.js"

/** A probe's key in the map of running probes: the executable's identity (the CLI rides along for the lookup). */
class ProbeKey implements Equal.Equal {
  constructor(readonly key: string, readonly cli: ResolvedCli) {}
  [Equal.symbol](that: Equal.Equal): boolean {
    return that instanceof ProbeKey && that.key === this.key
  }
  [Hash.symbol](): number {
    return Hash.string(this.key)
  }
}

/**
 * The resolver, with the probe it runs for a version nothing else tells (`spawnProbe` in production; tests pass one
 * they control). It needs no scope: a running probe belongs to the callers waiting for it, so a resolver captured by
 * a layer whose build scope has already closed works like any other.
 *
 * @internal
 */
export const makeWith = (
  options: Options | undefined,
  probe: (cli: ResolvedCli) => Effect.Effect<VersionProbe>,
  host: Host = nodeHost()
): Effect.Effect<Service> =>
  Effect.gen(function*() {
    const probeTimeout = Duration.decode(options?.probeTimeout ?? PROBE_TIMEOUT_MILLIS)

    // the C library does not change while the process runs; the process report that tells it is not free
    const musl = yield* Effect.cached(Effect.sync(() => detectMusl(host.platform)))
    // where the npm packages put the binary does not move either, once one is installed (it is looked up again while
    // none is, so installing it later is seen)
    const [bundledCached, forgetBundled] = yield* Effect.cachedInvalidateWithTTL(
      Effect.flatMap(musl, (m) => Effect.sync(() => lookUpBundled(m, host))),
      Duration.infinity
    )
    const bundled = Effect.tap(bundledCached, (found) => found.installed ? Effect.void : forgetBundled)

    const commonDirs = commonInstallDirs(host)
    const lookUp = (request: LookupRequest, candidates: ReadonlyArray<BundledCandidate>) =>
      resolveCliWithRuntime({
        explicit: request.explicit,
        env: request.env,
        executableArgs: request.executableArgs,
        runtime: request.runtime,
        bundled: candidates,
        commonDirs,
        host
      })
    // an executable the caller names is the only place looked at: the bundled binary (and the C library, which
    // picks it) is not looked for
    const named = (request: LookupRequest) =>
      request.explicit !== undefined || (request.env["CLAUDE_CLI_PATH"] ?? "").length > 0
    const resolve = (request: LookupRequest) =>
      named(request) ? lookUp(request, []) : Effect.flatMap(bundled, (found) => lookUp(request, found.candidates))

    // versions found, by `versionKey`: only answers with a version are kept
    const versions = new Map<string, string>()
    // one running probe per executable, shared by everyone waiting for it; released (its fiber interrupted, its
    // process group killed) when the last waiter leaves. The map's own scope is never closed: an entry lives exactly
    // as long as its waiters (the scope of each `RcMap.get`), so there is nothing for a layer's scope to end, and no
    // way to end it under a caller that still uses the resolver
    const probes = yield* RcMap.make({
      lookup: ({ cli }: ProbeKey) =>
        probe(cli).pipe(
          Effect.timeoutTo({
            duration: probeTimeout,
            onTimeout: (): VersionProbe => ({
              reason: `\`--version\` did not answer within ${Duration.toMillis(probeTimeout)} ms`
            }),
            onSuccess: (answer) => answer
          })
        )
    }).pipe(Effect.provideServiceEffect(Scope.Scope, Scope.make()))
    const probeShared = (key: string | undefined, cli: ResolvedCli): Effect.Effect<VersionProbe> =>
      Effect.scoped(RcMap.get(probes, new ProbeKey(key ?? [cli.command, ...cli.prefixArgs, cli.path].join("\0"), cli)))
        .pipe(
          Effect.tap((answer) => {
            if (key !== undefined && "version" in answer) versions.set(key, answer.version)
          })
        )

    // a version had without running anything: found before, or the npm package's (kept once read)
    const knownAt = (key: string, cli: ResolvedCli): string | undefined => {
      const known = versions.get(key)
      if (known !== undefined) return known
      const installed = packageVersion(cli)
      if (installed !== undefined) versions.set(key, installed)
      return installed
    }

    const version = (cli: ResolvedCli): Effect.Effect<VersionProbe> =>
      Effect.suspend(() => {
        // a file that cannot be stat'ed (gone since the lookup) is probed, and its answer not kept
        const key = versionKey(cli)
        const known = key === undefined ? undefined : knownAt(key, cli)
        return known === undefined ? probeShared(key, cli) : Effect.succeed({ version: known })
      })

    const incompatible = (cli: ResolvedCli) => (error: VersionIncompatible): VersionIncompatible =>
      new VersionIncompatible({
        found: error.found,
        supported: error.supported,
        reason: error.reason,
        executable: cli.path,
        description: error.reason === "Unknown"
          ? `${error.description ?? "no version"}; cliVersions: "*" skips the check`
          : `set cliVersions to a range that holds it to run it anyway (e.g. cliVersions: ">=${error.found}"; ` +
            `"*" skips the check), or point pathToClaudeCodeExecutable at a CLI in ${error.supported}`
      })

    const checkVersion = (cli: ResolvedCli, range: string): Effect.Effect<void, VersionIncompatible> =>
      range.trim() === "*"
        ? Effect.void
        : Effect.flatMap(version(cli), (answer) => judge(answer, range)).pipe(Effect.mapError(incompatible(cli)))

    const knownVerdict = (cli: ResolvedCli, range: string): Option.Option<Either.Either<void, VersionIncompatible>> => {
      if (range.trim() === "*") return Option.some(Either.void)
      const key = versionKey(cli)
      const known = key === undefined ? undefined : knownAt(key, cli)
      return known === undefined
        ? Option.none()
        : Option.some(Either.mapLeft(judge({ version: known }, range), incompatible(cli)))
    }

    return { resolve, version, checkVersion, knownVerdict }
  })

/** @internal */
export const make = (options?: Options): Effect.Effect<Service> => makeWith(options, spawnProbe)
