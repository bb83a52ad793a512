/**
 * The state database: embedded SQLite in `$HCC_DATA_DIR/hcc.db` by default, PostgreSQL when
 * `DATABASE_URL` is set; migrated once whichever process gets there first. Everything that differs
 * between the two engines is in this folder: the rest of the service writes portable SQL.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import type * as Statement from "effect/sql/Statement"
import { PgTypes } from "@effect/sql-pg"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "../config/AppConfig.ts"
import { runMigrations } from "./migrations.ts"
import * as PgClient from "./PgClient.ts"
import * as SqliteClient from "./SqliteClient.ts"

/** File name of the embedded database inside the data folder. */
export const DATABASE_FILE = "hcc.db"

/** Key of the PostgreSQL advisory lock that serialises migrations across replicas. */
const MIGRATION_LOCK = 4_242_001

/** Which engine a configuration selects, and where it is (never the password). */
export const describe = (config: AppConfig["Service"]): { readonly engine: "sqlite" | "postgres"; readonly location: string } => {
  if (Option.isNone(config.databaseUrl)) return { engine: "sqlite", location: join(config.dataDir, DATABASE_FILE) }
  const url = new URL(config.databaseUrl.value)
  return { engine: "postgres", location: `${url.hostname}:${url.port || "5432"}${url.pathname}` }
}

/**
 * Applies pending migrations. On PostgreSQL they run under a transaction-scoped advisory lock, so
 * replicas started together wait for the first instead of racing to create the same tables.
 */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.onDialectOrElse({
    pg: () => sql.withTransaction(Effect.andThen(sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`, runMigrations)),
    orElse: () => runMigrations
  })
})

/** The configured engine's client, without migrations. */
export const clientLayer: Layer.Layer<SqlClient.SqlClient, unknown, AppConfig> = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) {
      return PgClient.layer({ url: config.databaseUrl.value, maxConnections: config.pgPoolSize })
    }
    yield* Effect.try(() => mkdirSync(config.dataDir, { recursive: true, mode: 0o700 }))
    return SqliteClient.layer({ filename: join(config.dataDir, DATABASE_FILE) })
  })
)

/** SqlClient for the configured database, migrated. */
export const layer: Layer.Layer<SqlClient.SqlClient, unknown, AppConfig> = Layer.effectDiscard(migrate).pipe(
  Layer.provideMerge(clientLayer)
)

/**
 * A client for bulk writes that must not hold up the server's own statements: on SQLite a second
 * connection to the file (without per-commit fsync: a half-written dataset is never served, see
 * DatasetWriter), on PostgreSQL the pool itself.
 */
export const bulkWriter = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const sql = yield* SqlClient.SqlClient
    return yield* sql.onDialectOrElse({
      sqlite: () =>
        effect.pipe(Effect.provide(SqliteClient.layer({ filename: join(config.dataDir, DATABASE_FILE), synchronous: "NORMAL" }))),
      orElse: () => effect
    })
  })

/**
 * The client for the limiter's own writes (burst windows, reservations): commits that need not
 * wait for the disk. SQLite: the service's client (its transactions run relaxed, see
 * {@link relaxed}); PostgreSQL: a small second pool with `synchronous_commit = off`, so a burst
 * decision does not wait for a WAL flush (a crash of the database server can forget the last
 * fraction of a second of them; the ledger, on the main pool, stays fully durable).
 */
export class LimiterSql extends Context.Service<LimiterSql, SqlClient.SqlClient>()("hcc/LimiterSql") {
  /** Over the configured engine. */
  static readonly layer: Layer.Layer<LimiterSql, SqlError.SqlError, AppConfig | SqlClient.SqlClient> = Layer.unwrap(
    Effect.gen(function*() {
      const config = yield* AppConfig
      if (Option.isNone(config.databaseUrl)) return Layer.effect(LimiterSql, SqlClient.SqlClient)
      const url = config.databaseUrl.value
      return Layer.effect(LimiterSql, PgClient.make({ url, maxConnections: Math.max(2, Math.ceil(config.pgPoolSize / 2)), durable: false })).pipe(
        Layer.provide(Reactivity.layer)
      )
    })
  )
}

/** Runs one statement of a {@link transaction} and gives its rows. */
export type Exec = SqliteClient.Exec

/** A statement run on its own, as {@link Exec} runs one inside a transaction (for code that does both). */
export const execAlone: Exec = (statement) => statement

/**
 * How a {@link transaction}'s commit reaches the disk:
 * - `relaxed`: need not, for state that is cheap to lose on a power cut (burst windows, daily
 *   reservations, idempotency claims, last-use times). SQLite commits it with `synchronous =
 *   NORMAL` (no fsync inside the synchronous call, which would hold the event loop); PostgreSQL as
 *   configured (its group commit already shares the flush; the limiter's own pool does not wait for it).
 * - `durable`: on the disk when the transaction resolves, without the event loop waiting for the
 *   disk (the ledger's: a charge is durable before its answer is sent). SQLite commits relaxed, then
 *   flushes the write-ahead log asynchronously ({@link SqliteClient.flushWal}); PostgreSQL's driver
 *   never blocks, and its commits wait for the server's WAL flush.
 */
export type Durability = "relaxed" | "durable"

/**
 * One transaction of the service's hot paths (the limiter, the ledger, idempotency claims), whose
 * statements `body` runs through `exec`. On this service's SQLite client, a direct transaction on
 * the connection ({@link SqliteClient.directTransaction}: about a third of effect/sql's CPU per
 * transaction and a tenth of its allocation); elsewhere effect/sql's `withTransaction`.
 */
export const transaction = <A, E, R>(
  sql: SqlClient.SqlClient,
  durability: Durability,
  body: (exec: Exec) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | SqlError.SqlError, R> => {
  const direct = SqliteClient.directTransaction(sql)
  if (direct === undefined) return sql.withTransaction(body(execAlone))
  return durability === "relaxed" ? direct(body) : Effect.tap(direct(body), () => SqliteClient.flushWal(sql))
}

/**
 * One statement that need not wait for the disk: on SQLite a relaxed transaction of its own (an
 * autocommit statement would fsync), elsewhere the statement alone (one round trip; the limiter's
 * PostgreSQL pool commits without waiting for the flush anyway).
 */
export const relaxedStatement = <A extends object>(sql: SqlClient.SqlClient, statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError.SqlError> =>
  SqliteClient.directTransaction(sql) === undefined ? statement : transaction(sql, "relaxed", (exec) => exec(statement))

/** What a bulk-inserted column holds (picks PostgreSQL's array type for it). */
export type BulkColumnKind = "integer" | "real" | "text"

/** Bound parameters per multi-row INSERT on SQLite (it allows 32,766; larger is no faster). */
const SQLITE_PARAMS_PER_STATEMENT = 4000
/** Rows per unnest() INSERT on PostgreSQL (keeps one Bind message a few MiB). */
const PG_ROWS_PER_STATEMENT = 20_000
const PG_ARRAY: Readonly<Record<BulkColumnKind, string>> = { integer: "int8[]", real: "float8[]", text: "text[]" }
const PG_ELEMENT: Readonly<Record<BulkColumnKind, number>> = { integer: PgTypes.OID.int8, real: PgTypes.OID.float8, text: PgTypes.OID.text }

/** A column of values as a typed PostgreSQL array parameter (not inferred from the first element: 5 then 6.2 is a float8 array). */
const pgArray = (values: ReadonlyArray<unknown>, kind: BulkColumnKind) =>
  Effect.mapError(
    Effect.fromResult(PgTypes.array(values, PG_ELEMENT[kind])),
    (e) => new SqlError.SqlError({ reason: new SqlError.UnknownError({ cause: e, message: e.message, operation: "encode" }) })
  )

/** The text of a multi-row INSERT of `rows` rows with `?` placeholders. */
const sqliteInsertText = (table: string, columns: ReadonlyArray<string>, rows: number): string => {
  const tuple = `(${columns.map(() => "?").join(", ")})`
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${Array.from({ length: rows }, () => tuple).join(", ")}`
}

/**
 * Inserts many rows fast on either engine. SQLite: multi-row INSERTs of prepared (cached)
 * statements. PostgreSQL: one parameter per column — `INSERT … SELECT * FROM unnest($1::int8[],
 * $2::text[], …)` — so a statement carries 20,000 rows in a handful of parameters instead of one
 * parameter per value (about three times faster than multi-row INSERTs).
 */
export const insertRows = (
  sql: SqlClient.SqlClient,
  table: string,
  columns: ReadonlyArray<{ readonly name: string; readonly kind: BulkColumnKind }>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>
): Effect.Effect<void, SqlError.SqlError> =>
  sql.onDialectOrElse({
    pg: () => {
      const text = `INSERT INTO ${table} (${columns.map((c) => c.name).join(", ")}) SELECT * FROM unnest(${
        columns.map((c, i) => `$${i + 1}::${PG_ARRAY[c.kind]}`).join(", ")
      })`
      return Effect.forEach(
        Array.from({ length: Math.ceil(rows.length / PG_ROWS_PER_STATEMENT) }, (_, b) => rows.slice(b * PG_ROWS_PER_STATEMENT, (b + 1) * PG_ROWS_PER_STATEMENT)),
        (batch) =>
          Effect.flatMap(
            Effect.forEach(columns, (column, c) => pgArray(batch.map((row) => row[c] ?? null), column.kind)),
            (params) => sql.unsafe(text, params)
          ),
        { discard: true }
      )
    },
    orElse: () => {
      const names = columns.map((c) => c.name)
      const perStatement = Math.max(1, Math.floor(SQLITE_PARAMS_PER_STATEMENT / names.length))
      const full = sqliteInsertText(table, names, perStatement)
      return Effect.forEach(
        Array.from({ length: Math.ceil(rows.length / perStatement) }, (_, b) => rows.slice(b * perStatement, (b + 1) * perStatement)),
        (batch) => {
          const params: Array<unknown> = []
          for (const row of batch) for (const v of row) params.push(v)
          return sql.unsafe(batch.length === perStatement ? full : sqliteInsertText(table, names, batch.length), params)
        },
        { discard: true }
      )
    }
  })

/** `n` placeholders from the `start`-th, in the engine's syntax, comma-separated. */
export const placeholders = (sql: SqlClient.SqlClient, n: number, start = 1): string => {
  const numbered = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  return Array.from({ length: n }, (_, i) => (numbered ? `$${start + i}` : "?")).join(", ")
}

/**
 * A text column compared and sorted by code point, as SQLite does by default: PostgreSQL would
 * otherwise use the database's collation (where `a_b` may sort after `ab`), and the same data
 * must come out in the same order from both engines.
 */
export const byCodePoint = (sql: SqlClient.SqlClient, column: string): string =>
  sql.onDialectOrElse({ pg: () => `${column} COLLATE "C"`, orElse: () => column })

