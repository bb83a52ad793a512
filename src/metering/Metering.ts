/**
 * Burst and daily limits, reservations and the usage ledger (decisions §5).
 *
 * - Burst: every authenticated request takes a slot in an exact rolling 60 s window per account.
 * - Daily: only charged (2xx) query calls count, per UTC day. A query first *reserves* a unit; the
 *   unit is confirmed when its ledger row is durable, or released if the call fails. `used +
 *   reserved` never exceeds the limit, so concurrent requests cannot overshoot it.
 *
 * Counters live in this process (one replica owns its SQLite file); today's committed totals are
 * restored from `usage_daily` at start, so a restart keeps the counts. With several replicas on
 * PostgreSQL the reservation must move into the database (an `UPDATE … WHERE queries + reserved <
 * limit`); the interface here is shaped so that swap touches only this module.
 */
import { Clock, Context, Effect, Layer, Schema } from "effect"
import type { SqlError } from "effect/sql"
import type { Principal } from "../auth/Accounts.ts"
import { BurstWindow } from "./BurstWindow.ts"
import { Ledger } from "./Ledger.ts"
import { BURST_WINDOW_MS, effectiveLimits } from "./Tiers.ts"

/** The request was refused by a limit; `retryAfter` in whole seconds. */
export class LimitExceeded extends Schema.TaggedError<LimitExceeded>()("LimitExceeded", {
  limit: Schema.Literals(["burst", "daily"]),
  quota: Schema.Number,
  retryAfter: Schema.Number
}) {}

/** A daily unit held by an in-flight query. */
export interface Reservation {
  readonly state: DayState
}

interface DayState {
  readonly day: string
  used: number
  reserved: number
  cost: number
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
let lastDayNumber = Number.NaN
let lastDay = ""
/** UTC calendar day (YYYY-MM-DD) of a time; the string is made once per day, not per request. */
export const utcDay = (ms: number): string => {
  const n = Math.floor(ms / DAY_MS)
  if (n !== lastDayNumber) {
    lastDayNumber = n
    lastDay = new Date(n * DAY_MS).toISOString().slice(0, 10)
  }
  return lastDay
}
const secondsToMidnight = (ms: number): number => Math.max(1, Math.ceil((DAY_MS - (ms % DAY_MS)) / 1000))

/** Limits, reservations and ledger in one service. */
export class Metering extends Context.Service<Metering, {
  /** Takes a burst slot (every authenticated request). */
  readonly admit: (principal: Principal) => Effect.Effect<void, LimitExceeded>
  /** Reserves one daily unit for a query about to run. */
  readonly reserve: (principal: Principal) => Effect.Effect<Reservation, LimitExceeded>
  /** Makes the call durable in the ledger, then turns the reservation into usage. */
  readonly commit: (
    reservation: Reservation,
    call: { readonly principal: Principal; readonly endpoint: string; readonly hccCost: number; readonly status: number; readonly requestId: string }
  ) => Effect.Effect<void, SqlError.SqlError>
  /** Gives a reservation back (the call failed or was refused). */
  readonly release: (reservation: Reservation) => Effect.Effect<void>
  /** The account's limits and usage now. */
  readonly snapshot: (principal: Principal) => Effect.Effect<UsageSnapshot>
  /** The same at a given time, synchronously (for response headers). */
  readonly snapshotAt: (principal: Principal, nowMs: number) => UsageSnapshot
}>()("hcc/Metering") {
  /** In-process counters over the SQL ledger. */
  static readonly layer = Layer.effect(
    Metering,
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const windows = new Map<string, BurstWindow>()
      const days = new Map<string, DayState>()

      const today = utcDay(yield* Clock.currentTimeMillis)
      for (const t of yield* ledger.totalsForDay(today)) {
        days.set(t.accountId, { day: today, used: t.queries, reserved: 0, cost: t.hccCost })
      }

      const windowOf = (principal: Principal): BurstWindow => {
        const { burst } = effectiveLimits(principal.account.tier, principal.account)
        let w = windows.get(principal.account.id)
        if (w === undefined) {
          w = new BurstWindow(burst, BURST_WINDOW_MS)
          windows.set(principal.account.id, w)
        } else if (w.limit !== burst) w.resize(burst)
        return w
      }
      const dayOf = (accountId: string, now: number): DayState => {
        const day = utcDay(now)
        let s = days.get(accountId)
        if (s === undefined || s.day !== day) {
          s = { day, used: 0, reserved: 0, cost: 0 }
          days.set(accountId, s)
        }
        return s
      }

      const admit = (principal: Principal) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const w = windowOf(principal)
          const d = w.tryAcquire(now)
          return d.admitted
            ? Effect.void
            : Effect.fail(new LimitExceeded({ limit: "burst", quota: w.limit, retryAfter: d.resetSeconds }))
        })

      const reserve = (principal: Principal) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const { daily } = effectiveLimits(principal.account.tier, principal.account)
          const state = dayOf(principal.account.id, now)
          if (daily !== undefined && state.used + state.reserved >= daily) {
            return Effect.fail(new LimitExceeded({ limit: "daily", quota: daily, retryAfter: secondsToMidnight(now) }))
          }
          state.reserved++
          return Effect.succeed<Reservation>({ state })
        })

      const release = (reservation: Reservation) =>
        Effect.sync(() => {
          reservation.state.reserved--
        })

      const commit = (
        reservation: Reservation,
        call: { readonly principal: Principal; readonly endpoint: string; readonly hccCost: number; readonly status: number; readonly requestId: string }
      ) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          yield* ledger.append({
            accountId: call.principal.account.id,
            tokenId: call.principal.tokenId,
            endpoint: call.endpoint,
            hccCost: call.hccCost,
            status: call.status,
            requestId: call.requestId,
            day: reservation.state.day,
            at: new Date(now).toISOString()
          })
          reservation.state.used++
          reservation.state.cost += call.hccCost
        }).pipe(Effect.ensuring(release(reservation)))

      const snapshotAt = (principal: Principal, now: number): UsageSnapshot => {
          const limits = effectiveLimits(principal.account.tier, principal.account)
          const b = windowOf(principal).peek(now)
          const state = dayOf(principal.account.id, now)
          return {
            day: state.day,
            burst: {
              name: "burst",
              quota: limits.burst,
              windowSeconds: BURST_WINDOW_MS / 1000,
              used: b.used,
              remaining: b.remaining,
              resetSeconds: b.resetSeconds
            },
            daily: limits.daily === undefined ? undefined : {
              name: "daily",
              quota: limits.daily,
              windowSeconds: DAY_MS / 1000,
              used: state.used,
              remaining: Math.max(0, limits.daily - state.used - state.reserved),
              resetSeconds: secondsToMidnight(now)
            },
            dailyQueries: state.used,
            dailyHccCost: state.cost
          }
        }
      const snapshot = (principal: Principal) => Effect.map(Clock.currentTimeMillis, (now) => snapshotAt(principal, now))

      return Metering.of({ admit, reserve, commit, release, snapshot, snapshotAt })
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
