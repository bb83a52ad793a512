/**
 * `hcc data export`: the dataset as a folder of CSV files, one per table (`<table>.csv`, RFC 4180,
 * UTF-8, a header row with the column names of docs/data.md), rows ordered by each table's key, the
 * layout `hcc data import` reads (src/formats/csv/importCsv.ts), so export → import → export gives the
 * same bytes.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { byCodePoint, placeholders } from "../../db/Database.ts"
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs"
import { join } from "node:path"
import { HEALTH_TABLES, type TableSpec } from "../../health/healthTables.ts"
import { csvRecords } from "./csvField.ts"
import type { PhaseProgress } from "../../health/progress.ts"

/** Rows per page when exporting (small pages keep the garbage collector's work low). */
const PAGE = 20_000

/**
 * Every row of a health table, ordered by its key, a page at a time: `onPage` gets each page's
 * rows as arrays of the table's columns. Pages are read by keyset (`WHERE (key) > (last key of
 * the previous page)`), so each page costs the same however deep; text keys in code-point order on
 * either engine, so both give the same order. `onShare`, when given, hears after each page how far
 * through the table it is: where the key begins with an integer column (a patient or row id), the
 * last row's place between that column's least and greatest values (two index lookups), which is
 * even enough over ids for an estimate of the time left; otherwise only the end.
 */
export const forEachPage = <E, R>(
  table: TableSpec,
  onPage: (rows: ReadonlyArray<ReadonlyArray<unknown>>) => Effect.Effect<void, E, R>,
  onShare?: (share: number) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = table.columns.map((c) => c.name)
    const keyAt = table.key.map((k) => columns.indexOf(k))
    const select = `SELECT ${columns.join(", ")} FROM ${table.name}`
    const keys = table.key.map((k) => table.columns.find((c) => c.name === k)?.type === "int" ? k : byCodePoint(sql, k)).join(", ")
    const order = `ORDER BY ${keys} LIMIT ${PAGE}`
    const after = `WHERE (${keys}) > (${placeholders(sql, table.key.length)})`
    const first = table.key[0]!
    const span = onShare !== undefined && table.columns.find((c) => c.name === first)?.type === "int"
      ? (yield* sql.unsafe(`SELECT MIN(${first}), MAX(${first}) FROM ${table.name}`).values)[0]
      : undefined
    const [low, high] = [Number(span?.[0]), Number(span?.[1])]
    const shareAt = (key: unknown) => Number.isFinite(low) && high > low ? (Number(key) - low) / (high - low) : 0
    let last: ReadonlyArray<unknown> | undefined
    for (;;) {
      const page = yield* (last === undefined ? sql.unsafe(`${select} ${order}`) : sql.unsafe(`${select} ${after} ${order}`, last)).values
      if (page.length === 0) break
      yield* onPage(page)
      const end = page[page.length - 1]!
      last = keyAt.map((k) => end[k])
      if (page.length < PAGE) break
      if (onShare !== undefined) yield* onShare(Math.min(1, Math.max(0, shareAt(last[0]))))
    }
    if (onShare !== undefined) yield* onShare(1)
  })

/** Writes one table to `<folder>/<table>.csv`, ordered by key; `onShare` as forEachPage's. */
export const writeTable = (folder: string, table: TableSpec, onShare?: (share: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const fd = yield* Effect.try(() => openSync(join(folder, `${table.name}.csv`), "w"))
    yield* Effect.gen(function*() {
      writeSync(fd, csvRecords([table.columns.map((c) => c.name)]))
      yield* forEachPage(table, (page) => Effect.sync(() => writeSync(fd, csvRecords(page))), onShare)
    }).pipe(Effect.ensuring(Effect.sync(() => closeSync(fd))))
  })

/**
 * Writes every table to `<folder>/<table>.csv`, ordered by key. Each table is a phase of
 * `progress` (`writing axis_scores (5 of 14)`), with its share done as it goes: the tables differ
 * in size by orders of magnitude (ten million patients' monthly scores are most of an export's
 * time), so a share of tables would stand still for most of it and promise the wrong time left.
 */
export const writeFolder = (folder: string, progress: PhaseProgress = () => Effect.void) =>
  Effect.gen(function*() {
    yield* Effect.try(() => mkdirSync(folder, { recursive: true }))
    for (const [i, table] of HEALTH_TABLES.entries()) {
      const phase = `writing ${table.name} (${i + 1} of ${HEALTH_TABLES.length})`
      yield* progress(phase, 0)
      yield* writeTable(folder, table, (share) => progress(phase, share))
    }
  })
