/**
 * The tables of an OMOP CDM 5.3 or 5.4 folder as OHDSI and its ETLs ship them: one file per table,
 * CSV or TSV (the delimiter is read from the header: Athena's vocabulary files are tab-separated
 * whatever their extension), optionally gzip'd, or Parquet (a file, or a folder of part files named
 * after the table, as DuckDB, Arrow and Spark write them); file and column names in any case; in
 * the folder or in folders below it (an unzipped archive often holds one folder), skipping what
 * macOS adds to a zip (`__MACOSX/`, `._name` AppleDouble files) and other hidden files. Rows are
 * read as a stream, a batch at a time.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { parse } from "csv-parse"
import { Effect, Stream } from "effect"
import { closeSync, createReadStream, existsSync, openSync, readdirSync, readSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { createGunzip, gunzipSync } from "node:zlib"
import { type Engine, literal } from "../Engine.ts"

/** The CDM tables the importer reads, in the order it reads them (vocabulary and references first). */
export const OMOP_TABLES = [
  "concept",
  "concept_relationship",
  "concept_ancestor",
  "cdm_source",
  "location",
  "care_site",
  "provider",
  "death",
  "person",
  "observation_period",
  "visit_occurrence",
  "condition_occurrence",
  "drug_exposure",
  "procedure_occurrence",
  "device_exposure",
  "measurement",
  "observation"
] as const
/** One table the importer reads. */
export type OmopTable = (typeof OMOP_TABLES)[number]

/** One table's file. */
export interface OmopFile {
  readonly table: OmopTable
  readonly path: string
  /** Its path in the folder imported, for messages. */
  readonly name: string
  readonly format: "csv" | "parquet"
  readonly gzip: boolean
  readonly bytes: number
}

const FILE = /^(.+?)\.(csv|tsv|txt|parquet)(\.gz)?$/i

/** How deep below the folder imported tables are looked for. */
const MAX_DEPTH = 3

/** Entries a folder's listing never counts: macOS's zip metadata (`__MACOSX/`, `._name`), hidden files. */
const ignored = (name: string): boolean => name.startsWith(".") || name === "__MACOSX"

const tableOf = (name: string): OmopTable | undefined => {
  const table = name.toLowerCase()
  return (OMOP_TABLES as ReadonlyArray<string>).includes(table) ? (table as OmopTable) : undefined
}

/** The files of the tables in a folder and below it (see the module comment), and the other files with a table-like name (not read). */
export const findOmopFiles = (folder: string): { readonly files: ReadonlyArray<OmopFile>; readonly others: ReadonlyArray<string> } => {
  const files: Array<OmopFile> = []
  const others: Array<string> = []
  const visit = (dir: string, depth: number, partsOf: OmopTable | undefined) => {
    for (const name of readdirSync(dir).sort()) {
      if (ignored(name)) continue
      const path = join(dir, name)
      const stat = statSync(path)
      if (stat.isDirectory()) {
        if (depth < MAX_DEPTH) visit(path, depth + 1, tableOf(name))
        continue
      }
      const m = FILE.exec(name)
      if (m === null || !stat.isFile()) continue
      const format = m[2]!.toLowerCase() === "parquet" ? "parquet" : "csv"
      // A part file of a table written as a folder (person/part-0.parquet) is of that table.
      const table = tableOf(m[1]!) ?? (format === "parquet" ? partsOf : undefined)
      if (table !== undefined) files.push({ table, path, name: relative(folder, path), format, gzip: m[3] !== undefined, bytes: stat.size })
      else others.push(relative(folder, path))
    }
  }
  visit(folder, 0, undefined)
  files.sort((a, b) => OMOP_TABLES.indexOf(a.table) - OMOP_TABLES.indexOf(b.table) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return { files, others }
}

/** Whether a folder exists. */
export const isFolder = (path: string): boolean => existsSync(path) && statSync(path).isDirectory()

/** A text file's first line, without a byte order mark (decompressed when gzip'd; a header longer than 64 KiB is cut). */
export const firstLineOf = (file: OmopFile): string => {
  const fd = openSync(file.path, "r")
  const buffer = Buffer.alloc(64 * 1024)
  const n = readSync(fd, buffer, 0, buffer.length, 0)
  closeSync(fd)
  const head = file.gzip ? gunzipSync(buffer.subarray(0, n), { finishFlush: 2 }).toString("utf8") : buffer.subarray(0, n).toString("utf8")
  return (head.split(/\r?\n/)[0] ?? "").replace(/^\uFEFF/, "")
}

/** The delimiter of a file: a tab when its first line has one, else a comma. */
const delimiterOf = (file: OmopFile): string => (firstLineOf(file).includes("\t") ? "\t" : ",")

/** A row with its columns by (lower-case) name. */
export interface OmopRow {
  readonly line: number
  /** The value of a column ('' when empty or absent). */
  readonly get: (column: string) => string
  /** Whether the file has the column. */
  readonly has: (column: string) => boolean
}

/** Reads a table's rows in batches; `onRows` gets each batch. Fails with the file's name when it cannot be read. */
export const forEachRow = (file: OmopFile, engine: Engine, onRows: (rows: ReadonlyArray<OmopRow>) => void): Effect.Effect<void, Error> =>
  file.format === "parquet" ? forEachParquetRow(file, engine, onRows) : forEachTextRow(file, onRows)

/** A Parquet file's rows through DuckDB, every column as text; a row's line is its number in the file (from 1). */
const forEachParquetRow = (file: OmopFile, engine: Engine, onRows: (rows: ReadonlyArray<OmopRow>) => void): Effect.Effect<void, Error> =>
  Effect.suspend(() => {
    let line = 0
    return engine.stream(`${file.name}: not readable as Parquet`, `SELECT COLUMNS(*)::VARCHAR FROM read_parquet(${literal(file.path)})`, (names, records) =>
      Effect.sync(() => {
        const cols = new Map(names.map((c, i) => [c, i]))
        onRows(records.map((record) => ({ line: ++line, get: (c) => (record[cols.get(c) ?? -1] ?? "").trim(), has: (c) => cols.has(c) })))
      }))
  })

/** A CSV or TSV file's rows. */
const forEachTextRow = (file: OmopFile, onRows: (rows: ReadonlyArray<OmopRow>) => void): Effect.Effect<void, Error> =>
  Effect.suspend(() => {
    const delimiter = delimiterOf(file)
    let columns: Map<string, number> | undefined
    const parser = parse({ delimiter, bom: true, info: true, skip_empty_lines: true, relax_column_count: true, relax_quotes: delimiter === "\t", quote: delimiter === "\t" ? false : '"' })
    const source = createReadStream(file.path)
    return NodeStream.fromReadable<{ readonly info: { readonly lines: number }; readonly record: Array<string> }, Error>({
      evaluate: () => (file.gzip ? source.pipe(createGunzip()) : source).pipe(parser),
      onError: (e) => new Error(`${file.name}: not valid ${delimiter === "\t" ? "TSV" : "CSV"}: ${e instanceof Error ? e.message : String(e)}`)
    }).pipe(
      Stream.runForEachArray((records) =>
        Effect.sync(() => {
          const rows: Array<OmopRow> = []
          for (const { info, record } of records) {
            if (columns === undefined) {
              columns = new Map(record.map((c, i) => [c.trim().toLowerCase(), i]))
              continue
            }
            const cols = columns
            rows.push({ line: info.lines, get: (c) => (record[cols.get(c) ?? -1] ?? "").trim(), has: (c) => cols.has(c) })
          }
          if (rows.length > 0) onRows(rows)
        })
      )
    )
  })
