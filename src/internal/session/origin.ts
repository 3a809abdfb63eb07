/** @internal */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Options } from "../../AgentOptions.js"
import type { SessionOrigin } from "../../ClaudeAgent.js"
import { configDirFor, encodeCwd, isSessionId, MAX_ENCODED_LENGTH } from "../transcript/history.js"

const projectDirs = (configDir: string, cwd: string): Array<string> => {
  let real = cwd
  try {
    real = fs.realpathSync(cwd)
  } catch {
    // a cwd that does not exist has no sessions
  }
  const encoded = encodeCwd(real)
  const projects = path.join(configDir, "projects")
  const dirs = [path.join(projects, encoded)]
  if (encoded.length > MAX_ENCODED_LENGTH) {
    const prefix = encoded.slice(0, MAX_ENCODED_LENGTH)
    try {
      for (const name of fs.readdirSync(projects)) {
        if (name !== encoded && name.startsWith(prefix)) dirs.push(path.join(projects, name))
      }
    } catch {
      // no projects yet
    }
  }
  return dirs
}

/** The most recently written session transcript of a cwd, if any. @internal */
export const latestSession = (options: Options): string | undefined => {
  const configDir = configDirFor(options)
  if (configDir === undefined) return undefined
  let best: { readonly id: string; readonly mtime: number } | undefined
  for (const dir of projectDirs(configDir, options.cwd ?? process.cwd())) {
    let names: Array<string>
    try {
      names = fs.readdirSync(dir)
    } catch {
      continue
    }
    for (const name of names) {
      if (!name.endsWith(".jsonl") || !isSessionId(name.slice(0, -6))) continue
      try {
        const mtime = fs.statSync(path.join(dir, name)).mtimeMs
        if (best === undefined || mtime > best.mtime) best = { id: name.slice(0, -6), mtime }
      } catch {
        // removed meanwhile
      }
    }
  }
  return best?.id
}

/**
 * Decides, before anything is spawned, which session the CLI will use, so that callers know it before the first
 * prompt: new sessions and forks get a session id assigned here (`--session-id`), `continue` is resolved to the
 * latest transcript of the cwd (and passed as `--resume`), a resume keeps the requested id.
 *
 * @internal
 */
export const resolveOrigin = (options: Options): { readonly options: Options; readonly origin: SessionOrigin } => {
  const forked = options.forkSession === true
  if (options.resume !== undefined) {
    if (!forked) {
      return { options, origin: { kind: "resume", requested: options.resume, sessionId: options.resume, forked } }
    }
    const sessionId = options.sessionId ?? randomUUID()
    return {
      options: { ...options, sessionId },
      origin: { kind: "fork", requested: options.resume, sessionId, forked }
    }
  }
  if (options.continue === true) {
    const latest = latestSession(options)
    const sessionId = forked ? (options.sessionId ?? randomUUID()) : latest
    const base: Options = latest === undefined ? options : { ...options, continue: undefined, resume: latest }
    return {
      options: forked && sessionId !== undefined ? { ...base, sessionId } : base,
      origin: { kind: "continue", requested: latest, sessionId, forked }
    }
  }
  const sessionId = options.sessionId ?? randomUUID()
  return { options: { ...options, sessionId }, origin: { kind: "new", requested: undefined, sessionId, forked: false } }
}
