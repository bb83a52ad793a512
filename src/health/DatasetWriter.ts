/**
 * Replaces the health dataset in the database: the one writer behind `hcc data generate`, `hcc data
 * import` and the first start. The database holds two sets of the health tables (`<table>_a`,
 * `<table>_b`, migration 9) and every reader reads `<table>`, a view of the active set. A writer
 * fills the other set in short transactions — a running server's own writes (the usage ledger)
 * never wait long for it, and the dataset being served stays whole in the database all along —
 * then points the views at it and renews the dataset's stamp in one short transaction. So a
 * failure or a `kill -9` at any point before that leaves the previous dataset as it was, and a
 * server (or a new process) never reads half of one. A write that fails or is stopped before the
 * switch empties the set it had begun before it gives the lease back, so the rows it wrote do not
 * stay in the database; only a `kill -9` leaves them, for the next write to empty first.
 *
 * Rows go in through Database.insertRows: multi-row INSERTs on SQLite, column arrays through
 * unnest() on PostgreSQL. One writer at a time: a lease in the database (`dataset-write`).
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as SqlClient from "effect/sql/SqlClient"
import { randomUUID } from "node:crypto"
import { type BulkColumnKind, insertRows } from "../db/Database.ts"
import * as Leases from "../db/Leases.ts"
import type { Rows } from "./healthTables.ts"
import { HEALTH_TABLE_NAMES, tableSpec } from "./healthTables.ts"

/** A piece of the dataset and the share of the work done once it is written (0–1). */
export interface Chunk {
  readonly rows: Rows
  readonly done: number
}

/** How a column is passed in bulk. */
const bulkKind = (type: string): BulkColumnKind => (type === "int" ? "integer" : type === "real" ? "real" : "text")

/** The other set's table of a health table. */
const inSet = (table: string, set: string) => `${table}_${set}`

/** Inserts one chunk into a set, tables in dependency order. */
const insertChunk = (sql: SqlClient.SqlClient, set: string, rows: Rows) =>
  Effect.forEach(HEALTH_TABLE_NAMES, (name) => {
    const list = rows[name]
    if (list === undefined || list.length === 0) return Effect.void
    return insertRows(sql, inSet(name, set), tableSpec(name).columns.map((c) => ({ name: c.name, kind: bulkKind(c.type) })), list)
  }, { discard: true })

/** Rows deleted per transaction when a set is emptied on SQLite. */
const DELETE_BATCH = 20_000

/**
 * Empties a set's tables, children first: PostgreSQL truncates them at once; SQLite deletes a
 * batch of rows per transaction, so no transaction holds the file for long.
 */
const emptySet = (sql: SqlClient.SqlClient, set: string) =>
  sql.onDialectOrElse({
    pg: () => Effect.asVoid(sql.unsafe(`TRUNCATE ${HEALTH_TABLE_NAMES.map((t) => inSet(t, set)).join(", ")}`)),
    orElse: () =>
      Effect.forEach([...HEALTH_TABLE_NAMES].reverse(), (t) =>
        Effect.gen(function*() {
          const table = inSet(t, set)
          for (;;) {
            const left = yield* sql.unsafe<{ readonly n: number }>(`SELECT COUNT(*) AS n FROM (SELECT 1 FROM ${table} LIMIT 1)`)
            if ((left[0]?.n ?? 0) === 0) return
            yield* sql.withTransaction(sql.unsafe(`DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} LIMIT ${DELETE_BATCH})`))
          }
        }), { discard: true })
  })

/** A foreign key of a health table on PostgreSQL. */
interface ForeignKey {
  readonly table_name: string
  readonly name: string
  readonly definition: string
}

/** The foreign keys of a set's tables (PostgreSQL). */
const foreignKeys = (sql: SqlClient.SqlClient, set: string) =>
  sql<ForeignKey>`SELECT c.conrelid::regclass::text AS table_name, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
    FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid::regclass::text IN ${sql.in(HEALTH_TABLE_NAMES.map((t) => inSet(t, set)))}`

/** Drops the foreign keys of a set's tables (PostgreSQL). */
const dropKeys = (sql: SqlClient.SqlClient, set: string) =>
  Effect.gen(function*() {
    for (const k of yield* foreignKeys(sql, set)) yield* sql.unsafe(`ALTER TABLE ${k.table_name} DROP CONSTRAINT ${k.name}`)
  })

/** Gives `target`'s tables the foreign keys `served`'s have, leading within `target` (PostgreSQL; `target` has none). */
const copyKeys = (sql: SqlClient.SqlClient, served: string, target: string) =>
  Effect.gen(function*() {
    const moved = new RegExp(`_${served}$`)
    for (const k of yield* foreignKeys(sql, served)) {
      const table = k.table_name.replace(moved, `_${target}`)
      const definition = k.definition.replace(new RegExp(`REFERENCES ([a-z_]+)_${served}\\b`), `REFERENCES $1_${target}`)
      yield* sql.unsafe(`ALTER TABLE ${table} ADD CONSTRAINT ${k.name.replace(/_[ab]$/, "")}_${target} ${definition}`)
    }
  })

/**
 * Loads a set with its foreign keys checked once at the end instead of per row. PostgreSQL checks
 * a foreign key with a trigger per inserted row, several times the cost of the insert itself, so
 * the set's keys are dropped for the load and made again after it as the served set has them,
 * which validates every row in one join: a load that broke one fails there, naming the key. The
 * keys are copied from the served set (which always has them: a set is only served once its keys
 * are back), so a writer killed mid-load leaves nothing for the next one to mend. SQLite's checks
 * are cheap and stay on.
 */
const withForeignKeysAfter = <A, E, R>(sql: SqlClient.SqlClient, target: string, served: string, load: Effect.Effect<A, E, R>) =>
  sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function*() {
        yield* dropKeys(sql, target)
        const result = yield* load
        yield* copyKeys(sql, served, target)
        return result
      }),
    orElse: () => load
  })

/** The set the views read. */
const activeSet = Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(sql`SELECT active FROM dataset_set`.values, (rows) => String(rows[0]?.[0] ?? "a")))

/** Points the views at `set` and renews the dataset's stamp (one transaction: readers see one dataset or the other). */
const activate = (sql: SqlClient.SqlClient, set: string) =>
  sql.withTransaction(Effect.gen(function*() {
    for (const t of HEALTH_TABLE_NAMES) {
      yield* sql.onDialectOrElse({
        pg: () => sql.unsafe(`CREATE OR REPLACE VIEW ${t} AS SELECT * FROM ${inSet(t, set)}`),
        orElse: () => Effect.andThen(sql.unsafe(`DROP VIEW ${t}`), sql.unsafe(`CREATE VIEW ${t} AS SELECT * FROM ${inSet(t, set)}`))
      })
    }
    yield* sql`UPDATE dataset_set SET active = ${set}`
    yield* sql`DELETE FROM dataset_stamp`
    yield* sql`INSERT INTO dataset_stamp (id) VALUES (${randomUUID()})`
  }))

/**
 * Empties a set at once, for a write that ends before its switch (the user waits on it): in one
 * transaction that first checks the set is not the served one. PostgreSQL truncates its tables
 * (their files go back to the system at commit) and gives them the served set's foreign keys again
 * (a load stopped half-way had dropped them). SQLite drops them children first, so no row is
 * deleted or checked one by one, and makes them again from their own DDL (far quicker than
 * emptySet's deletes, which the user would wait on). The file keeps its size — SQLite puts
 * a dropped table's pages on its free list (auto_vacuum is off), and the next write fills those
 * first; shrinking it takes a VACUUM, which rewrites the served dataset too.
 */
const clearSet = (sql: SqlClient.SqlClient, target: string, served: string) =>
  sql.withTransaction(Effect.gen(function*() {
    if ((yield* activeSet) !== served) return yield* Effect.fail(new Error(`set ${target} is the one in use`))
    const tables = HEALTH_TABLE_NAMES.map((t) => inSet(t, target))
    yield* sql.onDialectOrElse({
      pg: () => Effect.andThen(sql.unsafe(`TRUNCATE ${tables.join(", ")}`), Effect.andThen(dropKeys(sql, target), copyKeys(sql, served, target))),
      orElse: () =>
        Effect.gen(function*() {
          const schema = yield* sql<{ readonly type: string; readonly name: string; readonly sql: string }>`SELECT type, name, sql FROM sqlite_schema
            WHERE tbl_name IN ${sql.in(tables)} AND sql IS NOT NULL`
          for (const t of [...tables].reverse()) yield* sql.unsafe(`DROP TABLE ${t}`)
          for (const t of tables) for (const r of schema) if (r.type === "table" && r.name === t) yield* sql.unsafe(r.sql)
          for (const r of schema) if (r.type !== "table") yield* sql.unsafe(r.sql)
        })
    })
  }))

/** What a write that ended before its switch left in the set it had begun. */
export type Unfinished =
  /** The set was emptied; `wrote`: rows of the new dataset had been committed to it. */
  | { readonly wrote: boolean; readonly emptied: true }
  /** The set could not be emptied (`error` says why): it keeps what it holds until the next write empties it first. */
  | { readonly wrote: boolean; readonly emptied: false; readonly error: unknown }

/** Told, after its clean-up, what a write that ended before its switch left (the CLI's stop message says it). */
export const OnUnfinished = Context.Reference<(left: Unfinished) => Effect.Effect<void>>("hcc/health/OnUnfinished", { defaultValue: () => () => Effect.void })

/** The lease one writer of the dataset holds, renewed after every chunk. */
const WRITER_LEASE = "dataset-write"
/** How long it lasts unless renewed. */
const WRITER_LEASE_MS = 120_000

/** Another process is writing the dataset. */
export class DatasetBusy extends Error {
  constructor() {
    super("another process is writing the health dataset (an import or a generation); try again when it has finished")
  }
}

/** Takes (or renews) the writer's lease; fails with DatasetBusy when another process holds it. */
const holdLease = (owner: string) =>
  Effect.flatMap(Leases.acquire(WRITER_LEASE, owner, WRITER_LEASE_MS), (held) => (held ? Effect.void : Effect.fail(new DatasetBusy())))

/** Options of a write. */
export interface WriteOptions {
  /** Called after each chunk with the share done. */
  readonly onProgress?: (done: number) => Effect.Effect<void>
  /**
   * Runs right after the new dataset is in place, in one uninterruptible step with the switch:
   * what a command reports once it has replaced the dataset is never cut off by a stop signal.
   */
  readonly onSwitched?: Effect.Effect<void, never, never>
}

/**
 * Where a write's chunks come from: a synchronous source, an asynchronous one (the generator on its
 * own thread, generationThread.ts), or a producer that hands each chunk to `write` itself as it
 * reads (a streamed import; its failure fails the write).
 */
export type ChunkSource<E = never, R = never> =
  | Iterable<Chunk>
  | AsyncIterable<Chunk>
  | { readonly produce: <E2, R2>(write: (chunk: Chunk) => Effect.Effect<void, E2, R2>) => Effect.Effect<void, E | E2, R | R2> }

/** Runs `f` on each chunk in order; an asynchronous source is closed when the run ends early or fails. */
const eachChunk = <E, R, E0, R0>(chunks: ChunkSource<E0, R0>, f: (chunk: Chunk) => Effect.Effect<void, E, R>): Effect.Effect<void, E | E0, R | R0> => {
  if ("produce" in chunks) return chunks.produce(f)
  if (!(Symbol.asyncIterator in chunks)) return Effect.forEach(chunks, f, { discard: true })
  return Effect.suspend(() => {
    const it = chunks[Symbol.asyncIterator]()
    return Effect.gen(function*() {
      for (;;) {
        const next = yield* Effect.promise(() => it.next())
        if (next.done === true) return
        yield* f(next.value)
      }
    }).pipe(Effect.ensuring(Effect.promise(async () => {
      await it.return?.()
    })))
  })
}

/**
 * Replaces the dataset with the chunks' rows (see the module comment). Chunks come from a lazy
 * iterable (or one another thread fills), so a generated population never sits in memory whole.
 */
export const replaceDataset = <E0 = never, R0 = never>(chunks: ChunkSource<E0, R0>, options: WriteOptions = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const owner = Leases.newOwner()
    const progress = options.onProgress ?? (() => Effect.void)
    yield* holdLease(owner)
    yield* Effect.gen(function*() {
      const served = yield* activeSet
      const target = served === "a" ? "b" : "a"
      let wrote = false
      let switched = false
      const committed = Effect.sync(() => (wrote = true))
      // Emptied while the lease is still ours (renewed first: a lease that was lost may now be
      // another writer's, and the set with it), and never once the switch has made it the served set.
      const clearUp = () =>
        Effect.andThen(holdLease(owner), clearSet(sql, target, served)).pipe(
          Effect.as<Unfinished>({ wrote, emptied: true }),
          Effect.catchCause((cause) =>
            Effect.as(
              Effect.logWarning("the set a write had begun was not emptied; the next write empties it first", cause).pipe(Effect.annotateLogs({ set: target })),
              { wrote, emptied: false, error: Cause.squash(cause) } satisfies Unfinished
            )),
          Effect.flatMap((left) => Effect.flatMap(Effect.service(OnUnfinished), (report) => report(left)))
        )
      yield* Effect.gen(function*() {
        yield* emptySet(sql, target)
        // Progress runs after each commit: it may touch the database on another connection (the
        // generation lease), which must not wait for this one's write lock.
        yield* withForeignKeysAfter(
          sql,
          target,
          served,
          eachChunk(chunks, (chunk) => Effect.andThen(sql.withTransaction(insertChunk(sql, target, chunk.rows)), Effect.andThen(committed, Effect.andThen(holdLease(owner), progress(chunk.done)))))
        )
        yield* Effect.uninterruptible(Effect.andThen(activate(sql, target), Effect.andThen(Effect.sync(() => (switched = true)), options.onSwitched ?? Effect.void)))
      }).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) || switched ? Effect.void : clearUp())))
    }).pipe(Effect.ensuring(Effect.ignore(Leases.release(WRITER_LEASE, owner))))
  })

/** True when the database holds a complete dataset (its `as_of` row is written last). */
export const hasDataset = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly n: number }>`SELECT COUNT(*) AS n FROM dataset_info WHERE key = 'as_of'`
  return (rows[0]?.n ?? 0) > 0
})
