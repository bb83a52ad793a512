/**
 * The usage ledger: one row per charged call, durable before the response is sent.
 *
 * Concurrent requests add their rows to the open batch (Coalescer.ts); one fiber writes it in a
 * single transaction (ledger rows plus the per-day totals), then releases every waiting request.
 * Group commit keeps one fsync per commit while its cost is shared by every request in the batch,
 * and that fsync runs off the event loop (Database.transaction, durable): on SQLite the batch commits
 * relaxed and the write-ahead log is then flushed by an asynchronous fdatasync, so the requests wait
 * for the disk and the event loop does not. The same transaction deletes the daily
 * reservations the rows confirm, so a unit is counted either as reserved or as used, never both
 * and never neither — and marks the calls' idempotency keys done with their answers.
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import { transaction } from "../db/Database.ts"
import { recordLedgerCommit } from "../observability/Metrics.ts"
import * as Coalescer from "./Coalescer.ts"

/** One charged call. */
export interface LedgerEntry {
  readonly accountId: string
  readonly tokenId: string
  readonly endpoint: string
  readonly hccCost: number
  readonly status: number
  readonly requestId: string
  /** UTC day `YYYY-MM-DD` the call counts against. */
  readonly day: string
  /** ISO-8601 time of the call. */
  readonly at: string
  /** The daily reservation this row confirms (none for accounts without a daily cap). */
  readonly reservationId: string | undefined
  /** The call's Idempotency-Key and answer: stored as done in the same transaction, so a charge and its stored answer never part. */
  readonly idempotency?: { readonly key: string; readonly status: number; readonly body: string } | undefined
}

/** Most rows written in one transaction. */
const MAX_BATCH = 512

/** Appends ledger rows durably. */
export class Ledger extends Context.Service<Ledger, {
  /** Resolves once the row (and its day total) is committed. */
  readonly append: (entry: LedgerEntry) => Effect.Effect<void, SqlError.SqlError>
}>()("hcc/Ledger") {
  /** SQL ledger whose group commits run as fibers of the layer's scope. */
  static readonly layer = Layer.effect(
    Ledger,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const writeBatch = (batch: ReadonlyArray<LedgerEntry>) => {
        const totals = new Map<string, { accountId: string; day: string; queries: number; cost: number }>()
        for (const entry of batch) {
          const key = `${entry.accountId}\u0000${entry.day}`
          const t = totals.get(key)
          if (t === undefined) totals.set(key, { accountId: entry.accountId, day: entry.day, queries: 1, cost: entry.hccCost })
          else {
            t.queries++
            t.cost += entry.hccCost
          }
        }
        const rows: Array<Record<string, unknown>> = batch.map((entry) => ({
          account_id: entry.accountId,
          token_id: entry.tokenId,
          endpoint: entry.endpoint,
          hcc_cost: entry.hccCost,
          status: entry.status,
          request_id: entry.requestId,
          day: entry.day,
          at: entry.at
        }))
        if (!Arr.isReadonlyArrayNonEmpty(rows)) return Effect.void
        const reservations = batch.flatMap((entry) => (entry.reservationId === undefined ? [] : [entry.reservationId]))
        return transaction(sql, "durable", (exec) =>
          Effect.gen(function*() {
            yield* exec(sql`INSERT INTO usage_ledger ${sql.insert(rows)}`)
            for (const t of totals.values()) {
              yield* exec(sql`INSERT INTO usage_daily (account_id, day, queries, hcc_cost)
                VALUES (${t.accountId}, ${t.day}, ${t.queries}, ${t.cost})
                ON CONFLICT (account_id, day) DO UPDATE SET
                  queries = usage_daily.queries + excluded.queries,
                  hcc_cost = usage_daily.hcc_cost + excluded.hcc_cost`)
            }
            if (reservations.length > 0) yield* exec(sql`DELETE FROM usage_reservations WHERE ${sql.in("id", reservations)}`)
            for (const entry of batch) {
              if (entry.idempotency === undefined) continue
              yield* exec(sql`UPDATE idempotency_keys SET state = 'done', status = ${entry.idempotency.status}, body = ${entry.idempotency.body}
                WHERE account_id = ${entry.accountId} AND idem_key = ${entry.idempotency.key}`)
            }
          }))
      }

      // Group commit: while one batch commits, the rows that arrive wait and go together in the next.
      const commit = Coalescer.make(yield* Effect.scope, (_: string, batch: ReadonlyArray<LedgerEntry>) => {
        const started = performance.now()
        return writeBatch(batch).pipe(
          Effect.tap(() => Effect.sync(() => recordLedgerCommit((performance.now() - started) / 1000, batch.length))),
          Effect.as(batch)
        )
      }, { maxBatch: MAX_BATCH })

      const append = (entry: LedgerEntry) => Effect.asVoid(commit("ledger", entry))

      return Ledger.of({ append })
    })
  )
}
