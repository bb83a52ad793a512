/**
 * The database side of the limits: a transaction that holds one account's limiter row, and the
 * limiter clock — the one time source every process sharing the database agrees on.
 *
 * - PostgreSQL (replicas on several machines): the database server's clock, read in the same
 *   statement that locks the row (`SELECT … FOR UPDATE`), so it costs no extra round trip and a
 *   replica whose own clock is wrong or stepped changes nothing.
 * - SQLite (processes on one machine): a steady clock — the wall clock as read once per boot by the
 *   first process (its offset from the machine's monotonic clock is stored in `clock_anchors`),
 *   advanced by the monotonic clock, which every process on the machine shares and no one can
 *   step. A step of the wall clock while servers run changes nothing; a deliberate correction takes
 *   effect at the next boot (or after `DELETE FROM clock_anchors`). `BEGIN IMMEDIATE` makes the
 *   transaction the only writer, so the row needs no lock of its own.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as SqlError from "effect/sql/SqlError"
import { readFileSync } from "node:fs"
import { type Exec, LimiterSql, transaction } from "./Database.ts"

/** One account's limiter row. */
export interface LimiterRow {
  /** The burst window's buckets (BurstBuckets text). */
  readonly burst: string
  /** Limiter time of the newest burst decision (ms since the epoch; 0 = none yet). */
  readonly clockMs: number
  /** The account's current UTC day (`YYYY-MM-DD`; "" = none yet): it never moves back. */
  readonly day: string
}

/** Milliseconds of a clock no one can step (CLOCK_MONOTONIC on Linux, shared by every process). */
export const Monotonic = Context.Reference<() => number>("hcc/Monotonic", {
  defaultValue: () => () => Number(process.hrtime.bigint()) / 1e6
})

/** This machine's boot id (Linux), or undefined where there is none to share an anchor by. */
export const BootId = Context.Reference<string | undefined>("hcc/BootId", {
  defaultValue: () => {
    const read = Effect.runSync(Effect.option(Effect.try(() => readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim())))
    return read._tag === "Some" && read.value !== "" ? read.value : undefined
  }
})

interface StoredRow {
  readonly burst: string
  readonly clock_ms: number
  readonly day: string
  readonly now_ms: number | null
}

/** The limiter row lock and the limiter clock. */
export class LimiterStore extends Context.Service<LimiterStore, {
  /**
   * Runs `f` in a (relaxed) transaction that holds the account's limiter row, with the row, the
   * limiter time and the transaction's `exec` for its own statements; writes back the row `f`
   * returns when it differs. Other processes deciding for the same account wait; other accounts do not.
   */
  readonly locked: <A, E, R>(
    accountId: string,
    f: (row: LimiterRow, nowMs: number, exec: Exec) => Effect.Effect<readonly [A, LimiterRow], E, R>
  ) => Effect.Effect<A, E | SqlError.SqlError, R>
  /**
   * As `locked`, for a row of the sign-in throttle (the same limiter, keyed by what is throttled,
   * e.g. an e-mail address or a client address, instead of an account).
   */
  readonly throttled: <A, E, R>(
    key: string,
    f: (row: LimiterRow, nowMs: number, exec: Exec) => Effect.Effect<readonly [A, LimiterRow], E, R>
  ) => Effect.Effect<A, E | SqlError.SqlError, R>
  /** The account's row without a lock (for reports), with the limiter time. */
  readonly peek: (accountId: string) => Effect.Effect<{ readonly row: LimiterRow; readonly nowMs: number }, SqlError.SqlError>
  /** The limiter time now. */
  readonly now: Effect.Effect<number, SqlError.SqlError>
}>()("hcc/LimiterStore") {
  /** Over the limiter's client (Database.LimiterSql). */
  static readonly layer = Layer.effect(
    LimiterStore,
    Effect.gen(function*() {
      const sql = yield* LimiterSql
      const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })

      // SQLite: the steady clock, anchored once per boot for every process on the machine.
      const monotonic = yield* Monotonic
      let offset = (yield* Clock.currentTimeMillis) - monotonic()
      const bootId = yield* BootId
      if (!isPg && bootId !== undefined) {
        yield* sql`INSERT INTO clock_anchors (boot_id, offset_ms) VALUES (${bootId}, ${offset}) ON CONFLICT (boot_id) DO NOTHING`
        const [anchor] = yield* sql<{ readonly offset_ms: number }>`SELECT offset_ms FROM clock_anchors WHERE boot_id = ${bootId}`
        if (anchor !== undefined) offset = anchor.offset_ms
        yield* sql`DELETE FROM clock_anchors WHERE boot_id <> ${bootId}`
      }
      const steadyNow = Effect.sync(() => offset + monotonic())

      const empty: LimiterRow = { burst: "", clockMs: 0, day: "" }
      /** An account's row (`limiter_state`) or a throttle's (`throttle_state`). */
      type Rows = { readonly table: "limiter_state"; readonly key: "account_id" } | { readonly table: "throttle_state"; readonly key: "key" }
      const ACCOUNTS: Rows = { table: "limiter_state", key: "account_id" }
      const THROTTLES: Rows = { table: "throttle_state", key: "key" }
      const select = (rows: Rows, id: string, lock: boolean) => {
        const table = sql(rows.table)
        const key = sql(rows.key)
        return isPg
          ? lock
            ? sql<StoredRow>`SELECT burst, clock_ms, day, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::float8 AS now_ms
                FROM ${table} WHERE ${key} = ${id} FOR UPDATE`
            : sql<StoredRow>`SELECT burst, clock_ms, day, (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::float8 AS now_ms
                FROM ${table} WHERE ${key} = ${id}`
          : sql<StoredRow>`SELECT burst, clock_ms, day, NULL AS now_ms FROM ${table} WHERE ${key} = ${id}`
      }
      const now: Effect.Effect<number, SqlError.SqlError> = isPg
        ? Effect.map(sql<{ readonly now_ms: number }>`SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::float8 AS now_ms`, (r) => r[0]!.now_ms)
        : steadyNow
      const timeOf = (stored: StoredRow | undefined) => stored?.now_ms != null ? Effect.succeed(stored.now_ms) : now
      const rowOf = (stored: StoredRow | undefined): LimiterRow =>
        stored === undefined ? empty : { burst: stored.burst, clockMs: stored.clock_ms, day: stored.day }

      const lockedRow = (rows: Rows) => <A, E, R>(id: string, f: (row: LimiterRow, nowMs: number, exec: Exec) => Effect.Effect<readonly [A, LimiterRow], E, R>) =>
        transaction(sql, "relaxed", (exec) =>
          Effect.gen(function*() {
            const table = sql(rows.table)
            const key = sql(rows.key)
            let [stored] = yield* exec(select(rows, id, true))
            if (stored === undefined) {
              yield* exec(sql`INSERT INTO ${table} (${key}, burst, clock_ms, day) VALUES (${id}, '', 0, '')
                ON CONFLICT (${key}) DO NOTHING`)
              ;[stored] = yield* exec(select(rows, id, true))
            }
            const row = rowOf(stored)
            const [result, next] = yield* f(row, yield* timeOf(stored), exec)
            if (next.burst !== row.burst || next.clockMs !== row.clockMs || next.day !== row.day) {
              yield* exec(sql`UPDATE ${table} SET burst = ${next.burst}, clock_ms = ${next.clockMs}, day = ${next.day}
                WHERE ${key} = ${id}`)
            }
            return result
          }))
      const locked = lockedRow(ACCOUNTS)
      const throttled = lockedRow(THROTTLES)

      const peek = (accountId: string) =>
        Effect.gen(function*() {
          const [stored] = yield* select(ACCOUNTS, accountId, false)
          return { row: rowOf(stored), nowMs: yield* timeOf(stored) }
        })

      return LimiterStore.of({ locked, throttled, peek, now })
    })
  )
}
