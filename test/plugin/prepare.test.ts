/**
 * The plugin `prepare` step (plugin API 1.2): run once per loaded dataset before /readyz turns
 * ready; what it stores is what the handler reads; a failing one is logged with the plugin's name
 * and only that plugin answers 503 `unavailable`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, fixturePlugin, startServer, type TestServer, waitForLog, waitReady } from "../support/server.ts"

let server: TestServer
beforeAll(async () => {
  server = await startServer({ env: { HCC_PLUGINS: [fixturePlugin("prepared"), fixturePlugin("prepare-fails")].join(",") } })
  await waitReady(server)
})
afterAll(async () => {
  await server.stop()
})

describe("prepare", () => {
  it("runs once, before ready, and the handler reads what it stored", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await call(server, "/v1/prepared", { body: {} })
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ patients: 1000, prepared_times: 1, hcc_cost: 1 })
    }
    // The loader logs its loaded line once it is done (after the snapshot), which may follow ready.
    await waitForLog(server, (l) => l.msg === "health data loaded")
    const lines = server.logLines()
    const prepared = lines.findIndex((l) => l.msg === "dataset prepared" && l.plugin === "prepared")
    const loaded = lines.findIndex((l) => l.msg === "health data loaded")
    expect(prepared).toBeGreaterThanOrEqual(0)
    expect(prepared).toBeLessThan(loaded)
  })

  it("a failing preparation is logged with the plugin's name; that plugin answers 503, the others are served", async () => {
    const failed = server.logLines().find((l) => l.msg === "dataset preparation failed")
    expect(failed?.plugin).toBe("prepare-fails")
    const res = await call(server, "/v1/prepare-fails", { body: {} })
    expect(res.status).toBe(503)
    expect(res.headers.get("retry-after")).not.toBeNull()
    const body = (await res.json()) as Record<string, unknown>
    expect(body.code).toBe("unavailable")
    expect(body.detail).toContain("broken models")
    expect(body.hcc_cost).toBe(0)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    expect((await call(server, "/v1/risk-model", { body: { patient_profile: { axes_snapshot: { PO: 5 } }, risk_type: "hospitalization" } })).status).toBe(200)
  })
})
