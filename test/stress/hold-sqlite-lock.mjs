// Holds the write lock of a SQLite database (BEGIN EXCLUSIVE) for a while, in a process of its own: better-sqlite3
// waits for a lock synchronously, so a process that both holds the lock and writes to the database through another
// connection (the scenario's cluster client) stalls its own event loop and never gets to release it.
// Usage: node hold-sqlite-lock.mjs <db> <millis>; prints "locked <epoch ms>" once it holds the lock, then after
// <millis> commits and prints "released <epoch ms>" (its own clock: the parent may read them late).
import Database from "better-sqlite3"

const [file, millis] = process.argv.slice(2)
const db = new Database(file, { timeout: 0 })
const pause = new Int32Array(new SharedArrayBuffer(4))
for (let attempt = 0;; attempt++) {
  try {
    db.exec("BEGIN EXCLUSIVE")
    break
  } catch (error) {
    // a runner is writing: tried again a few milliseconds later, for up to 10 s
    if (attempt > 2_000 || !String(error).includes("locked") && !String(error).includes("busy")) throw error
    Atomics.wait(pause, 0, 0, 5)
  }
}
process.stdout.write(`locked ${Date.now()}\n`)
setTimeout(() => {
  db.exec("COMMIT")
  process.stdout.write(`released ${Date.now()}\n`)
  db.close()
}, Number(millis))
