/**
 * The state database: embedded SQLite in `$HCC_DATA_DIR/hcc.db` by default, PostgreSQL when
 * `DATABASE_URL` is set; migrated once whichever process gets there first. Everything that differs
 * between the two engines is in this folder: the rest of the service writes portable SQL.
 */
import { Context, Effect, Layer, Option } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, type SqlError } from "effect/sql"
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

/**
 * Runs `effect`'s transactions without waiting for their commit to reach the disk: for state that is
 * cheap to lose on a power cut (the burst window, reservations). SQLite drops to `synchronous =
 * NORMAL` for them; PostgreSQL commits as configured (its group commit already shares the flush).
 */
export const relaxed = <A, E, R>(sql: SqlClient.SqlClient, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  sql.onDialectOrElse({
    sqlite: () => Effect.provideService(effect, SqlClient.BeginTransaction, SqliteClient.BEGIN_RELAXED),
    orElse: () => effect
  })

/**
 * The text of a multi-row INSERT with `rows` rows of `columns`, in the engine's placeholder syntax
 * (`?` or `$n`). Used with `sql.unsafe` and a flat parameter list, so the text is prepared once and
 * reused for every full batch.
 */
export const insertRowsText = (sql: SqlClient.SqlClient, table: string, columns: ReadonlyArray<string>, rows: number): string => {
  const tuples: Array<string> = []
  for (let r = 0; r < rows; r++) tuples.push(`(${placeholders(sql, columns.length, r * columns.length + 1)})`)
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${tuples.join(", ")}`
}

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

/** Most bound parameters one statement may carry on either engine (SQLite 32,766; PostgreSQL 65,535). */
export const MAX_PARAMS = 32_000
