/**
 * The event loop never waits on the database: while another process holds SQLite's write lock,
 * /healthz answers; a charged call waits for the lock on a timer (not inside a
 * blocking call) and succeeds once it is free, or answers 503 `unavailable` if it stays taken
 * longer than the 5 s bound.
 */
import { spawn } from "node:child_process"
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

/** Another process that takes the write lock on the server's database and holds it until `release`. */
const holdWriteLock = (): Promise<{ readonly release: () => Promise<void> }> =>
  new Promise((resolve, reject) => {
    const script = `
      const { DatabaseSync } = require("node:sqlite")
      const db = new DatabaseSync(${JSON.stringify(join(server.dataDir, "hcc.db"))})
      db.exec("BEGIN IMMEDIATE")
      db.exec("INSERT INTO leases (name, owner, expires_ms) VALUES ('lock-test', 'x', 0) ON CONFLICT (name) DO UPDATE SET owner = 'y'")
      process.stdout.write("locked\\n")
      process.stdin.once("data", () => { db.exec("ROLLBACK"); db.close(); process.exit(0) })`
    const child = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] })
    const exited = new Promise<void>((r) => child.on("exit", () => r()))
    child.stdout!.on("data", (d: Buffer) => {
      if (d.toString().includes("locked")) {
        resolve({
          release: () => {
            child.stdin!.end("release\n")
            return exited
          }
        })
      }
    })
    child.on("exit", (code) => code !== 0 && reject(new Error(`lock holder exited ${code}`)))
  })

/** A request whose answer is awaited later, and whether it has come yet. */
const pending = (request: Promise<Response>) => {
  const state = { answered: false, response: request.then((r) => { state.answered = true; return r }) }
  return state
}

describe("another process holds the write lock", () => {
  it("/healthz answers while a charged call waits for the lock, which then succeeds", async () => {
    const { token } = newAccount(server, { tier: "professional" })
    const holder = await holdWriteLock()
    const charged = pending(call(server, "/v1/series-stats", { token, body: { values: [1, 2, 3] } }))
    for (let i = 0; i < 10; i++) {
      const probe = await fetch(`${server.url}/healthz`)
      await probe.arrayBuffer()
      expect(probe.status).toBe(200)
      // The event loop answers while the charged call is still waiting for the lock.
      expect(charged.answered).toBe(false)
    }
    await holder.release()
    expect((await charged.response).status).toBe(200)
  })

  it("a lock held past the 5 s bound answers 503 unavailable with Retry-After, charging nothing; /healthz answers meanwhile", async () => {
    const { token } = newAccount(server, { tier: "professional" })
    const holder = await holdWriteLock()
    const charged = pending(call(server, "/v1/series-stats", { token, body: { values: [1, 2, 3] } }))
    const probe = await fetch(`${server.url}/healthz`)
    expect(probe.status).toBe(200)
    expect(charged.answered).toBe(false)
    const res = await charged.response
    expect(res.status).toBe(503)
    expect(res.headers.get("retry-after")).toBe("1")
    expect(await res.json()).toMatchObject({ code: "unavailable", hcc_cost: 0 })
    await holder.release()
    const usage = (await (await call(server, "/v1/usage", { token })).json()) as { queries_today: number }
    expect(usage.queries_today).toBe(0)
  })
})
