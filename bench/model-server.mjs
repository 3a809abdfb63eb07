// The scripted model server for the real-CLI row, in its own process so that its CPU is not the consumer's:
// `node bench/model-server.mjs` prints one JSON line `{ env }` (the environment that points the real CLI at it,
// offline), serves until its stdin closes, then prints `{ requests, messages, other }` (what it received: every
// request must be a `POST /v1/messages`) and exits. It is this checkout's `dist/testing.js` for every contender.
import { ScriptedModelServer } from "../dist/testing.js"

const server = await ScriptedModelServer.start()
const env = {
  ...server.env(),
  // nothing but the scripted server is reachable: any other host goes to a proxy port nobody listens on
  HTTPS_PROXY: "http://127.0.0.1:9",
  HTTP_PROXY: "http://127.0.0.1:9",
  https_proxy: "http://127.0.0.1:9",
  http_proxy: "http://127.0.0.1:9",
  NO_PROXY: "127.0.0.1,localhost",
  no_proxy: "127.0.0.1,localhost"
}
process.stdout.write(`${JSON.stringify({ env })}\n`)

const stop = async () => {
  const requests = await server.requests()
  const other = requests.filter((r) => !r.isMessages).map((r) => `${r.method} ${r.path}`)
  await server.close()
  process.stdout.write(
    `${JSON.stringify({ requests: requests.length, messages: requests.length - other.length, other })}\n`
  )
  process.exit(0)
}
process.stdin.on("end", stop)
process.stdin.on("error", stop)
process.stdin.resume()
process.on("SIGTERM", stop)
process.on("SIGINT", stop)
