/**
 * Burst and daily limits, reservations and the usage ledger (docs/api.md, "Limits and headers"), exact across every
 * process that shares the database (docs/api.md, "Limits across processes").
 *
 * - Burst: every authenticated request takes a slot in the account's per-second buckets
 *   (BurstBuckets), decided inside a transaction that holds the account's limiter row.
 * - Daily: only charged (2xx) query calls count, per UTC day of the limiter clock. A query first
 *   *reserves* a unit — a row in `usage_reservations`, inserted under the same row lock only while
 *   `used + reserved < limit` — which the ledger transaction deletes as it adds the call to
 *   `usage_daily`, or which is deleted when the call fails. A reservation expires after
 *   {@link RESERVATION_LEASE_MS}, so a process killed mid-call holds its units only that long.
 *
 * Time is the limiter clock (LimiterStore): the database's on PostgreSQL, the machine's steady
 * clock on SQLite; a wall-clock step on a server changes neither. An account's day never moves
 * back, so even a stepped database clock cannot hand out a second daily quota.
 */
import * as Arr from "effect/Array"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import { randomUUID } from "node:crypto"
import type { Principal } from "../auth/Accounts.ts"
import { type Exec, execAlone, LimiterSql, relaxedStatement, transaction } from "../db/Database.ts"
import { type LimiterRow, LimiterStore } from "../db/LimiterStore.ts"
import * as BurstBuckets from "./BurstBuckets.ts"
import * as Coalescer from "./Coalescer.ts"
import { Ledger } from "./Ledger.ts"
import { BURST_WINDOW_MS, effectiveLimits } from "./Tiers.ts"

/** The request was refused by a limit; `retryAfter` in whole seconds. */
export class LimitExceeded extends Schema.TaggedError<LimitExceeded>()("LimitExceeded", {
  limit: Schema.Literals(["burst", "daily"]),
  quota: Schema.Number,
  retryAfter: Schema.Number
}) {}

/** How long a daily reservation holds its unit if the process that took it never confirms or releases it. */
export const RESERVATION_LEASE_MS = 5 * 60_000

/** A daily unit held by an in-flight query. */
export interface Reservation {
  readonly accountId: string
  /** The reservation row, or undefined for an account without a daily cap. */
  readonly id: string | undefined
  /** The UTC day the call counts against. */
  readonly day: string
}

/** One limit's state, as reported in headers and by /v1/usage. */
export interface LimitState {
  readonly name: "burst" | "daily"
  readonly quota: number
  readonly windowSeconds: number
  readonly used: number
  readonly remaining: number
  readonly resetSeconds: number
}

/** Everything known about an account's usage now. */
export interface UsageSnapshot {
  readonly day: string
  readonly burst: LimitState
  /** Undefined for accounts without a daily cap. */
  readonly daily: LimitState | undefined
  readonly dailyQueries: number
  readonly dailyHccCost: number
}

const DAY_MS = 86_400_000
/** UTC calendar day (YYYY-MM-DD) of a time. */
export const utcDay = (ms: number): string => new Date(Math.floor(ms / DAY_MS) * DAY_MS).toISOString().slice(0, 10)
/** Whole seconds from `ms` to the end of UTC day `day` (at least 1). */
const secondsToEndOf = (day: string, ms: number): number => Math.max(1, Math.ceil((Date.parse(day) + DAY_MS - ms) / 1000))
/** The later of two days (ISO dates compare as strings). */
const laterDay = (a: string, b: string): string => (a > b ? a : b)

/** What this process last learned of an account (for the RateLimit headers of its responses). */
interface Seen {
  burst: { used: number; remaining: number; resetSeconds: number }
  day: string
  /** Limiter time of the newest decision. */
  nowMs: number
  daily: { used: number; held: number; cost: number; resetSeconds: number }
}

type Call = {
  readonly principal: Principal
  readonly endpoint: string
  readonly hccCost: number
  readonly status: number
  readonly requestId: string
  /** The Idempotency-Key and the answer to store with the ledger row. */
  readonly idempotency?: { readonly key: string; readonly status: number; readonly body: string } | undefined
}

/** What this process last decided for an account (made empty the first time). */
const seenIn = (seen: Map<string, Seen>, accountId: string): Seen => {
  let s = seen.get(accountId)
  if (s === undefined) {
    s = {
      burst: { used: 0, remaining: 0, resetSeconds: BurstBuckets.WINDOW_SECONDS },
      day: "",
      nowMs: 0,
      daily: { used: 0, held: 0, cost: 0, resetSeconds: 1 }
    }
    seen.set(accountId, s)
  }
  return s
}

/** An account's queries and cost of `day`, and its reservations still held. */
const countsOf = (sql: SqlClient.SqlClient, exec: Exec, accountId: string, day: string, nowMs: number) =>
  Effect.map(
    exec(sql<{ readonly used: number | null; readonly cost: number | null; readonly held: number }>`SELECT
      (SELECT queries FROM usage_daily WHERE account_id = ${accountId} AND day = ${day}) AS used,
      (SELECT hcc_cost FROM usage_daily WHERE account_id = ${accountId} AND day = ${day}) AS cost,
      (SELECT COUNT(*) FROM usage_reservations WHERE account_id = ${accountId} AND day = ${day} AND expires_ms > ${nowMs}) AS held`),
    ([r]) => ({ used: r?.used ?? 0, cost: r?.cost ?? 0, held: r?.held ?? 0 })
  )

/** One limit's state, as the headers and the usage answer give it. */
const limitState = (name: "burst" | "daily", quota: number, windowSeconds: number, used: number, remaining: number, resetSeconds: number): LimitState => ({
  name,
  quota,
  windowSeconds,
  used,
  remaining,
  resetSeconds
})

/** An account's limits and usage from what was last decided for it. */
const snapshotOf = (principal: Principal, s: Seen): UsageSnapshot => {
  const limits = effectiveLimits(principal.account.tier, principal.account)
  return {
    day: s.day,
    burst: limitState("burst", limits.burst, BURST_WINDOW_MS / 1000, s.burst.used, s.burst.remaining, s.burst.resetSeconds),
    daily: limits.daily === undefined
      ? undefined
      : limitState("daily", limits.daily, DAY_MS / 1000, s.daily.used, Math.max(0, limits.daily - s.daily.used - s.daily.held), s.daily.resetSeconds),
    dailyQueries: s.daily.used,
    dailyHccCost: s.daily.cost
  }
}

/**
 * Counts a call a limit refused (a 429) against the account's day and the endpoint; the counts are
 * added to usage_refused a second later, many in one statement each.
 */
const refusalCounter = (sql: SqlClient.SqlClient, runFork: (effect: Effect.Effect<unknown, unknown>) => unknown, seen: ReadonlyMap<string, Seen>) => {
  const refusals = new Map<string, number>()
  const flushRefusals = () => {
    const batch = [...refusals]
    refusals.clear()
    runFork(Effect.ignore(transaction(sql, "relaxed", (exec) =>
      Effect.forEach(batch, ([key, n]) => {
        const [accountId, day, endpoint] = key.split("\u0000") as [string, string, string]
        return exec(sql`INSERT INTO usage_refused (account_id, day, endpoint, refused) VALUES (${accountId}, ${day}, ${endpoint}, ${n})
          ON CONFLICT (account_id, day, endpoint) DO UPDATE SET refused = usage_refused.refused + ${n}`)
      }, { discard: true }))))
  }
  const refused = (accountId: string, endpoint: string): void => {
    const day = seen.get(accountId)?.day || utcDay(Date.now())
    const key = `${accountId}\u0000${day}\u0000${endpoint}`
    if (refusals.size === 0) setTimeout(flushRefusals, 1000).unref()
    refusals.set(key, (refusals.get(key) ?? 0) + 1)
  }
  return refused
}

/** Decides `limits` (one per request, in arrival order) on an account's burst buckets, under its row lock. */
const burstDecisions = (limits: ReadonlyArray<number>) => (row: LimiterRow, nowMs: number) => {
  let buckets: ReadonlyArray<BurstBuckets.Bucket> = BurstBuckets.parse(row.burst)
  let lastMs = row.clockMs
  const decisions = limits.map((limit) => {
    const d = BurstBuckets.admit(buckets, limit, lastMs, nowMs)
    buckets = d.buckets
    lastMs = nowMs
    return d
  })
  const day = laterDay(row.day, utcDay(nowMs))
  return Effect.succeed([decisions.map((d) => ({ d, nowMs, day })), { burst: BurstBuckets.format(buckets), clockMs: nowMs, day }] as const)
}

/**
 * Decides `limits` (one per request, in arrival order) on an account's day, under its row lock:
 * one count, then each request gets a unit (a reservation) while used + held < its limit.
 */
const dailyDecisions = (sql: SqlClient.SqlClient, accountId: string, limits: ReadonlyArray<number>) => (row: LimiterRow, nowMs: number, exec: Exec) =>
  Effect.gen(function*() {
    const day = laterDay(row.day, utcDay(nowMs))
    const c = yield* countsOf(sql, exec, accountId, day, nowMs)
    let held = c.held
    const ids = limits.map((limit) => (c.used + held < limit ? (held++, randomUUID()) : undefined))
    const rows: Array<Record<string, unknown>> = ids.flatMap((id) => (id === undefined ? [] : [{ id, account_id: accountId, day, expires_ms: nowMs + RESERVATION_LEASE_MS }]))
    if (Arr.isReadonlyArrayNonEmpty(rows)) yield* exec(sql`INSERT INTO usage_reservations ${sql.insert(rows)}`)
    return [ids.map((id) => ({ id, day, nowMs, used: c.used, cost: c.cost, held })), { ...row, day }] as const
  })

/** Limits, reservations and ledger in one service. */
export interface MeteringService {
  /** Takes a burst slot (every authenticated request). */
  readonly admit: (principal: Principal) => Effect.Effect<void, LimitExceeded | SqlError.SqlError>
  /** Reserves one daily unit for a query about to run. */
  readonly reserve: (principal: Principal) => Effect.Effect<Reservation, LimitExceeded | SqlError.SqlError>
  /** Makes the call durable in the ledger, confirming the reservation in the same transaction. */
  readonly commit: (reservation: Reservation, call: Call) => Effect.Effect<void, SqlError.SqlError>
  /** Gives a reservation back (the call failed or was refused). */
  readonly release: (reservation: Reservation) => Effect.Effect<void>
  /** The account's limits and usage now, read from the database. */
  readonly snapshot: (principal: Principal) => Effect.Effect<UsageSnapshot, SqlError.SqlError>
  /** What this process last decided for the account, synchronously (for response headers). */
  readonly snapshotAt: (principal: Principal) => UsageSnapshot
  /**
   * Counts a call a limit refused (a 429) against the account's day and the endpoint, for the
   * portal's usage page; written in the background a second later, many in one statement each.
   */
  readonly refused: (accountId: string, endpoint: string) => void
}

/** Limits, reservations and ledger in one service. */
export class Metering extends Context.Service<Metering, MeteringService>()("hcc/Metering") {
  /** Limits decided in the database, over the SQL ledger. */
  static readonly layer = Layer.effect(
    Metering,
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const store = yield* LimiterStore
      // The limiter's statements run on its own client: those inside store.locked share its transaction.
      const sql = yield* LimiterSql
      const seen = new Map<string, Seen>()
      const seenOf = (accountId: string): Seen => seenIn(seen, accountId)

      const scope = yield* Effect.scope

      // Burst: every decision for an account runs under its row lock; concurrent ones share a transaction.
      const decideBurst = Coalescer.make(scope, (accountId, limits: ReadonlyArray<number>) => store.locked(accountId, burstDecisions(limits)))

      const admit = (principal: Principal) => {
        const { burst } = effectiveLimits(principal.account.tier, principal.account)
        return Effect.flatMap(decideBurst(principal.account.id, burst), ({ d, day, nowMs }) => {
          const s = seenOf(principal.account.id)
          s.burst = { used: d.used, remaining: d.remaining, resetSeconds: d.resetSeconds }
          if (s.day !== day) s.daily = { used: 0, held: 0, cost: 0, resetSeconds: secondsToEndOf(day, nowMs) }
          s.day = day
          s.nowMs = nowMs
          return d.admitted ? Effect.void : Effect.fail(new LimitExceeded({ limit: "burst", quota: burst, retryAfter: d.retryAfter }))
        })
      }

      // Daily: one count per batch; each request in arrival order gets a unit while used + held < limit.
      const decideDaily = Coalescer.make(scope, (accountId, limits: ReadonlyArray<number>) => store.locked(accountId, dailyDecisions(sql, accountId, limits)))

      const reserve = (principal: Principal): Effect.Effect<Reservation, LimitExceeded | SqlError.SqlError> => {
        const accountId = principal.account.id
        const { daily } = effectiveLimits(principal.account.tier, principal.account)
        // No cap, nothing to hold: the call counts against the day this request's burst decision saw.
        if (daily === undefined) return Effect.succeed({ accountId, id: undefined, day: seenOf(accountId).day })
        return Effect.flatMap(decideDaily(accountId, daily), (r) => {
          const s = seenOf(accountId)
          const resetSeconds = secondsToEndOf(r.day, r.nowMs)
          s.day = r.day
          s.daily = { used: r.used, held: r.held, cost: r.cost, resetSeconds }
          return r.id === undefined
            ? Effect.fail(new LimitExceeded({ limit: "daily", quota: daily, retryAfter: resetSeconds }))
            : Effect.succeed({ accountId, id: r.id, day: r.day })
        })
      }

      const forget = (reservation: Reservation) => {
        const s = seen.get(reservation.accountId)
        if (s !== undefined && s.day === reservation.day && reservation.id !== undefined) s.daily.held = Math.max(0, s.daily.held - 1)
      }

      const release = (reservation: Reservation) =>
        reservation.id === undefined ? Effect.void : relaxedStatement(sql, sql`DELETE FROM usage_reservations WHERE id = ${reservation.id}`).pipe(
          Effect.tap(() => Effect.sync(() => forget(reservation))),
          // A reservation that cannot be deleted now expires with its lease; the caller's answer stands.
          Effect.catch((e) => Effect.logWarning("could not release a daily reservation", e)),
          Effect.asVoid
        )

      // A chain of flatMaps, not a generator: it runs on every charged call.
      const commit = (reservation: Reservation, call: Call) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          Effect.map(
            ledger.append({
              accountId: call.principal.account.id,
              tokenId: call.principal.tokenId,
              endpoint: call.endpoint,
              hccCost: call.hccCost,
              status: call.status,
              requestId: call.requestId,
              day: reservation.day,
              at: new Date(now).toISOString(),
              reservationId: reservation.id,
              idempotency: call.idempotency
            }),
            () => {
              forget(reservation)
              const s = seenOf(reservation.accountId)
              if (s.day === reservation.day) {
                s.daily.used++
                s.daily.cost += call.hccCost
              }
            }
          )).pipe(Effect.tapError(() => release(reservation)))

      const snapshot = (principal: Principal) =>
        Effect.gen(function*() {
          const limits = effectiveLimits(principal.account.tier, principal.account)
          const { nowMs, row } = yield* store.peek(principal.account.id)
          const buckets = BurstBuckets.current(BurstBuckets.parse(row.burst), row.clockMs, nowMs)
          const b = BurstBuckets.state(buckets, limits.burst, nowMs)
          const day = laterDay(row.day, utcDay(nowMs))
          const c = yield* countsOf(sql, execAlone, principal.account.id, day, nowMs)
          return snapshotOf(principal, {
            burst: b,
            day,
            nowMs,
            daily: { ...c, resetSeconds: secondsToEndOf(day, nowMs) }
          })
        })

      // Expired reservations no longer count; delete them now and then so the table stays small.
      yield* Effect.forkScoped(
        Effect.gen(function*() {
          yield* Effect.sleep("1 minute")
          const nowMs = yield* store.now
          yield* sql`DELETE FROM usage_reservations WHERE expires_ms < ${nowMs}`
        }).pipe(Effect.catch((e) => Effect.logWarning("could not sweep expired reservations", e)), Effect.forever)
      )

      // 429s by account, day and endpoint: counted here, added to usage_refused a second later.
      const refused = refusalCounter(sql, Effect.runForkWith(yield* Effect.context<never>()), seen)

      return Metering.of({ admit, reserve, commit, release, snapshot, snapshotAt: (principal) => snapshotOf(principal, seenOf(principal.account.id)), refused })
    })
  )
}

/** `RateLimit-Policy` and `RateLimit` header values (IETF httpapi RateLimit fields draft -11). */
export const rateLimitHeaders = (s: UsageSnapshot): { readonly policy: string; readonly current: string } => {
  const items = s.daily === undefined ? [s.burst] : [s.burst, s.daily]
  return {
    policy: items.map((l) => `"${l.name}";q=${l.quota};w=${l.windowSeconds}`).join(", "),
    current: items.map((l) => `"${l.name}";r=${l.remaining};t=${l.resetSeconds}`).join(", ")
  }
}
