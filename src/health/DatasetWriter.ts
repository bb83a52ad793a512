/**
 * Replaces the health dataset in the database: the one writer behind `hcc data generate`, `hcc data
 * import` and the first start. Rows go in through Database.insertRows: multi-row INSERTs on SQLite,
 * column arrays through unnest() on PostgreSQL.
 *
 * Two modes. `atomic` (import): one transaction, so a failure leaves the old dataset untouched.
 * Chunked (generation): one transaction per chunk, so a running server's own writes (the usage
 * ledger) never wait long; `dataset_info` is written last, and a dataset without its `as_of` row is
 * treated as absent (incomplete) by the loader, so an interrupted generation is never served.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomUUID } from "node:crypto"
import { type BulkColumnKind, clearTables, insertRows, withForeignKeysAfter } from "../db/Database.ts"
import type { Rows } from "./generator.ts"
import { HEALTH_TABLE_NAMES, tableSpec } from "./healthTables.ts"

/** A piece of the dataset and the share of the work done once it is written (0–1). */
export interface Chunk {
  readonly rows: Rows
  readonly done: number
}

/** How a column is passed in bulk. */
const bulkKind = (type: string): BulkColumnKind => (type === "int" ? "integer" : type === "real" ? "real" : "text")

/** Inserts one chunk, tables in dependency order. */
const insertChunk = (sql: SqlClient.SqlClient, rows: Rows) =>
  Effect.forEach(HEALTH_TABLE_NAMES, (name) => {
    const list = rows[name]
    if (list === undefined || list.length === 0) return Effect.void
    return insertRows(sql, name, tableSpec(name).columns.map((c) => ({ name: c.name, kind: bulkKind(c.type) })), list)
  }, { discard: true })

/**
 * Deletes every row of the health tables and renews the dataset's stamp, so a snapshot of the old
 * dataset's columns (src/health/snapshot.ts) is never read for the new one.
 */
const clear = (sql: SqlClient.SqlClient) =>
  Effect.andThen(
    clearTables(sql, HEALTH_TABLE_NAMES),
    Effect.andThen(sql`DELETE FROM dataset_stamp`, sql`INSERT INTO dataset_stamp (id) VALUES (${randomUUID()})`)
  )

/** Options of a write. */
export interface WriteOptions {
  /** One transaction for everything (import) or one per chunk (generation). */
  readonly atomic: boolean
  /** Called after each chunk with the share done (in chunked mode, after the chunk's commit). */
  readonly onProgress?: (done: number) => Effect.Effect<void>
}

/**
 * Replaces the dataset with the chunks' rows. Chunks come from a lazy iterable, so a generated
 * population never sits in memory whole. In chunked mode, `dataset_info` rows must come in the
 * last chunk.
 */
export const replaceDataset = (chunks: Iterable<Chunk>, options: WriteOptions) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const progress = options.onProgress ?? (() => Effect.void)
    const each = (chunk: Chunk) => Effect.andThen(insertChunk(sql, chunk.rows), progress(chunk.done))
    if (options.atomic) {
      yield* sql.withTransaction(withForeignKeysAfter(sql, HEALTH_TABLE_NAMES, Effect.andThen(clear(sql), Effect.forEach(chunks, each, { discard: true }))))
    } else {
      yield* sql.withTransaction(clear(sql))
      // Progress runs after each commit: it may touch the database on another connection (the
      // generation lease), which must not wait for this one's write lock.
      yield* withForeignKeysAfter(
        sql,
        HEALTH_TABLE_NAMES,
        Effect.forEach(chunks, (chunk) => Effect.andThen(sql.withTransaction(insertChunk(sql, chunk.rows)), progress(chunk.done)), { discard: true })
      )
    }
  })

/** True when the database holds a complete dataset (its `as_of` row is written last). */
export const hasDataset = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM dataset_info WHERE key = 'as_of'`
  return (rows[0]?.n ?? 0) > 0
})
