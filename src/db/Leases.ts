/**
 * Named leases in the database: at most one process holds a lease until it releases it or its
 * expiry passes (a holder that dies frees it by expiring). Times are the limiter clock, which all
 * processes sharing the database agree on. Used so that one process generates the default dataset
 * while the others wait for it.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { LimiterStore } from "./LimiterStore.ts"

/** Takes (or renews) lease `name` for `owner` for `ttlMs`; true when `owner` holds it afterwards. */
export const acquire = (name: string, owner: string, ttlMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const nowMs = yield* (yield* LimiterStore).now
    yield* sql`INSERT INTO leases (name, owner, expires_ms) VALUES (${name}, ${owner}, ${nowMs + ttlMs})
      ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_ms = excluded.expires_ms
      WHERE leases.expires_ms < ${nowMs} OR leases.owner = excluded.owner`
    const rows = yield* sql<{ readonly owner: string }>`SELECT owner FROM leases WHERE name = ${name}`
    return rows[0]?.owner === owner
  })

/** Gives lease `name` back if `owner` holds it. */
export const release = (name: string, owner: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.asVoid(sql`DELETE FROM leases WHERE name = ${name} AND owner = ${owner}`))

/**
 * Runs `effect` in a transaction that no other process runs at the same time for the same `key`:
 * a short critical section (PostgreSQL's transaction-scoped advisory lock; on SQLite `BEGIN
 * IMMEDIATE` already excludes every other writer).
 */
export const exclusively = <A, E, R>(key: number, effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      sql.onDialectOrElse({
        pg: () => Effect.andThen(sql`SELECT pg_advisory_xact_lock(${key})`, effect),
        orElse: () => effect
      })
    ))
