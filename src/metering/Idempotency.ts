/**
 * Idempotency keys (Stripe's semantics; docs/api.md, "Retrying safely"): a POST sent with an
 * `Idempotency-Key` is answered once. The first request with a key claims it (state `running`, with
 * a lease); its successful answer is stored by the ledger's transaction that charges it, so a charge
 * and its stored answer never part. A retry with the same key and the same request within 24 h gets
 * the stored answer uncharged; with a different request, 422; while the first still runs, 409. A
 * failed first request gives its key back (errors are never charged, so a retry simply runs again),
 * and a claim whose process died is taken over once its lease has passed.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import { relaxedStatement, transaction } from "../db/Database.ts"

/** How long a key and its answer are kept. */
export const KEY_TTL_MS = 24 * 3_600_000
/** How long a running claim holds its key before another request may take it over (its process died). */
export const LEASE_MS = 60_000
/** What a key may be: 1–255 visible ASCII characters. */
export const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/

/** The outcome of claiming a key. */
export type Claim =
  | { readonly _tag: "New" }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: string }
  | { readonly _tag: "InUse" }
  | { readonly _tag: "Reused" }

interface Row {
  readonly fingerprint: string
  readonly state: string
  readonly lease_ms: number
  readonly status: number | null
  readonly body: string | null
}

export class Idempotency extends Context.Service<Idempotency, {
  /** Claims `key` for a request with this fingerprint, or says what became of an earlier claim. */
  readonly claim: (accountId: string, key: string, fingerprint: string) => Effect.Effect<Claim, SqlError.SqlError>
  /** Gives a running claim back (the request failed before it was charged). */
  readonly release: (accountId: string, key: string) => Effect.Effect<void>
}>()("hcc/Idempotency") {
  static readonly layer = Layer.effect(
    Idempotency,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const forUpdate = sql.literal(sql.onDialectOrElse({ pg: () => "FOR UPDATE", orElse: () => "" }))
      const now = Effect.clockWith((c) => c.currentTimeMillis)

      // A claim commits relaxed (no fsync inside SQLite's synchronous call, which would hold the
      // event loop): the ledger's durable commit that charges the call flushes the write-ahead log,
      // claim included, before the answer leaves; a claim lost to a crash before that charged
      // nothing and stored nothing, so a retry simply runs again.
      const claim = (accountId: string, key: string, fingerprint: string) =>
        transaction(sql, "relaxed", (exec) => Effect.gen(function*() {
          const nowMs = yield* now
          yield* exec(sql`DELETE FROM idempotency_keys WHERE account_id = ${accountId} AND idem_key = ${key} AND created_ms < ${nowMs - KEY_TTL_MS}`)
          const inserted = yield* exec(sql`INSERT INTO idempotency_keys (account_id, idem_key, fingerprint, state, lease_ms, created_ms)
            VALUES (${accountId}, ${key}, ${fingerprint}, 'running', ${nowMs + LEASE_MS}, ${nowMs})
            ON CONFLICT (account_id, idem_key) DO NOTHING RETURNING idem_key`)
          if (inserted.length > 0) return { _tag: "New" } as Claim
          const rows = yield* exec(sql<Row>`SELECT fingerprint, state, lease_ms, status, body FROM idempotency_keys
            WHERE account_id = ${accountId} AND idem_key = ${key} ${forUpdate}`)
          const row = rows[0]
          if (row === undefined) return { _tag: "InUse" } as Claim // deleted between the statements: retry
          if (row.fingerprint !== fingerprint) return { _tag: "Reused" } as Claim
          if (row.state === "done") return { _tag: "Replay", status: Number(row.status), body: row.body ?? "" } as Claim
          if (Number(row.lease_ms) > nowMs) return { _tag: "InUse" } as Claim
          yield* exec(sql`UPDATE idempotency_keys SET lease_ms = ${nowMs + LEASE_MS} WHERE account_id = ${accountId} AND idem_key = ${key}`)
          return { _tag: "New" } as Claim
        }))

      const release = (accountId: string, key: string) =>
        relaxedStatement(sql, sql`DELETE FROM idempotency_keys WHERE account_id = ${accountId} AND idem_key = ${key} AND state = 'running'`).pipe(
          // Left in place, the claim lapses with its lease.
          Effect.catch((e) => Effect.logWarning("could not release an idempotency key", e)),
          Effect.asVoid
        )

      // Keys older than a day are forgotten; delete them now and then so the table stays small.
      yield* Effect.forkScoped(
        Effect.gen(function*() {
          yield* Effect.sleep("1 minute")
          const nowMs = yield* now
          yield* sql`DELETE FROM idempotency_keys WHERE created_ms < ${nowMs - KEY_TTL_MS}`
        }).pipe(Effect.catch((e) => Effect.logWarning("could not sweep expired idempotency keys", e)), Effect.forever)
      )

      return Idempotency.of({ claim, release })
    })
  )
}
