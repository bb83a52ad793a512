/**
 * The baseline: a bare node:http JSON server doing the same work as the service's endpoints
 * (a precomputed catalog; parse, validate by hand and summarise a series) with no auth, limits,
 * ledger or framework. Started as its own process by bench/http.ts; prints its port.
 */
import { createServer } from "node:http"
import { summarise } from "../test/fixtures/plugins/series-stats.ts"

const catalog = process.env.BENCH_CATALOG ?? "{}"

const server = createServer((req, res) => {
  const send = (status: number, body: string) => {
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    res.end(body)
  }
  if (req.method === "GET" && req.url === "/v1/catalog") return send(200, catalog)
  if (req.method === "POST" && req.url === "/v1/series-stats") {
    let text = ""
    req.setEncoding("utf8")
    req.on("data", (c: string) => (text += c))
    req.on("end", () => {
      let input: { values?: unknown }
      try {
        input = JSON.parse(text) as { values?: unknown }
      } catch {
        return send(400, '{"code":"malformed_json"}')
      }
      const values = input.values
      if (!Array.isArray(values) || values.length === 0 || !values.every((v) => typeof v === "number")) {
        return send(400, '{"code":"invalid_request"}')
      }
      send(200, JSON.stringify({ label: null, ...summarise(values as Array<number>), hcc_cost: 1.25 }))
    })
    return
  }
  send(404, '{"code":"not_found"}')
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(JSON.stringify({ msg: "listening", port: typeof address === "object" && address !== null ? address.port : 0 }) + "\n")
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
