/**
 * The tables of an OMOP CDM 5.3 or 5.4 folder as OHDSI and its ETLs ship them: one file per table,
 * CSV or TSV (the delimiter is read from the first line: Athena's vocabulary files are
 * tab-separated whatever their extension), with a header row or, as ETL-CMS writes the CMS SynPUF
 * in CDM 5.2 and 5.3, without one (textLayout.ts), optionally gzip'd, or Parquet (a file, or a
 * folder of part files named after the table, as DuckDB, Arrow and Spark write them; a column of
 * any type is read, pandas and Arrow typing a column of no value BOOLEAN or INTEGER);
 * file and column names in any case; in the folder or in folders below it (an unzipped archive
 * often holds one folder), skipping what macOS adds to a zip (`__MACOSX/`, `._name` AppleDouble
 * files) and other hidden files. Rows are read as a stream, a batch at a time.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { parse, type Options } from "csv-parse"
import { parse as parseSync } from "csv-parse/sync"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Stream from "effect/Stream"
import { closeSync, createReadStream, existsSync, openSync, readdirSync, readSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { createGunzip, gunzipSync } from "node:zlib"
import { type Engine, literal } from "../../pipeline/Engine.ts"
import { ImportRejected } from "../../pipeline/Report.ts"
import { OMOP_TABLES, type OmopFile, type OmopTable } from "./cdmTables.ts"
import { readingFile } from "./fileProblem.ts"
import { SAMPLE_ROWS, textLayoutOf } from "./textLayout.ts"

export { OMOP_TABLES, type OmopFile, type OmopTable } from "./cdmTables.ts"

/** A table's file: `<table>.csv|tsv|txt|parquet`, optionally `.gz`, or the table's bare name (ETL-CMS ships SynPUF's CDM 5.2 files so: `person`, `drug_exposure`). */
const FILE = /^(.+?)(?:\.(csv|tsv|txt|parquet))?(\.gz)?$/i

/** How deep below the folder imported tables are looked for. */
const MAX_DEPTH = 3

/** Entries a folder's listing never counts: macOS's zip metadata (`__MACOSX/`, `._name`), hidden files. */
const ignored = (name: string): boolean => name.startsWith(".") || name === "__MACOSX"

const tableOf = (name: string): OmopTable | undefined => {
  const table = name.toLowerCase()
  return (OMOP_TABLES as ReadonlyArray<string>).includes(table) ? (table as OmopTable) : undefined
}

/** The files of the tables in a folder and below it (see the module comment), a text file with its layout (textLayout.ts), and the other files with a table-like name (not read). */
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
      // A name without an extension is a table's only when it is a table's name.
      if (m[2] === undefined && tableOf(m[1]!) === undefined) continue
      const format = m[2]?.toLowerCase() === "parquet" ? "parquet" : "csv"
      // A part file of a table written as a folder (person/part-0.parquet) is of that table.
      const table = tableOf(m[1]!) ?? (format === "parquet" ? partsOf : undefined)
      if (table === undefined) others.push(relative(folder, path))
      else {
        const file: OmopFile = { table, path, name: relative(folder, path), format, gzip: m[3] !== undefined, bytes: stat.size }
        files.push(format === "csv" ? withTextLayout(file) : file)
      }
    }
  }
  visit(folder, 0, undefined)
  files.sort((a, b) => OMOP_TABLES.indexOf(a.table) - OMOP_TABLES.indexOf(b.table) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  return { files, others }
}

/** Whether a folder exists. */
export const isFolder = (path: string): boolean => existsSync(path) && statSync(path).isDirectory()

/** The bytes of a text file read to know its delimiter, its header and its first rows. */
const HEAD_BYTES = 64 * 1024

/**
 * The text of a file's first HEAD_BYTES (inflated when gzip'd: a cut stream inflates as far as it
 * goes), without a byte order mark, and whether it is the whole file; undefined when it does not
 * inflate (not gzip).
 */
const headOf = (file: OmopFile): { readonly text: string; readonly whole: boolean } | undefined => {
  const fd = openSync(file.path, "r")
  const buffer = Buffer.alloc(HEAD_BYTES)
  const n = readSync(fd, buffer, 0, buffer.length, 0)
  closeSync(fd)
  const bytes = file.gzip ? Result.getOrUndefined(Result.try(() => gunzipSync(buffer.subarray(0, n), { finishFlush: 2 }))) : buffer.subarray(0, n)
  return bytes === undefined ? undefined : { text: bytes.toString("utf8").replace(/^\uFEFF/, ""), whole: n === file.bytes }
}

/** A text file's first line, without a byte order mark (a line longer than 64 KiB is cut). */
export const firstLineOf = (file: OmopFile): string => headOf(file)?.text.split(/\r?\n/)[0] ?? ""

/** The delimiter of a file: a tab when its first line has one, else a comma. */
const delimiterOf = (firstLine: string): string => (firstLine.includes("\t") ? "\t" : ",")

/** How csv-parse reads a file of a delimiter: Athena's tab-separated files have no quoting (names hold bare quotes); CSV quotes with ". */
const textOptions = (delimiter: string): Options => ({
  delimiter,
  bom: true,
  skip_empty_lines: true,
  relax_column_count: true,
  relax_quotes: delimiter === "\t",
  quote: delimiter === "\t" ? false : '"'
})

/** A text file with its layout (textLayout.ts), from its first rows (the last line of a cut head left out). */
const withTextLayout = (file: OmopFile): OmopFile => {
  const head = headOf(file)
  if (head === undefined) return { ...file, unreadable: `${file.name}: cannot be read: not gzip (it does not decompress)` }
  const end = head.text.lastIndexOf("\n")
  const text = head.whole || end < 0 ? head.text : head.text.slice(0, end + 1)
  // A head that does not parse (a quoted field left open where it was cut) is taken to start with a header row.
  const records = Result.getOrElse(Result.try(() => parseSync(text, { ...textOptions(delimiterOf(text.split(/\r?\n/)[0] ?? "")), to: SAMPLE_ROWS }) as Array<Array<string>>), () => [])
  const layout = textLayoutOf(file.table, file.name, records)
  switch (layout.k) {
    case "header":
      return file
    case "headerless":
      return { ...file, headerless: { version: layout.version, columns: layout.columns } }
    case "unreadable":
      return { ...file, unreadable: layout.problem }
  }
}

/** Fails with the problem of each file that cannot be read at all (OmopFile.unreadable), every one listed. */
export const checkReadable = (files: ReadonlyArray<OmopFile>): Effect.Effect<void, ImportRejected> => {
  const problems = files.flatMap((f) => (f.unreadable === undefined ? [] : [f.unreadable]))
  return problems.length === 0 ? Effect.void : Effect.fail(new ImportRejected(problems, problems.length))
}

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
  Effect.andThen(checkReadable([file]), file.format === "parquet" ? forEachParquetRow(file, engine, onRows) : forEachTextRow(file, onRows))

/** A Parquet file's rows through DuckDB, every column as text whatever its type; a row's line is its number in the file (from 1). */
const forEachParquetRow = (file: OmopFile, engine: Engine, onRows: (rows: ReadonlyArray<OmopRow>) => void): Effect.Effect<void, Error> =>
  Effect.suspend(() => {
    let line = 0
    return engine.stream(`${file.name}: not readable as Parquet`, `SELECT COLUMNS(*)::VARCHAR FROM read_parquet(${literal(file.path)})`, (names, records) =>
      Effect.sync(() => {
        const cols = new Map(names.map((c, i) => [c, i]))
        onRows(records.map((record) => ({ line: ++line, get: (c) => (record[cols.get(c) ?? -1] ?? "").trim(), has: (c) => cols.has(c) })))
      }))
  }).pipe(readingFile(engine, file))

/** A CSV or TSV file's rows: the first line names the columns, or is a row too in a file without a header (its columns are OmopFile.headerless's). */
const forEachTextRow = (file: OmopFile, onRows: (rows: ReadonlyArray<OmopRow>) => void): Effect.Effect<void, Error> =>
  Effect.suspend(() => {
    const delimiter = delimiterOf(firstLineOf(file))
    let columns: Map<string, number> | undefined = file.headerless === undefined ? undefined : new Map(file.headerless.columns.map((c, i) => [c, i]))
    const parser = parse({ ...textOptions(delimiter), info: true })
    const source = createReadStream(file.path)
    return NodeStream.fromReadable<{ readonly info: { readonly lines: number }; readonly record: Array<string> }, Error>({
      evaluate: () => (file.gzip ? source.pipe(createGunzip()) : source).pipe(parser),
      onError: (e) => new ImportRejected([`${file.name}: not valid ${delimiter === "\t" ? "TSV" : "CSV"}: ${e instanceof Error ? e.message : String(e)}`], 1)
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
