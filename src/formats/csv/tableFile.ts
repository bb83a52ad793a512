/**
 * One CSV file of the service's own layout (`<table>.csv`, RFC 4180, UTF-8, a header row with the
 * column names of docs/data.md in any order), read as a stream: every value checked against
 * healthTables.ts, each batch of good rows handed on as it is read, so no table is ever held whole.
 *
 * Duplicate keys are found in bounded memory: the keys of a table other tables reference are kept
 * (KeySet: a bit per patient id); any other table is checked against the key of the row before it
 * while its rows come in key order (as `hcc data export` writes them, so a row can only repeat the
 * one before). At the first row out of order the file is read again from the top with every key
 * going to a scratch table on disk (DuplicateKeys), the rows already handed on only adding their keys.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { parse } from "csv-parse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { createReadStream } from "node:fs"
import { parseDate, parseMonth } from "../../health/calendar.ts"
import type { Row } from "../../health/healthTables.ts"
import type { ColumnSpec, HealthTableName, TableSpec } from "../../health/healthTables.ts"
import type { DuplicateKeys } from "./DuplicateKeys.ts"
import type { KeySet } from "./KeySet.ts"

/** Good rows handed on at a time. */
export const ROWS_PER_BATCH = 20_000

/** What the tables read so far tell the next ones, and where problems go. */
export interface TableContext {
  /** One problem, `file:line: column: reason`. */
  readonly problem: (text: string) => void
  /** The dataset's vocabulary: kind → codes (from vocabulary.csv, read first). */
  readonly vocabulary: Map<string, Set<string>>
  /** The keys of the tables other tables reference, as they are read. */
  readonly keys: ReadonlyMap<HealthTableName, KeySet>
  /** Where a code must be listed, for the reason. */
  readonly codesFrom: string
  /** The scratch store of keys, for a table whose rows are not in key order. */
  readonly duplicates: () => DuplicateKeys
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
const checkValue = (column: ColumnSpec, text: string, ctx: TableContext): { readonly value: string | number | null } | string => {
  const parsed = parseValue(column, text)
  if ("reason" in parsed) return parsed.reason
  const v = parsed.value
  if (v === null) return parsed
  if (column.vocabulary !== undefined && !ctx.vocabulary.get(column.vocabulary)?.has(String(v))) {
    return `'${v}' is not a ${column.vocabulary} code of ${ctx.codesFrom}`
  }
  if (column.references !== undefined && !ctx.keys.get(column.references)?.has(String(v))) {
    return `${v} is not an id of ${column.references}.csv`
  }
  return parsed
}

/** Orders two keys: numbers as numbers, anything else as text. */
const compareKeys = (a: ReadonlyArray<string | number | null>, b: ReadonlyArray<string | number | null>): number => {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? ""
    const y = b[i] ?? ""
    if (x === y) continue
    if (typeof x === "number" && typeof y === "number") return x - y
    return String(x) < String(y) ? -1 : 1
  }
  return 0
}

/** How a read of a table file ended: read through, or stopped at the first row out of key order. */
export type TableRead = { readonly done: true } | { readonly outOfOrderAt: number }

/**
 * Reads one table file (see the module comment): `onRows` gets each batch of good rows and the
 * bytes read so far. `replayBefore`: a second read after rows out of order, every key to the
 * scratch store, the rows before that line not handed on again nor reported again.
 */
export const readTableFile = <E, R>(
  table: TableSpec,
  path: string,
  file: string,
  ctx: TableContext,
  onRows: (rows: ReadonlyArray<Row>, bytesRead: number) => Effect.Effect<void, E, R>,
  replayBefore?: number
): Effect.Effect<TableRead, E | Error, R> =>
  Effect.suspend(() => {
    const source = createReadStream(path)
    const parser = parse({ bom: true, info: true, skip_empty_lines: true, relax_column_count: true })
    let order: Array<number> | undefined
    let width = 0
    let batch: Array<Row> = []
    const referenced = ctx.keys.get(table.name)
    const keyColumns = table.key.map((k) => table.columns.findIndex((c) => c.name === k))
    let previous: ReadonlyArray<string | number | null> | undefined
    let outOfOrderAt: number | undefined
    const store = replayBefore === undefined ? undefined : ctx.duplicates()

    /** One record: a problem, a row to hand on, or nothing. */
    const take = (line: number, record: ReadonlyArray<string>): void => {
      const replayed = replayBefore !== undefined && line < replayBefore
      const problem = (text: string) => {
        if (!replayed) ctx.problem(text)
      }
      if (order === undefined) {
        const header = record.map((h) => h.trim())
        const missing = table.columns.filter((c) => c.optional !== true && !header.includes(c.name)).map((c) => c.name)
        const unknown = header.filter((h) => !table.columns.some((c) => c.name === h))
        if (missing.length > 0 || unknown.length > 0) {
          problem(`${file}:${line}: header: ${[missing.length > 0 ? `missing ${missing.join(", ")}` : "", unknown.length > 0 ? `unknown ${unknown.join(", ")}` : ""].filter(Boolean).join("; ")} (expected ${table.columns.map((c) => c.name).join(",")})`)
          order = []
          width = -1
          return
        }
        // An optional column left out of the header reads as empty in every row.
        order = table.columns.map((c) => header.indexOf(c.name))
        width = header.length
        return
      }
      if (width < 0) return
      if (record.length !== width) return problem(`${file}:${line}: has ${record.length} fields, the header has ${width}`)
      const row: Row = []
      let ok = true
      let idOk = false
      table.columns.forEach((column, i) => {
        const at = order![i]!
        const checked = checkValue(column, at < 0 ? "" : record[at]!, ctx)
        if (typeof checked === "string") {
          ok = false
          row.push(null)
          return problem(`${file}:${line}: ${column.name}: ${checked}`)
        }
        if (i === 0) idOk = true
        row.push(checked.value)
      })
      // A row rejected for another column still names its id, so rows that reference it are not
      // reported too: the list shows causes, not their echoes.
      if (!ok) {
        if (idOk && referenced !== undefined && !replayed) referenced.add(String(row[0]))
        return
      }
      const key = keyColumns.map((k) => row[k] ?? null)
      let duplicate: boolean
      if (referenced !== undefined) duplicate = !referenced.add(String(row[0]))
      else if (store !== undefined) duplicate = !store.add(table.name, key)
      else {
        const order = previous === undefined ? 1 : compareKeys(key, previous)
        if (order < 0) {
          outOfOrderAt = line
          return
        }
        duplicate = order === 0
        previous = key
      }
      if (duplicate) return problem(`${file}:${line}: ${table.key.join(", ")}: duplicate of an earlier row`)
      if (!replayed) batch.push(row)
      if (table.name === "vocabulary" && !replayed) {
        const kind = String(row[0])
        if (!ctx.vocabulary.has(kind)) ctx.vocabulary.set(kind, new Set())
        ctx.vocabulary.get(kind)!.add(String(row[1]))
      }
    }

    const flush = (): Effect.Effect<void, E, R> => {
      if (batch.length === 0) return Effect.void
      const rows = batch
      batch = []
      return onRows(rows, source.bytesRead)
    }

    type Record = { readonly info: { readonly lines: number }; readonly record: Array<string> }
    return NodeStream.fromReadable<Record, Error>({
      evaluate: () => source.pipe(parser),
      onError: (e) => {
        const where = typeof e === "object" && e !== null && "lines" in e ? `:${String(e.lines)}` : ""
        return new Error(`${file}${where}: not valid CSV: ${e instanceof Error ? e.message : String(e)}`)
      }
    }).pipe(
      Stream.takeWhile(() => outOfOrderAt === undefined),
      Stream.runForEachArray((records) =>
        Effect.suspend(() => {
          for (const { info, record } of records) {
            take(info.lines, record)
            if (outOfOrderAt !== undefined) break
          }
          return batch.length >= ROWS_PER_BATCH || outOfOrderAt !== undefined ? flush() : Effect.void
        })
      ),
      Effect.catchIf((e): e is Error => e instanceof Error && e.message.startsWith(file), (e) => Effect.sync(() => ctx.problem(e.message))),
      Effect.andThen(Effect.suspend(flush)),
      Effect.andThen(Effect.sync((): TableRead => {
        if (order === undefined) ctx.problem(`${file}: empty (a header row is required)`)
        return outOfOrderAt === undefined ? { done: true } : { outOfOrderAt }
      })),
      Effect.ensuring(Effect.sync(() => source.destroy()))
    )
  })

/** Reads one table file through, again from the top with a scratch store when its rows are not in key order. */
export const readWholeTable = <E, R>(table: TableSpec, path: string, file: string, ctx: TableContext, onRows: (rows: ReadonlyArray<Row>, bytesRead: number) => Effect.Effect<void, E, R>) =>
  Effect.flatMap(readTableFile(table, path, file, ctx, onRows), (read) => ("done" in read ? Effect.void : Effect.asVoid(readTableFile(table, path, file, ctx, onRows, read.outOfOrderAt))))
