/**
 * Idempotency-Key on both engines: a retried POST with the same key and body gets the stored answer
 * and is charged once — sequentially, concurrently, and after a restart; the same key with another
 * body is 422; a key is per account; a failed request gives its key back.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ENGINES, startOn } from "../support/engines.ts"
import { ledgerOf } from "../support/db.ts"
import { call, fixturePlugin, newAccount, type TestServer, waitReady } from "../support/server.ts"

const PLUGIN_ENV = { HCC_PLUGINS: fixturePlugin("series-stats") }

describe.each(ENGINES)("on %s", (engine) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startOn(engine, { env: PLUGIN_ENV })
    await waitReady(server)
  })
  afterAll(async () => {
    await server.stop()
  })

  const post = (token: string, body: unknown, key?: string) =>
    call(server, "/v1/series-stats", { token, body, headers: key === undefined ? {} : { "idempotency-key": key } })

  it("a retry with the same key and body gets the stored answer, marked replayed, and is charged once", async () => {
    const account = newAccount(server, { tier: "professional" })
    const first = await post(account.token, { values: [1, 2, 3] }, "key-1")
    expect(first.status).toBe(200)
    const firstBody = await first.text()
    // The same JSON with other whitespace and key order is the same request.
    const again = await post(account.token, '{ "values" : [1, 2, 3] }', "key-1")
    expect(again.status).toBe(200)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(await again.text()).toBe(firstBody)
    const ledger = await ledgerOf(server, account.accountId)
    expect(ledger.rows).toHaveLength(1)
    expect(ledger.daily?.queries).toBe(1)
  })

  it("the same key with a different body is 422 idempotency_key_reused; keys are per account; no key means no replay", async () => {
    const a = newAccount(server, { tier: "professional" })
    const b = newAccount(server, { tier: "professional" })
    expect((await post(a.token, { values: [1, 2] }, "shared")).status).toBe(200)
    const reused = await post(a.token, { values: [1, 2, 9] }, "shared")
    expect(reused.status).toBe(422)
    expect((await reused.json()).code).toBe("idempotency_key_reused")
    // Another account's key of the same name is its own.
    const other = await post(b.token, { values: [5, 6] }, "shared")
    expect(other.status).toBe(200)
    expect(other.headers.get("idempotent-replayed")).toBeNull()
    // Without a key every call runs and is charged.
    await post(a.token, { values: [1, 2] })
    await post(a.token, { values: [1, 2] })
    expect((await ledgerOf(server, a.accountId)).rows).toHaveLength(3)
  })

  it("concurrent retries: one runs and is charged, the others are replays or 409 idempotency_key_in_use with Retry-After", async () => {
    const account = newAccount(server, { tier: "professional" })
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(account.token, { values: [4, 5, 6] }, "burst-key")))
    const statuses = answers.map((r) => r.status)
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true)
    expect(answers.filter((r) => r.status === 200 && r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
    for (const r of answers.filter((x) => x.status === 409)) {
      expect(r.headers.get("retry-after")).toBe("1")
      expect((await r.json()).code).toBe("idempotency_key_in_use")
    }
    expect((await ledgerOf(server, account.accountId)).rows).toHaveLength(1)
    const later = await post(account.token, { values: [4, 5, 6] }, "burst-key")
    expect(later.headers.get("idempotent-replayed")).toBe("true")
  })

  it("a failed request is not stored: after a 400 the same key runs again", async () => {
    const account = newAccount(server, { tier: "professional" })
    const bad = await post(account.token, { values: "not numbers" }, "fix-me")
    expect(bad.status).toBe(400)
    // Same key, same (bad) body: runs again (still 400, still free), not a 409 or a replay.
    expect((await post(account.token, { values: "not numbers" }, "fix-me")).status).toBe(400)
    expect((await ledgerOf(server, account.accountId)).rows).toHaveLength(0)
  })

  it("an invalid key is 400", async () => {
    const account = newAccount(server, { tier: "professional" })
    const r = await post(account.token, { values: [1] }, "x".repeat(256))
    expect(r.status).toBe(400)
    expect((await r.json()).detail).toContain("Idempotency-Key")
  })

  it("after a restart the stored answer is still replayed and not charged again", async () => {
    const account = newAccount(server, { tier: "professional" })
    const first = await post(account.token, { values: [7, 8] }, "durable")
    const body = await first.text()
    await server.stop()
    server = await startOn(engine, { env: PLUGIN_ENV, dataDir: server.dataDir })
    await waitReady(server)
    const again = await post(account.token, { values: [7, 8] }, "durable")
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(await again.text()).toBe(body)
    expect((await ledgerOf(server, account.accountId)).rows).toHaveLength(1)
  })
})
