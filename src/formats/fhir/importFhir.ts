/**
 * `hcc data import --format fhir`: a FHIR R4 Bulk Data export → the health dataset. Two phases
 * over the files (bulkFiles.ts): first the resources others refer to (Patient, Organization,
 * Medication, and the service's own CodeSystems), then the rest; the files are read on parse
 * threads (parsePool.ts, one per core; a large file in parts; a small export on this thread),
 * each resource mapped by fhir/resources.ts into
 * facts, which this thread collects in a staging file (Staging.ts); checked whole, and only then
 * written as one new dataset in one transaction — any problem, and nothing is written.
 */
import * as Effect from "effect/Effect"
import { availableParallelism } from "node:os"
import { ImportRejected } from "../../pipeline/Report.ts"
import { parseDate } from "../../health/calendar.ts"
import type { Fact } from "../../pipeline/facts.ts"
import { findBulkFiles, findManifest, partsOf } from "./bulkFiles.ts"
import { type DayReader, dayReader, isProblem } from "./common.ts"
import type { LinesBatch } from "./mapLines.ts"
import { INLINE_BYTES, inlineParser, ndjsonBytes, parsePool } from "./parsePool.ts"
import { type MedicationCode, PHASE_ONE, PHASE_TWO, READ_TYPES } from "./resources.ts"
import type { PhaseProgress } from "../../health/progress.ts"
import { finishImport, type ImportSetup, loadSetup } from "../../pipeline/importCommon.ts"
import type { ImportSummary } from "../../pipeline/importSummary.ts"
import { surveillanceOf } from "../csv/surveillance.ts"
import { type Origin, PARTS } from "../../pipeline/stagingTables.ts"

/** Options of a FHIR import. */
export interface FhirImportOptions {
  /** Folders of bulk files, or files. */
  readonly paths: ReadonlyArray<string>
  /** `YYYY-MM-DD`; default the day of the manifest's transactionTime, else the latest date in the data not after today. */
  readonly asOf?: string | undefined
  /** The IANA time zone whose calendar days instants fall on; default: the date as written. */
  readonly timeZone?: string | undefined
  readonly axisModelFile?: string | undefined
  readonly regionMapFile?: string | undefined
  /** Where the staging file goes (the data folder). */
  readonly stagingDir: string
  /** A row naming a patient the export lacks is a problem, not a row left out and counted. */
  readonly strict?: boolean | undefined
  /** Parse threads (default: one per core; none for a small export, read on the importing thread); 0 reads on the importing thread. */
  readonly threads?: number | undefined
  /** Each phase's share done: reading, staging, writing. */
  readonly onProgress?: PhaseProgress | undefined
  /** Runs with the summary once the new dataset is in place (see finishImport). */
  readonly onSwitched?: ((summary: ImportSummary) => Effect.Effect<void>) | undefined
}

/**
 * The day of the manifest's `transactionTime` (in the import's time zone), the dataset's as_of unless --as-of is
 * given; one after the day of the import, or not an instant, or before data that lies after the day of the
 * import (a shifted dataset), is counted and not taken.
 */
const manifestDay = (manifest: ReturnType<typeof findManifest>, dayOf: DayReader, setup: ImportSetup): number | undefined => {
  if (manifest === undefined) return undefined
  const day = dayOf(manifest.transactionTime, "transactionTime")
  if (day === undefined || isProblem(day)) {
    setup.report.note(`${manifest.name}: the manifest's transactionTime is not an instant: not taken for as_of`)
    return undefined
  }
  if (day > setup.staging.today) {
    setup.report.note(`${manifest.name}: the manifest's transactionTime is after the day of the import: not taken for as_of`)
    return undefined
  }
  // The export's time does not date a shifted dataset's own dates (Staging.shifted).
  if (setup.staging.shifted) {
    setup.report.note(`${manifest.name}: the manifest's transactionTime is before the data's (shifted) dates: not taken for as_of`)
    return undefined
  }
  return day
}

/** Imports a FHIR Bulk Data export (see the module comment); fails with ImportRejected listing every problem. */
export const importFhir = (options: FhirImportOptions) =>
  Effect.gen(function*() {
    const started = performance.now()
    const { files, missing } = findBulkFiles(options.paths)
    if (missing.length > 0) return yield* Effect.fail(new ImportRejected(missing.map((m) => `${m}: no such file or folder`), missing.length))
    if (files.length === 0) return yield* Effect.fail(new ImportRejected([`${options.paths.join(", ")}: no FHIR Bulk Data files (*.ndjson, *.ndjson.gz)`], 1))
    const asOf = options.asOf === undefined ? undefined : parseDate(options.asOf)
    if (asOf !== undefined && Number.isNaN(asOf)) return yield* Effect.fail(new ImportRejected([`--as-of: '${options.asOf}' is not a date (YYYY-MM-DD)`], 1))
    const day = yield* Effect.try({
      try: () => dayReader(options.timeZone),
      catch: () => new ImportRejected([`--time-zone: '${options.timeZone}' is not an IANA time zone name (such as America/New_York or Europe/Paris)`], 1)
    })
    return yield* Effect.scoped(Effect.acquireUseRelease(
      loadSetup(options, "fhir"),
      (setup) =>
        Effect.gen(function*() {
          const { report, staging } = setup
          yield* setup.progress("reading", 0)
          // Every core: the importing thread mostly waits for the parse threads while they read. A
          // small export is read on this thread (threads: 0), as parsePool.ts explains.
          const threads = options.threads ?? (ndjsonBytes(files) < INLINE_BYTES ? 0 : Math.max(1, availableParallelism()))
          const init = { axisModel: setup.axisModelFile, regionMap: setup.regionMapFile, timeZone: options.timeZone }
          const pool = threads === 0 ? inlineParser(init) : yield* parsePool(threads, init)
          const total = Math.max(1, files.filter((f) => f.type !== undefined && READ_TYPES.has(f.type)).reduce((s, f) => s + f.bytes, 0))
          const readBytes = new Map<string, number>()
          const progress = () => {
            let done = 0
            for (const b of readBytes.values()) done += b
            return setup.progress("reading", Math.min(1, done / total))
          }
          // Medications until phase one ends (a Medication read again in a later version replaces the older).
          const medicationRecords: Array<{ readonly origin: Origin; readonly src: string; readonly identifiers: ReadonlyArray<string>; readonly code: MedicationCode }> = []
          // Every file in parts (a large uncompressed one in several, read on several threads).
          const tasks = files.flatMap((file, number) => partsOf(file).map((part) => ({ file, number, part })))

          /** Stages what a piece of a part gave: each record's facts, then the record (its id and version). */
          const take = (fileName: string, number: number, part: number, type: string) => (batch: LinesBatch) => {
            report.count(type, batch.read)
            for (const p of batch.problems) report.problem({ name: fileName, part, line: p.line }, p.path, p.reason)
            for (const [note, n] of Object.entries(batch.notes)) report.note(note, n)
            const origin = (line: number): Origin => ({ file: number * PARTS + part, line, place: { name: fileName, part, line }, type })
            let next = 0
            const stageFacts = (upTo: number) => {
              for (; next < batch.facts.length && batch.facts[next]![0] <= upTo; next++) {
                const [line, fact] = batch.facts[next]!
                const f = fact as Fact
                if (f.k === "medication") medicationRecords.push({ origin: origin(line), src: f.src, identifiers: f.identifiers, code: { codings: f.codings, text: f.text ?? undefined } })
                else staging.add(origin(line), f)
              }
            }
            for (const [line, id, updated] of batch.records) {
              stageFacts(line)
              staging.record(origin(line), id, updated)
            }
            // Facts of no record would be of a resource without an id, which mapResource refuses; none is dropped if one comes.
            stageFacts(Number.POSITIVE_INFINITY)
          }
          const readAll = (selected: typeof tasks) =>
            Effect.forEach(selected, ({ file, number, part }) =>
              pool.run(file, number, part, false, take(file.name, number, part.part, file.type!), (bytes) => {
                readBytes.set(`${number}/${part.part}`, bytes)
                Effect.runSync(progress())
              }).pipe(Effect.tap(({ lines }) => {
                report.setPartLines(file.name, part.part, lines)
                readBytes.set(`${number}/${part.part}`, part.end - part.start)
                return progress()
              })), { concurrency: Math.max(1, threads), discard: true })
          const ofTypes = (types: ReadonlyArray<string>) => tasks.filter(({ file }) => file.type !== undefined && types.includes(file.type))

          for (const file of files) if (file.type === undefined) report.note(`${file.name}: empty, no resource type`)
          const skippedTypes = tasks.filter(({ file }) => file.type !== undefined && !READ_TYPES.has(file.type))
          yield* Effect.forEach(skippedTypes, ({ file, number, part }) =>
            Effect.map(pool.run(file, number, part, true, () => {}, () => {}), ({ counted }) => report.skip(file.type!, counted)), { concurrency: Math.max(1, threads), discard: true })
          // Phase one (patients get their ids in the order of the export, whatever order its parts are read in).
          yield* readAll(ofTypes(PHASE_ONE))
          const superseded = staging.closePhaseOne()
          const medications = new Map<string, MedicationCode>()
          for (const m of medicationRecords.sort((a, b) => a.origin.file - b.origin.file || a.origin.line - b.origin.line)) {
            if (superseded(m.origin)) continue
            medications.set(m.src, m.code)
            for (const id of m.identifiers) if (!medications.has(id)) medications.set(id, m.code)
          }
          medicationRecords.length = 0
          pool.setMedications([...medications])
          yield* readAll(ofTypes(PHASE_TWO))
          if (report.read.get("Patient") === undefined && report.problemCount === 0) report.problem(options.paths.join(", "), "", "no Patient resources (a Patient file is required)")
          const surveillance = yield* surveillanceOf(options.paths, setup)
          if (report.problemCount > 0) return yield* Effect.fail(new ImportRejected(report.problems, report.problemCount))
          return yield* finishImport(setup, {
            asOf: asOf ?? manifestDay(findManifest(options.paths), day, setup),
            format: "fhir",
            surveillance,
            files: files.length,
            bytes: files.reduce((s, f) => s + f.bytes, 0),
            started,
            parseThreads: threads,
            onSwitched: options.onSwitched
          })
        }),
      (setup) => Effect.sync(() => setup.staging.close())
    ))
  })

export type { ImportSummary }
