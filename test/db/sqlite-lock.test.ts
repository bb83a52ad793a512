/**
 * The event loop never waits on the database: while another process holds SQLite's write lock,
 * /healthz answers in milliseconds; a charged call waits for the lock on a timer (not inside a
 * blocking call) and succeeds once it is free, or answers 503 `unavailable` if it stays taken
 * longer than the 5 s bound.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, fixturePlugin, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer
beforeAll(async () => {
  server = await startServer({ env: { HCC_PLUGINS: fixturePlugin("series-stats") } })
  await waitReady(server)
})
afterAll(async () => {
  await server.stop()
})

/** Another process that takes the write lock on the server's database for `ms`; resolves once it holds it. */
const holdWriteLock = (ms: number): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const script = `
      const { DatabaseSync } = require("node:sqlite")
      const db = new DatabaseSync(${JSON.stringify(join(server.dataDir, "hcc.db"))})
      db.exec("BEGIN IMMEDIATE")
      db.exec("INSERT INTO leases (name, owner, expires_ms) VALUES ('lock-test', 'x', 0) ON CONFLICT (name) DO UPDATE SET owner = 'y'")
      process.stdout.write("locked\\n")
      setTimeout(() => { db.exec("ROLLBACK"); db.close() }, ${ms})`
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] })
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("locked") && resolve(child))
    child.on("exit", (code) => code !== 0 && reject(new Error(`lock holder exited ${code}`)))
  })

const timed = async (f: () => Promise<Response>) => {
  const t0 = performance.now()
  const res = await f()
  await res.arrayBuffer()
  return { status: res.status, ms: performance.now() - t0 }
}

describe("another process holds the write lock", () => {
  it("/healthz answers within 50 ms while a charged call waits for the lock, which then succeeds", async () => {
    const { token } = newAccount(server, { tier: "professional" })
    const holder = await holdWriteLock(1500)
    const t0 = performance.now()
    const charged = call(server, "/v1/series-stats", { token, body: { values: [1, 2, 3] } })
    const probes: Array<{ status: number; ms: number }> = []
    for (let i = 0; i < 10; i++) {
      probes.push(await timed(() => fetch(`${server.url}/healthz`)))
      await new Promise((r) => setTimeout(r, 50))
    }
    for (const p of probes) expect(p).toMatchObject({ status: 200 })
    expect(Math.max(...probes.map((p) => p.ms))).toBeLessThan(50)
    const res = await charged
    expect(res.status).toBe(200)
    expect(performance.now() - t0).toBeGreaterThan(1000) // it really waited for the lock
    await new Promise((r) => holder.exitCode === null ? holder.on("exit", r) : r(undefined))
  })

  it("a lock held past the 5 s bound answers 503 unavailable with Retry-After, charging nothing; /healthz stays fast", async () => {
    const { token } = newAccount(server, { tier: "professional" })
    const holder = await holdWriteLock(7000)
    const charged = call(server, "/v1/series-stats", { token, body: { values: [1, 2, 3] } })
    const probe = await timed(() => fetch(`${server.url}/healthz`))
    expect(probe.status).toBe(200)
    expect(probe.ms).toBeLessThan(50)
    const res = await charged
    expect(res.status).toBe(503)
    expect(res.headers.get("retry-after")).toBe("1")
    expect(await res.json()).toMatchObject({ code: "unavailable", hcc_cost: 0 })
    await new Promise((r) => holder.exitCode === null ? holder.on("exit", r) : r(undefined))
    const usage = (await (await call(server, "/v1/usage", { token })).json()) as { queries_today: number }
    expect(usage.queries_today).toBe(0)
  })
})
