/**
 * Time that cannot be gamed (docs/api.md, "The limiter clock"). The tests drive the wall clock
 * (Effect's TestClock) and the machine's monotonic clock separately, and run the real limiter —
 * Metering, LimiterStore and the ledger — on a real database:
 * - SQLite: a wall-clock step back across UTC midnight gives no second daily quota, a step forward
 *   forgets no usage, an hour back locks no one out; processes started before and after a step
 *   agree; even a new boot with the clock set back keeps the account on its later day.
 * - PostgreSQL: the database's clock decides, whatever the server's wall clock says.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { TestClock } from "effect/testing"
import { Accounts, type Principal } from "../../src/auth/Accounts.ts"
import { AppConfig } from "../../src/config/AppConfig.ts"
import * as Database from "../../src/db/Database.ts"
import { BootId, LimiterStore, Monotonic } from "../../src/db/LimiterStore.ts"
import { Ledger } from "../../src/metering/Ledger.ts"
import { Metering } from "../../src/metering/Metering.ts"
import type { Tier } from "../../src/metering/Tiers.ts"
import { testDatabase } from "../support/postgres.ts"
import { tempDataDir } from "../support/server.ts"

const HOUR = 3_600_000
/** 00:00:10 UTC on 23 November 2026. */
const JUST_AFTER_MIDNIGHT = Date.UTC(2026, 10, 23, 0, 0, 10)

/** The machine's monotonic clock, moved by the test (it only ever goes forward). */
const monotonic = { ms: 5_000_000 }
const tick = (ms: number) => Effect.andThen(Effect.sync(() => void (monotonic.ms += ms)), TestClock.adjust(ms))
/** The wall clock jumps by `ms` (either way) while the monotonic clock moves on by one second. */
const stepWall = (ms: number) =>
  Effect.andThen(
    Effect.sync(() => void (monotonic.ms += 1000)),
    Effect.flatMap(Effect.clockWith((c) => c.currentTimeMillis), (now) => TestClock.setTime(now + 1000 + ms))
  )

/** One server process's limiter over the database of `config` (a "process" = one layer). */
const processLayer = (config: Partial<AppConfig["Service"]> & Pick<AppConfig["Service"], "dataDir">, bootId = "boot-1") =>
  Metering.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Ledger.layer, LimiterStore.layer, Accounts.layer)),
    Layer.provideMerge(Database.LimiterSql.layer),
    Layer.provideMerge(Database.layer),
    Layer.provide(Layer.mergeAll(
      AppConfig.layerTest(config),
      Layer.succeed(Monotonic, () => monotonic.ms),
      Layer.succeed(BootId, bootId)
    ))
  )

const newPrincipal = (tier: Tier, limits: { readonly dailyLimit?: number; readonly burstLimit?: number }) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const account = yield* accounts.create({ name: "clock", tier, ...limits })
    const { info } = yield* accounts.issueToken({ accountId: account.id, label: "clock" })
    return { account, tokenId: info.id, tokenExpiresAt: null } satisfies Principal
  })

/**
 * Sets the wall clock, then runs `body` in a fresh process on `dataDir` (the clock is set first:
 * its background fibers then start from the right time).
 */
const at = <A, E>(start: number, body: Effect.Effect<A, E, Metering | Accounts | LimiterStore>, dataDir = tempDataDir()) =>
  Effect.andThen(TestClock.setTime(start), Effect.scoped(body.pipe(Effect.provide(processLayer({ dataDir })))))

/** One charged call: burst slot, reservation, ledger row; "daily" or "burst" if refused. */
const charge = (principal: Principal) =>
  Effect.gen(function*() {
    const metering = yield* Metering
    yield* metering.admit(principal)
    const reservation = yield* metering.reserve(principal)
    yield* metering.commit(reservation, { principal, endpoint: "/v1/test", hccCost: 1, status: 200, requestId: crypto.randomUUID() })
    return "ok" as const
  }).pipe(Effect.catchTag("LimitExceeded", (e) => Effect.succeed(e.limit)))

const charges = (principal: Principal, n: number) => Effect.forEach(Array.from({ length: n }), () => charge(principal))

describe("SQLite: the steady clock", () => {
  it.effect("a wall-clock step back across UTC midnight hands out no second daily quota", () =>
    at(JUST_AFTER_MIDNIGHT, Effect.gen(function*() {
      const principal = yield* newPrincipal("starter", { dailyLimit: 3, burstLimit: 1000 })
      assert.deepStrictEqual(yield* charges(principal, 4), ["ok", "ok", "ok", "daily"])
      yield* stepWall(-20_000) // 23:59:51 on the 22nd by the wall clock
      assert.deepStrictEqual(yield* charges(principal, 2), ["daily", "daily"])
      const snapshot = yield* (yield* Metering).snapshot(principal)
      assert.strictEqual(snapshot.day, "2026-11-23")
      assert.strictEqual(snapshot.dailyQueries, 3)
    })))

  it.effect("a wall-clock step forward forgets no usage", () =>
    at(JUST_AFTER_MIDNIGHT + 12 * HOUR, Effect.gen(function*() {
      const principal = yield* newPrincipal("starter", { dailyLimit: 3, burstLimit: 1000 })
      assert.deepStrictEqual(yield* charges(principal, 2), ["ok", "ok"])
      yield* stepWall(+24 * HOUR)
      assert.deepStrictEqual(yield* charges(principal, 2), ["ok", "daily"])
      yield* stepWall(-24 * HOUR)
      assert.deepStrictEqual(yield* charges(principal, 1), ["daily"])
    })))

  it.effect("a one-hour step back locks no Starter out: its burst frees after the minute, by the monotonic clock", () =>
    at(JUST_AFTER_MIDNIGHT + 9 * HOUR, Effect.gen(function*() {
      const principal = yield* newPrincipal("starter", {})
      const burst = yield* charges(principal, 11)
      assert.deepStrictEqual(burst.slice(9), ["ok", "burst"])
      yield* stepWall(-HOUR)
      yield* tick(61_000)
      assert.deepStrictEqual(yield* charges(principal, 1), ["ok"])
    })))

  it.effect("processes started before and after a wall-clock step read the same limiter time", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(JUST_AFTER_MIDNIGHT)
      const dataDir = tempDataDir()
      const before = yield* Layer.build(processLayer({ dataDir }))
      yield* stepWall(-5 * HOUR)
      const after = yield* Layer.build(processLayer({ dataDir }))
      const limiterNow = Effect.flatMap(LimiterStore, (s) => s.now)
      const nowBefore = yield* limiterNow.pipe(Effect.provide(before))
      const nowAfter = yield* limiterNow.pipe(Effect.provide(after))
      assert.strictEqual(nowAfter, nowBefore)
      assert.strictEqual(nowAfter, JUST_AFTER_MIDNIGHT + 1000)
    }))

  it.effect("after a reboot with the clock set back across midnight, an account's day still never moves back", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(JUST_AFTER_MIDNIGHT)
      const dataDir = tempDataDir()
      const principal = yield* Effect.scoped(Effect.gen(function*() {
        const p = yield* newPrincipal("starter", { dailyLimit: 2, burstLimit: 1000 })
        assert.deepStrictEqual(yield* charges(p, 3), ["ok", "ok", "daily"])
        return p
      }).pipe(Effect.provide(processLayer({ dataDir }, "boot-1"))))
      yield* stepWall(-HOUR) // 23:00 on the 22nd, and the machine restarts: a new anchor
      const after = yield* Effect.scoped(charges(principal, 1).pipe(Effect.provide(processLayer({ dataDir }, "boot-2"))))
      assert.deepStrictEqual(after, ["daily"])
    }))
})

describe("PostgreSQL: the database's clock", () => {
  it.effect("decides the day and the window whatever the server's wall clock says", () =>
    Effect.gen(function*() {
      const databaseUrl = yield* Effect.promise(() => testDatabase())
      const layer = processLayer({ dataDir: tempDataDir(), databaseUrl: Option.some(databaseUrl) })
      yield* TestClock.setTime(Date.UTC(1999, 0, 1)) // the server's clock is badly wrong
      yield* Effect.gen(function*() {
        const principal = yield* newPrincipal("starter", { dailyLimit: 2, burstLimit: 1000 })
        assert.deepStrictEqual(yield* charges(principal, 3), ["ok", "ok", "daily"])
        yield* stepWall(-30 * 24 * HOUR)
        assert.deepStrictEqual(yield* charges(principal, 1), ["daily"])
        const snapshot = yield* (yield* Metering).snapshot(principal)
        const realNow = yield* TestClock.withLive(Effect.clockWith((c) => c.currentTimeMillis))
        assert.strictEqual(snapshot.day, new Date(realNow).toISOString().slice(0, 10))
      }).pipe(Effect.provide(layer))
    }), 30_000)
})
