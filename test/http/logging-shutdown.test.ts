/** One JSON log line per request with the promised fields and nothing else of the request; graceful SIGTERM. */
import { describe, expect, it } from "vitest"
import { call, fixturePlugin, startServer, waitForLog } from "../support/server.ts"

describe("request log", () => {
  it("one line per request: method, path, status, duration, request id, account id; never the token or the body", async () => {
    const server = await startServer({ env: { HCC_PLUGINS: fixturePlugin("series-stats") } })
    try {
      const secretLabel = "patient-jane-doe-1957"
      const ok = await call(server, "/v1/series-stats?x=1", { body: { values: [1, 2], label: secretLabel } })
      const anon = await call(server, "/v1/catalog", { token: null })
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
        account_id: expect.stringMatching(/^acc_/)
      })
      expect(typeof first!.duration_ms).toBe("number")
      expect(typeof first!.time).toBe("string")
      expect(second).toMatchObject({ path: "/v1/catalog", status: 401, account_id: null, request_id: anon.headers.get("x-request-id") })
      const log = server.stdout()
      expect(log).not.toContain(secretLabel)
      expect(log).not.toContain(server.demoToken.slice(4))
      expect(Object.keys(first!).sort()).toEqual(["account_id", "duration_ms", "level", "method", "msg", "path", "pid", "request_id", "status", "time"])
    } finally {
      await server.stop()
    }
  })
})

describe("SIGTERM", () => {
  it("finishes in-flight requests, refuses new connections, exits 0", async () => {
    const server = await startServer({ env: { HCC_PLUGINS: fixturePlugin("slow-echo"), HCC_SHUTDOWN_GRACE_SECONDS: "10" } })
    const inflight = call(server, "/v1/slow-echo", { body: { tag: "finish-me", ms: 800 } })
    await new Promise((r) => setTimeout(r, 200))
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
    // The client keeps its connection alive; the server still exits once the request is done,
    // well before the 10 s grace period.
    const stoppedAt = Date.now()
    expect(await exit).toBe(0)
    expect(Date.now() - stoppedAt).toBeLessThan(5000)
    expect(server.logLines().some((l) => l.msg === "stopped")).toBe(true)
  })
})
