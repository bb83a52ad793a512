/**
 * `hcc data export`: the dataset as a folder of CSV files, one per table (`<table>.csv`, RFC 4180,
 * UTF-8, a header row with the column names of docs/data.md), rows ordered by each table's key, the
 * layout `hcc data import` reads (src/import/importCsv.ts), so export → import → export gives the
 * same bytes.
 */
import { stringify } from "csv-stringify/sync"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { byCodePoint, placeholders } from "../../db/Database.ts"
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs"
import { join } from "node:path"
import { HEALTH_TABLES, type TableSpec } from "../../health/healthTables.ts"

/** Rows per page when exporting (small pages keep the garbage collector's work low). */
const PAGE = 20_000

/**
 * Every row of a health table, ordered by its key, a page at a time: `onPage` gets each page's
 * rows as arrays of the table's columns. Pages are read by keyset (`WHERE (key) > (last key of
 * the previous page)`), so each page costs the same however deep; text keys in code-point order on
 * either engine, so both give the same order.
 */
export const forEachPage = <E, R>(
  table: TableSpec,
  onPage: (rows: ReadonlyArray<ReadonlyArray<unknown>>) => Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = table.columns.map((c) => c.name)
    const keyAt = table.key.map((k) => columns.indexOf(k))
    const select = `SELECT ${columns.join(", ")} FROM ${table.name}`
    const keys = table.key.map((k) => table.columns.find((c) => c.name === k)?.type === "int" ? k : byCodePoint(sql, k)).join(", ")
    const order = `ORDER BY ${keys} LIMIT ${PAGE}`
    const after = `WHERE (${keys}) > (${placeholders(sql, table.key.length)})`
    let last: ReadonlyArray<unknown> | undefined
    for (;;) {
      const page = yield* (last === undefined ? sql.unsafe(`${select} ${order}`) : sql.unsafe(`${select} ${after} ${order}`, last)).values
      if (page.length === 0) return
      yield* onPage(page)
      const end = page[page.length - 1]!
      last = keyAt.map((k) => end[k])
      if (page.length < PAGE) return
    }
  })

/** Writes one table to `<folder>/<table>.csv`, ordered by key. */
export const writeTable = (folder: string, table: TableSpec) =>
  Effect.gen(function*() {
    const fd = yield* Effect.try(() => openSync(join(folder, `${table.name}.csv`), "w"))
    yield* Effect.gen(function*() {
      writeSync(fd, stringify([table.columns.map((c) => c.name)], { record_delimiter: "\n" }))
      // csv-stringify writes null as an empty field and numbers with String().
      yield* forEachPage(table, (page) => Effect.sync(() => writeSync(fd, stringify(page as Array<Array<unknown>>, { record_delimiter: "\n" }))))
    }).pipe(Effect.ensuring(Effect.sync(() => closeSync(fd))))
  })

/** Writes every table to `<folder>/<table>.csv`, ordered by key. */
export const writeFolder = (folder: string, onProgress: (done: number) => Effect.Effect<void> = () => Effect.void) =>
  Effect.gen(function*() {
    yield* Effect.try(() => mkdirSync(folder, { recursive: true }))
    for (const [i, table] of HEALTH_TABLES.entries()) {
      yield* writeTable(folder, table)
      yield* onProgress((i + 1) / HEALTH_TABLES.length)
    }
  })
