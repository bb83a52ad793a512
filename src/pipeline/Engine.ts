/**
 * DuckDB as an import's engine where it does the job better than reading row by row in
 * JavaScript: Parquet files (a columnar format with no line-oriented reader of its own here), and
 * scans of large tables with a filter (the OMOP vocabulary, of which an instance uses a sliver).
 * DuckDB reads CSV and Parquet on every core, runs its queries off the JavaScript thread and
 * spills to disk past its memory limit, so a query neither holds the event loop (a signal still
 * lands) nor grows the process without bound. One in-memory instance per import, opened at first
 * use; its spill folder sits beside the staging file and goes with it.
 */
import { type DuckDBConnection, DuckDBInstance, type DuckDBValue } from "@duckdb/node-api"
import * as Effect from "effect/Effect"
import { rmSync } from "node:fs"
import { availableParallelism } from "node:os"

/** The most memory DuckDB holds before it spills to its folder: well under an import's 2 GiB budget. */
const MEMORY_LIMIT = "768MB"

/** A failure of the engine: what it was doing, and DuckDB's reason. */
export class EngineError extends Error {
  /** DuckDB's words, without the statement it quotes back (`LINE 2: …` and a caret under it). */
  readonly reason: string

  constructor(what: string, reason: string) {
    super(`${what}: ${reason}`)
    this.reason = reason
  }
}

/** DuckDB's message of a failure up to the statement text it quotes. */
const reasonOf = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split(/\n\s*\nLINE \d+:/)[0]!.trim()

/** A cell as the readers see it: text, '' for null. DuckDB's VARCHAR of a DOUBLE that holds an integer ('12.0') is written as the integer. */
export const textOf = (v: DuckDBValue): string => {
  if (v === null || v === undefined) return ""
  const s = typeof v === "string" ? v : String(v)
  const m = /^(-?\d+)\.0+$/.exec(s)
  return m === null ? s : m[1]!
}

/** An SQL string literal. */
export const literal = (s: string): string => `'${s.replaceAll("'", "''")}'`

/** The engine of one import (see the module comment). */
export class Engine {
  private instance: DuckDBInstance | undefined
  private connection: DuckDBConnection | undefined
  private readonly spill: string

  /** `spill`: the folder DuckDB may spill to (created by DuckDB when needed, removed by dispose). */
  constructor(spill: string) {
    this.spill = spill
  }

  private connect: Effect.Effect<DuckDBConnection, EngineError> = Effect.suspend(() => {
    if (this.connection !== undefined) return Effect.succeed(this.connection)
    const failed = (e: unknown) => new EngineError("cannot start DuckDB", reasonOf(e))
    return Effect.gen({ self: this }, function*() {
      const instance = yield* Effect.tryPromise({
        try: () =>
          DuckDBInstance.create(":memory:", {
            threads: String(availableParallelism()),
            memory_limit: MEMORY_LIMIT,
            temp_directory: this.spill,
            preserve_insertion_order: "true"
          }),
        catch: failed
      })
      this.instance = instance
      const connection = yield* Effect.tryPromise({ try: () => instance.connect(), catch: failed })
      this.connection = connection
      return connection
    })
  })

  /**
   * Runs a query with the connection. Interrupting the fiber interrupts the query and waits until
   * DuckDB has given it up: closing a connection while one of its queries still runs on a worker
   * thread deadlocks that thread (the query's own context is destroyed under its lock), and the
   * process then never exits.
   */
  private withConnection = <A>(what: string, f: (c: DuckDBConnection) => Promise<A>): Effect.Effect<A, EngineError> =>
    Effect.flatMap(this.connect, (c) =>
      Effect.callback<A, EngineError>((resume) => {
        const query = f(c)
        query.then((a) => resume(Effect.succeed(a)), (e: unknown) => resume(Effect.fail(new EngineError(what, reasonOf(e)))))
        return Effect.promise(() => {
          c.interrupt()
          return query.then(() => undefined, () => undefined)
        })
      }))

  /** Runs a statement (or several) for its effect. */
  run(what: string, sql: string): Effect.Effect<void, EngineError> {
    return Effect.asVoid(this.withConnection(what, (c) => c.run(sql)))
  }

  /** A query's rows, every cell as text (textOf). For results of a bounded size. */
  rows(what: string, sql: string): Effect.Effect<ReadonlyArray<ReadonlyArray<string>>, EngineError> {
    return Effect.map(this.withConnection(what, (c) => c.runAndReadAll(sql)), (reader) => reader.getRows().map((r) => r.map(textOf)))
  }

  /**
   * Streams a query's rows to `onRows` a chunk (about 2,048 rows) at a time, every cell as text,
   * with the column names (lower case); the fiber can be interrupted between any two chunks.
   */
  stream(what: string, sql: string, onRows: (columns: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => Effect.Effect<void>): Effect.Effect<void, EngineError> {
    return Effect.gen({ self: this }, function*() {
      const result = yield* this.withConnection(what, (c) => c.stream(sql))
      const columns = result.columnNames().map((c) => c.toLowerCase())
      for (;;) {
        const chunk = yield* this.withConnection(what, () => result.fetchChunk())
        if (chunk === null || chunk.rowCount === 0) return
        yield* onRows(columns, chunk.getRows().map((r) => r.map(textOf)))
      }
    })
  }

  /**
   * Streams a query's rows as DuckDB's JavaScript values (a DOUBLE or INTEGER a number, a BIGINT a
   * bigint, NULL null): for large numeric results, where text would cost a conversion per cell.
   */
  streamValues(what: string, sql: string, onRows: (rows: ReadonlyArray<ReadonlyArray<DuckDBValue>>) => Effect.Effect<void>): Effect.Effect<void, EngineError> {
    return Effect.gen({ self: this }, function*() {
      const result = yield* this.withConnection(what, (c) => c.stream(sql))
      for (;;) {
        const chunk = yield* this.withConnection(what, () => result.fetchChunk())
        if (chunk === null || chunk.rowCount === 0) return
        yield* onRows(chunk.getRows())
      }
    })
  }

  /** Closes DuckDB and removes its spill folder. */
  dispose(): void {
    this.connection?.closeSync()
    this.instance?.closeSync()
    this.connection = undefined
    this.instance = undefined
    rmSync(this.spill, { recursive: true, force: true })
  }
}
