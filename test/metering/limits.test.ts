/**
 * Limits over HTTP (docs/api.md, "Limits and headers"), on both engines: burst, daily with concurrent reservations, what
 * counts, the RateLimit headers, the durable ledger, and counts that survive a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ledgerOf } from "../support/db.ts"
import { ENGINES, startOn } from "../support/engines.ts"
import { call, fixturePlugin, newAccount, type TestServer, tempDataDir } from "../support/server.ts"

const PLUGINS = [fixturePlugin("series-stats"), fixturePlugin("slow-echo")].join(",")

describe.each(ENGINES)("on %s", (engine) => {
let server: TestServer

beforeAll(async () => {
  server = await startOn(engine, { env: { HCC_PLUGINS: PLUGINS } })
})
afterAll(async () => {
  await server.stop()
})

describe("burst", () => {
  it("a Starter account gets 10 answers in a burst and the 11th is 429 burst", async () => {
    const { token } = newAccount(server, { tier: "starter" })
    const statuses: Array<number> = []
    const first = Date.now()
    for (let i = 0; i < 10; i++) {
      const res = await call(server, "/v1/series-stats", { token, body: { values: [i, i + 1] } })
      statuses.push(res.status)
      // t: the first request's whole second leaves the window 60–61 s after it (per-second buckets),
      // so a request made s seconds after the first sees 60 − ⌈s⌉ to 61.
      const header = res.headers.get("ratelimit")!
      expect(header).toMatch(new RegExp(`^"burst";r=${9 - i};t=\\d+, "daily";r=${99 - i};t=\\d+$`))
      const t = Number(/^"burst";r=\d+;t=(\d+)/.exec(header)![1])
      expect(t).toBeLessThanOrEqual(61)
      expect(t).toBeGreaterThanOrEqual(60 - Math.ceil((Date.now() - first) / 1000))
    }
    expect(statuses).toEqual(Array(10).fill(200))
    const eleventh = await call(server, "/v1/series-stats", { token, body: { values: [1] } })
    expect(eleventh.status).toBe(429)
    expect(await eleventh.json()).toMatchObject({ code: "rate_limited", limit: "burst" })
    expect(Number(eleventh.headers.get("retry-after"))).toBeGreaterThan(0)
  })
  it("every authenticated request counts toward burst, including free and failed ones", async () => {
    const { token } = newAccount(server, { tier: "starter" })
    expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
    expect((await call(server, "/v1/usage", { token })).status).toBe(200)
    expect((await call(server, "/v1/series-stats", { token, body: { nope: 1 } })).status).toBe(400)
    const usage = (await (await call(server, "/v1/usage", { token })).json()) as { limits: { burst: { used: number; remaining: number } } }
    expect(usage.limits.burst).toMatchObject({ used: 4, remaining: 6 })
  })
})

describe("daily", () => {
  it("50 concurrent requests with a daily limit of 20 admit exactly 20; ledger rows equal charged responses", async () => {
    const { accountId, token } = newAccount(server, { tier: "starter", dailyLimit: 20, burstLimit: 1000 })
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) => call(server, "/v1/slow-echo", { token, body: { tag: `r${i}`, ms: 40 } }))
    )
    const ok = responses.filter((r) => r.status === 200)
    const limited = responses.filter((r) => r.status === 429)
    expect(ok.length).toBe(20)
    expect(limited.length).toBe(30)
    for (const r of limited) expect(((await r.json()) as { limit: string }).limit).toBe("daily")
    const okIds = ok.map((r) => r.headers.get("x-request-id")).sort()
    const { daily, rows } = await ledgerOf(server, accountId)
    expect(rows.length).toBe(20)
    expect(rows.map((r) => r.request_id).sort()).toEqual(okIds)
    expect(rows.every((r) => r.endpoint === "/v1/slow-echo" && r.hcc_cost === 0.5 && r.status === 200)).toBe(true)
    expect(daily).toEqual({ queries: 20, hcc_cost: 10 })
  })
  it("only charged calls count: errors and the catalog are free and leave no ledger row", async () => {
    const { accountId, token } = newAccount(server, { tier: "professional" })
    await call(server, "/v1/catalog", { token })
    await call(server, "/v1/series-stats", { token, body: "{oops" })
    await call(server, "/v1/series-stats", { token, body: { values: [] } })
    await call(server, "/v1/series-stats", { token, body: { values: [2, 2], label: "must-vary" } })
    expect((await ledgerOf(server, accountId)).rows).toEqual([])
    const ok = await call(server, "/v1/series-stats", { token, body: { values: [1, 2, 3] } })
    expect(((await ok.json()) as { hcc_cost: number }).hcc_cost).toBe(1.25)
    const usage = (await (await call(server, "/v1/usage", { token })).json()) as Record<string, any>
    expect(usage).toMatchObject({ queries_today: 1, hcc_cost_today: 1.25, hcc_cost: 0, limits: { daily: { used: 1, remaining: 999, limit: 1000 } } })
    expect((await ledgerOf(server, accountId)).rows.length).toBe(1)
  })
  it("Unlimited has no daily item in the RateLimit headers and no daily cap", async () => {
    const { token } = newAccount(server, { tier: "unlimited" })
    const res = await call(server, "/v1/series-stats", { token, body: { values: [1] } })
    expect(res.headers.get("ratelimit-policy")).toBe(`"burst";q=1000;w=60`)
    expect(res.headers.get("ratelimit")).toMatch(/^"burst";r=999;t=6[01]$/)
    const usage = (await (await call(server, "/v1/usage", { token })).json()) as Record<string, any>
    expect(usage.limits.daily).toBeNull()
  })
  it("RateLimit-Policy follows the tier", async () => {
    const { token } = newAccount(server, { tier: "enterprise" })
    const res = await call(server, "/v1/catalog", { token })
    expect(res.headers.get("ratelimit-policy")).toBe(`"burst";q=200;w=60, "daily";q=10000;w=86400`)
    const t = Number(/"daily";r=10000;t=(\d+)$/.exec(res.headers.get("ratelimit")!)![1])
    const now = new Date()
    const toMidnight = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000
    expect(Math.abs(t - toMidnight)).toBeLessThan(5)
  })
})

describe("restart", () => {
  it("keeps the daily counts", async () => {
    const dataDir = tempDataDir()
    const first = await startOn(engine, { dataDir, env: { HCC_PLUGINS: PLUGINS } })
    const { token } = newAccount(first, { tier: "starter", dailyLimit: 5, burstLimit: 100 })
    for (let i = 0; i < 3; i++) expect((await call(first, "/v1/series-stats", { token, body: { values: [i] } })).status).toBe(200)
    expect(await first.stop()).toBe(0)
    const second = await startOn(engine, { dataDir, env: { HCC_PLUGINS: PLUGINS } })
    try {
      const usage = (await (await call(second, "/v1/usage", { token })).json()) as Record<string, any>
      expect(usage).toMatchObject({ queries_today: 3, hcc_cost_today: 3.75, limits: { daily: { used: 3, remaining: 2 } } })
      expect((await call(second, "/v1/series-stats", { token, body: { values: [1] } })).status).toBe(200)
      expect((await call(second, "/v1/series-stats", { token, body: { values: [1] } })).status).toBe(200)
      const over = await call(second, "/v1/series-stats", { token, body: { values: [1] } })
      expect(over.status).toBe(429)
      expect(((await over.json()) as { limit: string }).limit).toBe("daily")
    } finally {
      await second.stop()
    }
  })
  it("keeps the burst window: a Starter that used its 10 is still refused by the restarted server", async () => {
    const dataDir = tempDataDir()
    const first = await startOn(engine, { dataDir, env: { HCC_PLUGINS: PLUGINS } })
    const { token } = newAccount(first, { tier: "starter" })
    for (let i = 0; i < 10; i++) expect((await call(first, "/v1/catalog", { token })).status).toBe(200)
    expect(await first.stop()).toBe(0)
    const second = await startOn(engine, { dataDir, env: { HCC_PLUGINS: PLUGINS } })
    try {
      const res = await call(second, "/v1/catalog", { token })
      expect(res.status).toBe(429)
      expect(((await res.json()) as { limit: string }).limit).toBe("burst")
    } finally {
      await second.stop()
    }
  })
})

describe("--burst-limit", () => {
  it("takes any documented value: 5,000,000,000 per minute is stored and enforced without a 500", async () => {
    const { token } = newAccount(server, { tier: "unlimited", burstLimit: 5_000_000_000 })
    const res = await call(server, "/v1/series-stats", { token, body: { values: [1, 2] } })
    expect(res.status).toBe(200)
    expect(res.headers.get("ratelimit-policy")).toBe(`"burst";q=5000000000;w=60`)
    expect(res.headers.get("ratelimit")).toMatch(/^"burst";r=4999999999;t=6[01]$/)
  })
})
})
