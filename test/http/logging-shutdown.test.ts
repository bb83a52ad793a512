/** One JSON log line per request with the promised fields and nothing else of the request; graceful SIGTERM. */
import { describe, expect, it } from "vitest"
import { call, fixturePlugin, startServer, waitForLog } from "../support/server.ts"

describe("request log", () => {
  it("one line per request: method, path, status, duration, request id, trace id, account and token ids, problem code, cost; never the token or the body; probes only at debug", async () => {
    const server = await startServer({ env: { HCC_PLUGINS: fixturePlugin("series-stats") } })
    try {
      const secretLabel = "patient-jane-doe-1957"
      const traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
      const ok = await call(server, "/v1/series-stats?x=1", { body: { values: [1, 2], label: secretLabel }, headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })
      // W3C trace context: the trace id is kept, this server's span id is new.
      expect(ok.headers.get("traceparent")).toMatch(new RegExp(`^00-${traceId}-(?!00f067aa0ba902b7)[0-9a-f]{16}-01$`))
      await call(server, "/healthz", { token: null })
      const anon = await call(server, "/v1/catalog", { token: null })
      expect(anon.headers.get("traceparent")).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
      await waitForLog(server, (l) => l.request_id === anon.headers.get("x-request-id"))
      const requests = server.logLines().filter((l) => l.msg === "request")
      expect(requests.length).toBe(2)
      const [first, second] = requests
      expect(first).toMatchObject({
        level: "info",
        method: "POST",
        path: "/v1/series-stats",
        status: 200,
        request_id: ok.headers.get("x-request-id"),
        trace_id: traceId,
        account_id: expect.stringMatching(/^acc_/),
        token_id: expect.stringMatching(/^tok_/),
        code: null,
        hcc_cost: 1.25
      })
      expect(typeof first!.duration_ms).toBe("number")
      expect(typeof first!.time).toBe("string")
      expect(second).toMatchObject({ path: "/v1/catalog", status: 401, account_id: null, token_id: null, code: "missing_token", hcc_cost: 0, request_id: anon.headers.get("x-request-id") })
      expect(second!.trace_id).toBe(anon.headers.get("traceparent")!.split("-")[1])
      const log = server.stdout()
      expect(log).not.toContain(secretLabel)
      expect(log).not.toContain(server.demoToken.slice(4))
      expect(Object.keys(first!).sort()).toEqual(["account_id", "code", "duration_ms", "hcc_cost", "level", "method", "msg", "path", "pid", "request_id", "status", "time", "token_id", "trace_id"])
      // One start-up line per plugin, with where it came from.
      expect(server.logLines().find((l) => l.msg === "plugin loaded" && l.plugin === "series-stats")).toMatchObject({ version: "1.2.0", source: fixturePlugin("series-stats"), path: "/v1/series-stats" })
      expect(server.logLines().filter((l) => l.msg === "plugin loaded" && l.source === "built-in").length).toBeGreaterThanOrEqual(7)
      // And one for the dataset: its size, as_of and how long the load took.
      const data = await waitForLog(server, (l) => l.msg === "health data loaded", 60_000)
      expect(data).toMatchObject({ patients: expect.any(Number), as_of: expect.stringMatching(/^\d{4}-\d\d-\d\d$/), seconds: expect.any(Number) })
    } finally {
      await server.stop()
    }
  })
})

describe("SIGTERM", () => {
  it("finishes in-flight requests, refuses new connections, exits 0", async () => {
    const server = await startServer({ env: { HCC_PLUGINS: fixturePlugin("slow-echo"), HCC_SHUTDOWN_GRACE_SECONDS: "600" } })
    const inflight = call(server, "/v1/slow-echo", { body: { tag: "finish-me", ms: 800 } })
    await waitForLog(server, (l) => l.msg === "slow-echo waiting")
    const exit = server.stop("SIGTERM")
    // New connections are refused once the signal is handled (a loaded machine may take a moment).
    const refused = async () => {
      for (let i = 0; i < 40; i++) {
        await new Promise((r) => setTimeout(r, 50))
        try {
          await (await fetch(`${server.url}/healthz`)).arrayBuffer()
        } catch {
          return true
        }
      }
      return false
    }
    expect(await refused()).toBe(true)
    const res = await inflight
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ tag: "finish-me", hcc_cost: 0.5 })
    // The client keeps its connection alive; the server still exits once the request is done
    // (the grace period is longer than the test may take: exiting at all means it did not wait for it).
    expect(await exit).toBe(0)
    expect(server.logLines().some((l) => l.msg === "stopped")).toBe(true)
  })
})
