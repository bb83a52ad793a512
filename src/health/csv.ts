/**
 * The dataset as a folder of CSV files, one per table (`<table>.csv`, RFC 4180, UTF-8, header row
 * with the column names of docs/data.md in any order). `hcc data import` reads and checks every row
 * against healthTables.ts before writing anything; `hcc data export` writes the same layout, rows
 * ordered by each table's key, so export → import → export gives the same bytes.
 */
import { parse } from "csv-parse"
import { stringify } from "csv-stringify/sync"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { byCodePoint, placeholders } from "../db/Database.ts"
import { createReadStream, existsSync, mkdirSync, openSync, closeSync, writeSync } from "node:fs"
import { join } from "node:path"
import { parseDate, parseMonth } from "./calendar.ts"
import type { Chunk } from "./DatasetWriter.ts"
import type { Row, Rows } from "./generator.ts"
import { type ColumnSpec, HEALTH_TABLES, type HealthTableName, type TableSpec, tableSpec } from "./healthTables.ts"

/** Tables an import must contain; the others may be left out (they import empty). */
export const REQUIRED_TABLES: ReadonlyArray<HealthTableName> = ["vocabulary", "dataset_info", "patients"]

/** Tables other tables reference (by their first column): their keys are kept while reading. */
const REFERENCED = new Set(HEALTH_TABLES.flatMap((t) => t.columns.flatMap((c) => (c.references === undefined ? [] : [c.references]))))

/** Problems listed in full before the rest are only counted. */
export const MAX_REPORTED_PROBLEMS = 50

/** Why an import was refused: each problem is `file.csv:line: column: reason`. */
export class ImportRejected extends Error {
  readonly problems: ReadonlyArray<string>
  readonly total: number
  constructor(problems: ReadonlyArray<string>, total: number) {
    const more = total > problems.length ? `\n… and ${total - problems.length} more` : ""
    super(`nothing was imported: ${total} problem${total === 1 ? "" : "s"}\n${problems.join("\n")}${more}`)
    this.problems = problems
    this.total = total
  }
}

/** Parses one CSV value by its column's type; returns the SQL value or a reason. */
const parseValue = (column: ColumnSpec, text: string): { readonly value: string | number | null } | { readonly reason: string } => {
  if (text === "") return column.nullable === true ? { value: null } : { reason: "is empty but required" }
  let value: string | number
  switch (column.type) {
    case "int":
      if (!/^-?\d+$/.test(text)) return { reason: `'${text}' is not an integer` }
      value = Number(text)
      break
    case "real":
      value = Number(text)
      if (text.trim() !== text || !Number.isFinite(value)) return { reason: `'${text}' is not a finite number` }
      break
    case "date":
      if (Number.isNaN(parseDate(text))) return { reason: `'${text}' is not a date (YYYY-MM-DD)` }
      value = text
      break
    case "month":
      if (Number.isNaN(parseMonth(text))) return { reason: `'${text}' is not a month (YYYY-MM)` }
      value = text
      break
    case "text":
      value = text
      break
  }
  if (column.range !== undefined && typeof value === "number" && (value < column.range[0] || value > column.range[1])) {
    return { reason: `${value} is outside [${column.range[0]}, ${column.range[1]}]` }
  }
  if (column.pattern !== undefined && !column.pattern.regex.test(String(value))) {
    return { reason: `'${value}' is not ${column.pattern.name}` }
  }
  if (column.oneOf !== undefined && !column.oneOf.includes(String(value))) {
    return { reason: `'${value}' is not one of ${column.oneOf.join(", ")}` }
  }
  return { value }
}

/** A value's SQL form, or why it is refused (type, range, closed list, vocabulary, reference). */
const checkValue = (
  column: ColumnSpec,
  text: string,
  vocabulary: ReadonlyMap<string, ReadonlySet<string>>,
  keys: ReadonlyMap<HealthTableName, ReadonlySet<string>>,
  codesFrom: string
): { readonly value: string | number | null } | string => {
  const parsed = parseValue(column, text)
  if ("reason" in parsed) return parsed.reason
  const v = parsed.value
  if (v === null) return parsed
  if (column.vocabulary !== undefined && !vocabulary.get(column.vocabulary)?.has(String(v))) {
    return `'${v}' is not a ${column.vocabulary} code of ${codesFrom}`
  }
  if (column.references !== undefined && !keys.get(column.references)?.has(String(v))) {
    return `${v} is not an id of ${column.references}.csv`
  }
  return parsed
}

/** Reads and checks every file of a folder; fails with ImportRejected, writes nothing. */
export const readFolder = (folder: string): Effect.Effect<Rows, ImportRejected | Error> =>
  Effect.tryPromise({
    try: () => readAll(folder),
    catch: (e) => (e instanceof ImportRejected ? e : new Error(`could not read ${folder}: ${e instanceof Error ? e.message : String(e)}`))
  })

const readAll = async (folder: string): Promise<Rows> => {
  if (!existsSync(folder)) throw new ImportRejected([`${folder}: no such folder`], 1)
  const problems: Array<string> = []
  let total = 0
  const problem = (text: string) => {
    total++
    if (problems.length < MAX_REPORTED_PROBLEMS) problems.push(text)
  }
  const rows: Rows = {}
  const vocabulary = new Map<string, Set<string>>()
  const keys = new Map<HealthTableName, Set<string>>()

  for (const table of HEALTH_TABLES) {
    const file = `${table.name}.csv`
    const path = join(folder, file)
    if (!existsSync(path)) {
      if (REQUIRED_TABLES.includes(table.name)) problem(`${file}: missing (required)`)
      rows[table.name] = []
      continue
    }
    rows[table.name] = await readTable(table, path, file, problem, vocabulary, keys, "vocabulary.csv")
  }

  const info = new Map((rows.dataset_info ?? []).map((r) => [r[0], r[1]]))
  const asOf = info.get("as_of")
  if (rows.dataset_info !== undefined && (asOf === undefined || asOf === null || Number.isNaN(parseDate(String(asOf))))) {
    problem("dataset_info.csv: the row with key as_of and a YYYY-MM-DD value is required")
  }
  if (total > 0) throw new ImportRejected(problems, total)
  return rows
}

/** Reads one table's file: header, then each record checked; vocabulary and keys recorded for later tables. */
const readTable = async (
  table: TableSpec,
  path: string,
  file: string,
  problem: (text: string) => void,
  vocabulary: Map<string, Set<string>>,
  keys: Map<HealthTableName, Set<string>>,
  codesFrom: string
): Promise<Array<Row>> => {
  const out: Array<Row> = []
  const parser = createReadStream(path).pipe(parse({ bom: true, info: true, skip_empty_lines: true, relax_column_count: true }))
  let order: Array<number> | undefined
  let width = 0
  const seen = new Set<string>()
  const referencedKeys: Array<string> = []
  const keyColumns = table.key.map((k) => table.columns.findIndex((c) => c.name === k))
  try {
    for await (const { info, record } of parser as AsyncIterable<{ readonly info: { readonly lines: number }; readonly record: Array<string> }>) {
      const line = info.lines
      if (order === undefined) {
        const header = record.map((h) => h.trim())
        const missing = table.columns.filter((c) => c.optional !== true && !header.includes(c.name)).map((c) => c.name)
        const unknown = header.filter((h) => !table.columns.some((c) => c.name === h))
        if (missing.length > 0 || unknown.length > 0) {
          problem(`${file}:${line}: header: ${[missing.length > 0 ? `missing ${missing.join(", ")}` : "", unknown.length > 0 ? `unknown ${unknown.join(", ")}` : ""].filter(Boolean).join("; ")} (expected ${table.columns.map((c) => c.name).join(",")})`)
          return out
        }
        // An optional column left out of the header reads as empty in every row.
        order = table.columns.map((c) => header.indexOf(c.name))
        width = header.length
        continue
      }
      if (record.length !== width) {
        problem(`${file}:${line}: has ${record.length} fields, the header has ${width}`)
        continue
      }
      const row: Row = []
      let ok = true
      let idOk = false
      table.columns.forEach((column, i) => {
        const at = order![i]!
        const reason = checkValue(column, at < 0 ? "" : record[at]!, vocabulary, keys, codesFrom)
        if (typeof reason === "string") {
          ok = false
          row.push(null)
          return problem(`${file}:${line}: ${column.name}: ${reason}`)
        }
        if (i === 0) idOk = true
        row.push(reason.value)
      })
      // A row rejected for another column still names its id, so rows that reference it are not
      // reported too: the list shows causes, not their echoes.
      if (!ok) {
        if (idOk) referencedKeys.push(String(row[0]))
        continue
      }
      const key = keyColumns.map((k) => String(row[k])).join("\u0000")
      if (seen.has(key)) {
        problem(`${file}:${line}: ${table.key.join(", ")}: duplicate of an earlier row`)
        continue
      }
      seen.add(key)
      out.push(row)
      if (table.name === "vocabulary") {
        const kind = String(row[0])
        if (!vocabulary.has(kind)) vocabulary.set(kind, new Set())
        vocabulary.get(kind)!.add(String(row[1]))
      }
    }
  } catch (e) {
    const where = typeof e === "object" && e !== null && "lines" in e ? `:${String(e.lines)}` : ""
    problem(`${file}${where}: not valid CSV: ${e instanceof Error ? e.message : String(e)}`)
  }
  if (order === undefined) problem(`${file}: empty (a header row is required)`)
  if (REFERENCED.has(table.name)) keys.set(table.name, new Set([...out.map((r) => String(r[0])), ...referencedKeys]))
  return out
}

/** The surveillance tables, brought beside an imported dataset (FHIR and OMOP hold none). */
export const SURVEILLANCE_TABLES = ["animal_surveillance", "human_surveillance"] as const

/**
 * Reads `animal_surveillance.csv` and `human_surveillance.csv` of a folder when they are there
 * (the layout of docs/data.md), checked against the given species, zoonotic condition and region
 * codes; problems go to `problem` as `file:line: column: reason`.
 */
export const readSurveillance = (
  folder: string,
  codes: Readonly<Record<"species" | "zoonotic_condition" | "region", ReadonlySet<string>>>,
  problem: (text: string) => void
): Effect.Effect<Rows | undefined, Error> =>
  Effect.tryPromise({
    try: async () => {
      const present = SURVEILLANCE_TABLES.filter((t) => existsSync(join(folder, `${t}.csv`)))
      if (present.length === 0) return undefined
      const vocabulary = new Map<string, Set<string>>(Object.entries(codes).map(([k, v]) => [k, new Set(v)]))
      const rows: Rows = {}
      for (const name of SURVEILLANCE_TABLES) {
        rows[name] = present.includes(name) ? await readTable(tableSpec(name), join(folder, `${name}.csv`), `${name}.csv`, problem, vocabulary, new Map(), "the import (docs/data.md, \"Surveillance beside an import\")") : []
      }
      return rows
    },
    catch: (e) => new Error(`could not read the surveillance files of ${folder}: ${e instanceof Error ? e.message : String(e)}`)
  })

/** The parsed rows as writer chunks (one per table, progress by table). */
export const importChunks = (rows: Rows): ReadonlyArray<Chunk> =>
  HEALTH_TABLES.map((t, i) => ({ rows: { [t.name]: rows[t.name] ?? [] }, done: (i + 1) / HEALTH_TABLES.length }))

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
