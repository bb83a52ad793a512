/**
 * Named leases in the database: at most one process holds a lease until it releases it or its
 * expiry passes (a holder that dies frees it by expiring, or at once for a process on the same
 * machine: see {@link acquire}). Times are the database's clock on PostgreSQL (processes on
 * several machines share it) and this machine's on SQLite (whose processes share the machine).
 * Used so that one process generates the default dataset while the others wait for it, and so
 * that one process at a time writes the dataset.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"

/** A new owner's name: its machine and process, so a lease whose holder died can be told from one held. */
export const newOwner = (): string => `${hostname()}/${process.pid}/${randomUUID()}`

/** True when `owner` names a process on this machine that no longer runs. */
const diedHere = (owner: string): boolean => {
  const [host, pid] = owner.split("/")
  if (host !== hostname() || pid === undefined || !/^[0-9]+$/.test(pid) || Number(pid) === process.pid) return false
  try {
    process.kill(Number(pid), 0)
    return false
  } catch (e) {
    // EPERM: it runs, as another user.
    return (e as NodeJS.ErrnoException).code === "ESRCH"
  }
}

/** The leases' clock, in milliseconds. */
const now = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql.onDialectOrElse({
    pg: () => Effect.map(sql<{ readonly now_ms: number }>`SELECT (EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::float8 AS now_ms`, (r) => r[0]!.now_ms),
    orElse: () => Clock.currentTimeMillis
  }))

/**
 * Takes (or renews) lease `name` for `owner` (from {@link newOwner}) for `ttlMs`; true when
 * `owner` holds it afterwards. A lease held by a process of this machine that no longer runs
 * (killed) is taken over without waiting for its expiry.
 */
export const acquire = (name: string, owner: string, ttlMs: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const take = Effect.gen(function*() {
      const nowMs = yield* now
      yield* sql`INSERT INTO leases (name, owner, expires_ms) VALUES (${name}, ${owner}, ${nowMs + ttlMs})
        ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_ms = excluded.expires_ms
        WHERE leases.expires_ms < ${nowMs} OR leases.owner = excluded.owner`
      const rows = yield* sql<{ readonly owner: string }>`SELECT owner FROM leases WHERE name = ${name}`
      return rows[0]?.owner
    })
    const holder = yield* take
    if (holder === owner) return true
    if (holder === undefined || !diedHere(holder)) return false
    yield* sql`DELETE FROM leases WHERE name = ${name} AND owner = ${holder}`
    return (yield* take) === owner
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
