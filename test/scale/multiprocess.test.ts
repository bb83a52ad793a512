/**
 * Many processes, one truth: three servers on one PostgreSQL, `hcc serve --workers 2` on SQLite,
 * and two servers started by hand on one data folder. Requests spread over all of them; the daily
 * and burst limits admit exactly what one process would, every 2xx has its ledger row, and a
 * `kill -9` of one process under load loses no charged answer while the others keep answering.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ledgerOf, query } from "../support/db.ts"
import { testDatabase } from "../support/postgres.ts"
import { call, fixturePlugin, newAccount, startServer, tempDataDir, type TestServer, waitForLog } from "../support/server.ts"

const PLUGINS = { HCC_PLUGINS: [fixturePlugin("series-stats"), fixturePlugin("slow-echo")].join(",") }

/** A deployment under test: where requests go (URLs in turn) and where its state is. */
interface Deployment {
  readonly name: string
  readonly servers: ReadonlyArray<TestServer>
  /** The URL of request `i` (spread over every process). */
  readonly urlOf: (i: number) => string
  /** Stops every process. */
  readonly stop: () => Promise<void>
}

/** Sends `n` requests at once, spread over the deployment; returns every response that arrived. */
const burstOf = (d: Deployment, n: number, path: string, token: string, body: (i: number) => unknown) =>
  Promise.all(
    Array.from({ length: n }, (_, i) =>
      call({ ...d.servers[0]!, url: d.urlOf(i) }, path, { token, ...(body(i) === undefined ? {} : { body: body(i) }) })
    )
  )

/** How many processes wrote request log lines for an account (logs arrive a little after the answers). */
const processesServing = async (d: Deployment, accountId: string, atLeast: number): Promise<number> => {
  const count = () => new Set(d.servers.flatMap((s) => s.logLines().filter((l) => l.msg === "request" && l.account_id === accountId).map((l) => l.pid))).size
  for (let i = 0; i < 40 && count() < atLeast; i++) await new Promise((r) => setTimeout(r, 50))
  return count()
}

const exactness = (make: () => Promise<Deployment>, minProcesses: number) => {
  let d: Deployment
  beforeAll(async () => {
    d = await make()
  }, 120_000)
  afterAll(async () => {
    await d?.stop()
  })

  it("200 concurrent requests against a daily limit of 20 admit exactly 20; ledger rows equal the 2xx received", async () => {
    const target = d.servers[0]!
    const { accountId, token } = newAccount(target, { tier: "starter", dailyLimit: 20, burstLimit: 1000 })
    const responses = await burstOf(d, 200, "/v1/slow-echo", token, (i) => ({ tag: `r${i}`, ms: 20 }))
    const ok = responses.filter((r) => r.status === 200)
    const limited = responses.filter((r) => r.status === 429)
    expect([ok.length, limited.length]).toEqual([20, 180])
    for (const r of limited) expect(((await r.json()) as { limit: string }).limit).toBe("daily")
    const { daily, rows } = await ledgerOf(target, accountId)
    expect(rows.map((r) => r.request_id).sort()).toEqual(ok.map((r) => r.headers.get("x-request-id")).sort())
    expect(daily).toEqual({ queries: 20, hcc_cost: 10 })
    expect(await processesServing(d, accountId, minProcesses)).toBeGreaterThanOrEqual(minProcesses)
  })

  it("a Starter burst spread over every process admits exactly 10", async () => {
    const { accountId, token } = newAccount(d.servers[0]!, { tier: "starter" })
    const responses = await burstOf(d, 60, "/v1/catalog", token, () => undefined)
    expect(responses.filter((r) => r.status === 200).length).toBe(10)
    const limited = responses.filter((r) => r.status === 429)
    expect(limited.length).toBe(50)
    for (const r of limited) expect(((await r.json()) as { limit: string }).limit).toBe("burst")
    expect(await processesServing(d, accountId, minProcesses)).toBeGreaterThanOrEqual(minProcesses)
  })
}

describe("three servers on one PostgreSQL", () => {
  exactness(async () => {
    const databaseUrl = await testDatabase()
    const servers = await Promise.all([0, 1, 2].map(() => startServer({ databaseUrl, env: PLUGINS, process: true })))
    return {
      name: "postgres",
      servers,
      urlOf: (i) => servers[i % servers.length]!.url,
      stop: async () => void (await Promise.all(servers.map((s) => s.stop())))
    }
  }, 3)
})

describe("hcc serve --workers 2 on SQLite", () => {
  exactness(async () => {
    const server = await startServer({ serveArgs: ["--workers", "2"], env: PLUGINS })
    await waitForLog(server, (l) => l.msg === "listening" && server.logLines().filter((x) => x.msg === "listening").length >= 2, 30_000)
    return { name: "workers", servers: [server], urlOf: () => server.url, stop: async () => void (await server.stop()) }
  }, 2)
})

describe("two servers started by hand on one data folder", () => {
  exactness(async () => {
    const dataDir = tempDataDir()
    const first = await startServer({ dataDir, env: PLUGINS, process: true })
    const second = await startServer({ dataDir, env: PLUGINS, process: true })
    return {
      name: "shared folder",
      servers: [first, second],
      urlOf: (i) => (i % 2 === 0 ? first.url : second.url),
      stop: async () => void (await Promise.all([first.stop(), second.stop()]))
    }
  }, 2)
})

describe("kill -9 of one process under load", () => {
  it("on PostgreSQL: every 2xx the client received has its ledger row, and the other servers keep answering", async () => {
    const databaseUrl = await testDatabase()
    const servers = await Promise.all([0, 1, 2].map(() => startServer({ databaseUrl, env: PLUGINS, process: true })))
    try {
      const { accountId, token } = newAccount(servers[0]!, { tier: "unlimited", burstLimit: 100_000 })
      const victim = servers[1]!
      const inflight: Array<Promise<Response | undefined>> = []
      for (let i = 0; i < 300; i++) {
        const server = servers[i % 3]!
        // Like a real client, each call gives up after a while: one in transit to the killed process may never be answered.
        inflight.push(call(server, "/v1/slow-echo", { token, timeoutMs: 10_000, body: { tag: `k${i}`, ms: 30 } }).catch(() => undefined))
        if (i === 150) victim.child!.kill("SIGKILL")
        if (i % 30 === 29) await new Promise((r) => setTimeout(r, 20))
      }
      const received = (await Promise.all(inflight)).filter((r): r is Response => r !== undefined && r.status === 200)
      expect(received.length).toBeGreaterThan(150)
      const { rows } = await ledgerOf(servers[0]!, accountId)
      const ledgered = new Set(rows.map((r) => r.request_id))
      for (const r of received) expect(ledgered.has(r.headers.get("x-request-id")!)).toBe(true)
      // The survivors answer, and a call the dead process had reserved does not block anyone.
      for (const s of [servers[0]!, servers[2]!]) {
        expect((await call(s, "/v1/slow-echo", { token, body: { tag: "after", ms: 0 } })).status).toBe(200)
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()))
    }
  }, 120_000)

  it("with --workers 2 on SQLite: the killed worker is replaced and no answered call is lost", async () => {
    const server = await startServer({ serveArgs: ["--workers", "2"], env: PLUGINS })
    try {
      await waitForLog(server, () => server.logLines().filter((x) => x.msg === "listening").length >= 2, 30_000)
      const { accountId, token } = newAccount(server, { tier: "unlimited", burstLimit: 100_000 })
      const workerPids = [...new Set(server.logLines().filter((l) => l.msg === "listening").map((l) => l.pid))]
      const inflight: Array<Promise<Response | undefined>> = []
      for (let i = 0; i < 200; i++) {
        inflight.push(call(server, "/v1/slow-echo", { token, timeoutMs: 10_000, body: { tag: `w${i}`, ms: 30 } }).catch(() => undefined))
        if (i === 100) {
          // The worker that served the most recent request dies.
          const last = server.logLines().filter((l) => l.msg === "request" && l.account_id === accountId).at(-1)
          process.kill(Number(last?.pid ?? workerPids[0]), "SIGKILL")
        }
        if (i % 20 === 19) await new Promise((r) => setTimeout(r, 20))
      }
      const received = (await Promise.all(inflight)).filter((r): r is Response => r !== undefined && r.status === 200)
      expect(received.length).toBeGreaterThan(100)
      const ledgered = new Set((await ledgerOf(server, accountId)).rows.map((r) => r.request_id))
      for (const r of received) expect(ledgered.has(r.headers.get("x-request-id")!)).toBe(true)
      await waitForLog(server, (l) => l.msg === "worker exited; starting another", 10_000)
      await waitForLog(server, () => server.logLines().filter((x) => x.msg === "listening").length >= 3, 30_000)
      for (let i = 0; i < 6; i++) expect((await call(server, "/v1/slow-echo", { token, body: { tag: "after", ms: 0 } })).status).toBe(200)
      const [count] = await query<{ n: number }>(server, "SELECT COUNT(*) AS n FROM usage_ledger WHERE account_id = ?", [accountId])
      expect(count?.n).toBe(ledgered.size + 6)
    } finally {
      await server.stop()
    }
  }, 120_000)
})
