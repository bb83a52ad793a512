/**
 * `hcc data import` (`--format csv`): a folder of the service's own tables (`<table>.csv`, the
 * layout `hcc data export` writes, docs/data.md) → the health dataset, streamed: each file is read
 * and checked row by row (csv/tableFile.ts) in the tables' dependency order, and each batch of good
 * rows goes straight into the set of tables being filled (DatasetWriter.ts), so memory holds only
 * the vocabulary and the keys other tables reference, whatever the size. Anything wrong anywhere
 * fails the write before the new set is switched to: nothing is imported.
 */
import * as Effect from "effect/Effect"
import { existsSync, statSync } from "node:fs"
import { join } from "node:path"
import { parseDate } from "../../health/calendar.ts"
import { replaceDataset } from "../../health/DatasetWriter.ts"
import type { Rows } from "../../health/healthTables.ts"
import { HEALTH_TABLES, type HealthTableName } from "../../health/healthTables.ts"
import { type PhaseProgress, PhaseTimes } from "../../health/progress.ts"
import { DuplicateKeys } from "./DuplicateKeys.ts"
import { KeySet } from "./KeySet.ts"
import { readWholeTable, type TableContext } from "./tableFile.ts"
import { removeLeftovers, scratchPath } from "../../pipeline/importCommon.ts"
import { ImportRejected, MAX_REPORTED_PROBLEMS } from "../../pipeline/Report.ts"

/** Tables an import must contain; the others may be left out (they import empty). */
export const REQUIRED_TABLES: ReadonlyArray<HealthTableName> = ["vocabulary", "dataset_info", "patients"]

/** Tables other tables reference (by their first column): their keys are kept while reading. */
const REFERENCED = new Set(HEALTH_TABLES.flatMap((t) => t.columns.flatMap((c) => (c.references === undefined ? [] : [c.references]))))

/** What a CSV import reports. */
export interface CsvImportSummary {
  readonly format: "csv"
  readonly folder: string
  readonly patients: number
  /** Rows written, by table. */
  readonly rows: Readonly<Record<string, number>>
  readonly bytes: number
  readonly seconds: number
  /** Seconds each phase took (reading: read, checked and written as read). */
  readonly phases: Readonly<Record<string, number>>
}

/** Options of a CSV import. */
export interface CsvImportOptions {
  readonly folder: string
  /** Where scratch files go (the data folder). */
  readonly stagingDir: string
  readonly onProgress?: PhaseProgress | undefined
  /** Runs with the summary once the new dataset is in place (see DatasetWriter's onSwitched). */
  readonly onSwitched?: ((summary: CsvImportSummary) => Effect.Effect<void>) | undefined
}

/** Problems of an import: the first MAX_REPORTED_PROBLEMS listed, all counted. */
const problemList = () => {
  const listed: Array<string> = []
  let total = 0
  return {
    add: (text: string) => {
      total++
      if (listed.length < MAX_REPORTED_PROBLEMS) listed.push(text)
    },
    get total() {
      return total
    },
    rejected: () => new ImportRejected(listed, total)
  }
}

/** Imports a folder of the service's CSV tables (see the module comment); fails with ImportRejected listing every problem. */
export const importCsv = (options: CsvImportOptions) =>
  Effect.gen(function*() {
    const started = performance.now()
    const { folder } = options
    if (!existsSync(folder) || !statSync(folder).isDirectory()) return yield* Effect.fail(new ImportRejected([`${folder}: no such folder`], 1))
    const problems = problemList()
    for (const t of REQUIRED_TABLES) if (!existsSync(join(folder, `${t}.csv`))) problems.add(`${t}.csv: missing (required)`)
    if (problems.total > 0) return yield* Effect.fail(problems.rejected())
    const present = HEALTH_TABLES.filter((t) => existsSync(join(folder, `${t.name}.csv`)))
    const sizes = present.map((t) => statSync(join(folder, `${t.name}.csv`)).size)
    const bytes = sizes.reduce((a, b) => a + b, 0)
    const phases = new PhaseTimes()
    const progress = phases.tracking(options.onProgress)
    yield* removeLeftovers(options.stagingDir)
    const scratch = scratchPath(options.stagingDir, "keys")
    let duplicates: DuplicateKeys | undefined
    const ctx: TableContext = {
      problem: problems.add,
      vocabulary: new Map(),
      keys: new Map([...REFERENCED].map((t) => [t, new KeySet()])),
      codesFrom: "vocabulary.csv",
      duplicates: () => (duplicates ??= new DuplicateKeys(scratch))
    }
    const rows: Record<string, number> = {}
    const asOf: Array<unknown> = []

    const produce = <E, R>(write: (chunk: { readonly rows: Rows; readonly done: number }) => Effect.Effect<void, E, R>) =>
      Effect.gen(function*() {
        let before = 0
        for (const [i, table] of present.entries()) {
          yield* readWholeTable(table, join(folder, `${table.name}.csv`), `${table.name}.csv`, ctx, (batch, bytesRead) => {
            const done = (before + Math.min(bytesRead, sizes[i]!)) / Math.max(1, bytes)
            if (table.name === "dataset_info") for (const r of batch) if (r[0] === "as_of") asOf.push(r[1])
            // Once anything is wrong nothing will be imported: the rest is only read for its problems.
            if (problems.total > 0) return progress("reading", done)
            rows[table.name] = (rows[table.name] ?? 0) + batch.length
            return write({ rows: { [table.name]: batch }, done })
          })
          before += sizes[i]!
        }
        yield* progress("reading", 1)
        if (present.some((t) => t.name === "dataset_info") && (asOf.length !== 1 || Number.isNaN(parseDate(String(asOf[0]))))) {
          problems.add("dataset_info.csv: the row with key as_of and a YYYY-MM-DD value is required")
        }
        if (problems.total > 0) return yield* Effect.fail(problems.rejected())
      })

    yield* progress("reading", 0)
    return yield* replaceDataset<ImportRejected | Error>({ produce }, {
      onProgress: (done) => progress("reading", done),
      onSwitched: Effect.suspend(() => {
        phases.end()
        const summary: CsvImportSummary = {
          format: "csv",
          folder,
          patients: rows["patients"] ?? 0,
          rows: Object.fromEntries(HEALTH_TABLES.map((t) => [t.name, rows[t.name] ?? 0])),
          bytes,
          seconds: Math.round((performance.now() - started) / 100) / 10,
          phases: phases.toRecord()
        }
        return options.onSwitched?.(summary) ?? Effect.void
      })
    }).pipe(Effect.ensuring(Effect.sync(() => duplicates?.dispose())))
  })
