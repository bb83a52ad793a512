/**
 * The tables of an OMOP CDM 5.4 folder: one file per table, CSV or TSV (the delimiter is read from
 * the header: Athena's vocabulary files are tab-separated whatever their extension), file and
 * column names in any case, optionally gzip'd. Rows are read as a stream, a batch at a time.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { parse } from "csv-parse"
import { Effect, Stream } from "effect"
import { closeSync, createReadStream, existsSync, openSync, readdirSync, readSync, statSync } from "node:fs"
import { join } from "node:path"
import { createGunzip, gunzipSync } from "node:zlib"

/** The CDM tables the importer reads, in the order it reads them (vocabulary and references first). */
export const OMOP_TABLES = [
  "concept",
  "concept_relationship",
  "concept_ancestor",
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
  readonly name: string
  readonly gzip: boolean
  readonly bytes: number
}

const FILE = /^(.+?)\.(csv|tsv|txt)(\.gz)?$/i

/** The files of the tables in a folder (any case), and the other files with a table-like name (not read). */
export const findOmopFiles = (folder: string): { readonly files: ReadonlyArray<OmopFile>; readonly others: ReadonlyArray<string> } => {
  const files: Array<OmopFile> = []
  const others: Array<string> = []
  for (const name of readdirSync(folder).sort()) {
    const m = FILE.exec(name)
    const path = join(folder, name)
    if (m === null || !statSync(path).isFile()) continue
    const table = m[1]!.toLowerCase()
    if ((OMOP_TABLES as ReadonlyArray<string>).includes(table)) files.push({ table: table as OmopTable, path, name, gzip: m[3] !== undefined, bytes: statSync(path).size })
    else others.push(name)
  }
  files.sort((a, b) => OMOP_TABLES.indexOf(a.table) - OMOP_TABLES.indexOf(b.table))
  return { files, others }
}

/** Whether a folder exists. */
export const isFolder = (path: string): boolean => existsSync(path) && statSync(path).isDirectory()

/** The delimiter of a file: a tab when its first line has one, else a comma. */
const delimiterOf = (file: OmopFile): string => {
  const fd = openSync(file.path, "r")
  const buffer = Buffer.alloc(16 * 1024)
  const n = readSync(fd, buffer, 0, buffer.length, 0)
  closeSync(fd)
  const head = file.gzip ? gunzipSync(buffer.subarray(0, n), { finishFlush: 2 }).toString("utf8") : buffer.subarray(0, n).toString("utf8")
  return (head.split("\n")[0] ?? "").includes("\t") ? "\t" : ","
}

/** A row with its columns by (lower-case) name. */
export interface OmopRow {
  readonly line: number
  /** The value of a column ('' when empty or absent). */
  readonly get: (column: string) => string
  /** Whether the file has the column. */
  readonly has: (column: string) => boolean
}

/** Reads a table's rows in batches; `onRows` gets each batch. Fails with the file's name when it is not valid CSV/TSV. */
export const forEachRow = (file: OmopFile, onRows: (rows: ReadonlyArray<OmopRow>) => void): Effect.Effect<void, Error> =>
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
