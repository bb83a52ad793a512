/**
 * `hcc data import --format omop`: an OMOP CDM 5.3 or 5.4 folder → the health dataset (docs/data.md,
 * "Importing OMOP CDM", rule by rule; the columns read are the same in both versions, except a text
 * answer, OBSERVATION's `value_as_string` in both and `value_source_value` in 5.4). The vocabulary tables first (CONCEPT turns concept ids into
 * standard codes; "Maps to" relationships and ingredient ancestors when present), then locations,
 * care sites, providers, deaths and persons, then the clinical tables, each row mapped to the
 * same facts the FHIR import makes and collected in the same staging store: checked whole, and
 * written as one new dataset in one transaction, or not at all.
 */
import * as Effect from "effect/Effect"
import { join } from "node:path"
import { parseDate } from "../../health/calendar.ts"
import { ImportRejected } from "../../pipeline/Report.ts"
import { Engine } from "../../pipeline/Engine.ts"
import type { PhaseProgress } from "../../health/progress.ts"
import { finishImport, type ImportSetup, loadSetup } from "../../pipeline/importCommon.ts"
import type { ImportSummary } from "../../pipeline/importSummary.ts"
import { surveillanceOf } from "../csv/surveillance.ts"
import { dayOf, idOf, isProblem, type RowResult } from "./cells.ts"
import { ObservationMapper, readInBulk } from "./observations.ts"
import { OmopVocabulary } from "./OmopVocabulary.ts"
import { findOmopFiles, forEachRow, isFolder, type OmopFile, type OmopRow, type OmopTable } from "./tables.ts"
import { col, loadVocabulary, relationOf } from "./vocabularyTables.ts"
import { type Origin, PARTS } from "../../pipeline/stagingTables.ts"
import { type OmopReader, type OmopReading, omopReading, readCareSite, readCondition, readDeath, readDeviceExposure, readDrugExposure, readEra, readLocation, readObservationPeriod, readPerson, readProcedure, readProvider, readVisit } from "./readers.ts"

/** Options of an OMOP import. */
export interface OmopImportOptions {
  readonly folder: string
  /** `YYYY-MM-DD`; default CDM_SOURCE.source_release_date, else the latest date in the data not after today. */
  readonly asOf?: string | undefined
  readonly axisModelFile?: string | undefined
  readonly regionMapFile?: string | undefined
  readonly stagingDir: string
  /** A row naming a person PERSON lacks is a problem, not a row left out and counted. */
  readonly strict?: boolean | undefined
  /** Each phase's share done: vocabulary, reading, staging, writing. */
  readonly onProgress?: PhaseProgress | undefined
  /** Runs with the summary once the new dataset is in place (see finishImport). */
  readonly onSwitched?: ((summary: ImportSummary) => Effect.Effect<void>) | undefined
}

/** Reads an OMOP CDM folder (see the module comment); fails with ImportRejected listing every problem. */
export const importOmop = (options: OmopImportOptions) =>
  Effect.gen(function*() {
    const started = performance.now()
    if (!isFolder(options.folder)) return yield* Effect.fail(new ImportRejected([`${options.folder}: no such folder`], 1))
    const { files } = findOmopFiles(options.folder)
    const missing = (["person"] as const).filter((t) => !files.some((f) => f.table === t))
    if (missing.length > 0) return yield* Effect.fail(new ImportRejected(missing.map((t) => `${t}.csv: missing (required; file names in any case, .csv, .tsv or .parquet)`), missing.length))
    const asOf = options.asOf === undefined ? undefined : parseDate(options.asOf)
    if (asOf !== undefined && Number.isNaN(asOf)) return yield* Effect.fail(new ImportRejected([`--as-of: '${options.asOf}' is not a date (YYYY-MM-DD)`], 1))
    return yield* Effect.acquireUseRelease(
      Effect.map(loadSetup(options, "omop"), (setup) => ({
        setup,
        vocabulary: new OmopVocabulary(join(options.stagingDir, `import-${setup.id}-vocabulary.staging.db`)),
        engine: new Engine(join(options.stagingDir, `import-${setup.id}.spill`))
      })),
      ({ engine, setup, vocabulary }) => read(options, setup, vocabulary, engine, files, asOf, started),
      ({ engine, setup, vocabulary }) => Effect.sync(() => {
        setup.staging.close()
        vocabulary.dispose()
        engine.dispose()
      })
    )
  })

/** The tables persons and visits refer to, then the persons, in the order they are read (each before those that refer to it). */
const REFERENCE_READERS: ReadonlyArray<readonly [OmopTable, (x: OmopReading) => OmopReader]> = [
  ["location", readLocation],
  ["care_site", readCareSite],
  ["provider", readProvider],
  ["death", readDeath],
  ["person", readPerson]
]

/** The clinical tables read row by row (MEASUREMENT and OBSERVATION are read in bulk). */
const CLINICAL_READERS: ReadonlyArray<readonly [OmopTable, (x: OmopReading) => OmopReader]> = [
  ["observation_period", readObservationPeriod],
  ["visit_occurrence", readVisit],
  ["condition_occurrence", readCondition],
  ["drug_exposure", readDrugExposure],
  ["procedure_occurrence", readProcedure],
  ["device_exposure", readDeviceExposure]
]

const read = (options: OmopImportOptions, setup: ImportSetup, vocabulary: OmopVocabulary, engine: Engine, files: ReadonlyArray<OmopFile>, asOf: number | undefined, started: number) =>
  Effect.gen(function*() {
    const { report, staging } = setup
    // Progress by bytes: the vocabulary tables, then the rest.
    const isVocabulary = (t: OmopTable) => t === "concept" || t === "concept_relationship" || t === "concept_ancestor"
    const totals = { vocabulary: 0, reading: 0 }
    for (const f of files) totals[isVocabulary(f.table) ? "vocabulary" : "reading"] += f.bytes
    const done = { vocabulary: 0, reading: 0 }
    const reading = omopReading(setup, vocabulary)

    /** Reads a file row by row (none when `onRow` is undefined: the file was read some other way) and counts it done. */
    const eachFile = (file: OmopFile, onRow: ((row: OmopRow, origin: Origin) => RowResult) | undefined) =>
      Effect.gen(function*() {
        const table = file.table
        if (onRow !== undefined) {
          yield* forEachRow(file, engine, (rows) => {
            for (const row of rows) {
              const place = { name: file.name, part: 0, line: row.line }
              const origin: Origin = { file: files.indexOf(file) * PARTS, line: row.line, place, type: table }
              report.count(table)
              const out = onRow(row, origin)
              if (out === undefined) continue
              if (typeof out === "string") report.note(out)
              else if (isProblem(out)) report.problem(place, out.path, out.reason)
              else for (const f of out) table === "person" ? staging.addPhaseOne(origin, f) : staging.add(origin, f)
            }
          })
        }
        const phase = isVocabulary(table) ? "vocabulary" : "reading"
        done[phase] += file.bytes
        yield* setup.progress(phase, done[phase] / Math.max(1, totals[phase]))
      })
    const each = (table: OmopTable, onRow: (row: OmopRow, origin: Origin) => RowResult) =>
      Effect.forEach(files.filter((f) => f.table === table), (file) => eachFile(file, onRow), { discard: true })

    // Vocabulary: what the tables use of it, through DuckDB; a table with rows whose ids are not
    // integers is read row by row, to report each of them.
    yield* setup.progress("vocabulary", 0)
    const badTables = yield* loadVocabulary(engine, files, {
      addConcept: (id, vocabularyId, code, name, conceptClass) => vocabulary.addConcept(id, vocabularyId, code, name, conceptClass),
      addMapsTo: (source, target) => vocabulary.addMapsTo(source, target),
      addAncestor: (descendant, ancestor) => vocabulary.addAncestor(descendant, ancestor),
      count: (table, rows) => report.count(table, rows),
      leftOut: (table, rows) => rows > 0 && report.note(`${table} rows the data does not use${table === "concept_relationship" ? " (or not a valid Maps to)" : ""}: left out`, rows)
    }, (d) => setup.progress("vocabulary", d))
    const ids = (...columns: ReadonlyArray<string>) => (r: OmopRow) => {
      for (const c of columns) {
        const id = idOf(r, c)
        if (isProblem(id)) return id
      }
    }
    const checks = { concept: ids("concept_id"), concept_relationship: ids("concept_id_1", "concept_id_2"), concept_ancestor: ids("descendant_concept_id", "ancestor_concept_id") } as const
    for (const table of badTables) yield* each(table, checks[table as keyof typeof checks])
    vocabulary.close()
    if (!vocabulary.hasConcepts) report.note("no CONCEPT table: concepts are known by concept_id and source value only")
    // The service's own entries (an export of ours): the dataset's vocabulary, used or not.
    const conceptFile = files.find((f) => f.table === "concept")
    for (const e of vocabulary.ownEntries()) {
      staging.addPhaseOne({ file: 0, line: 0, place: { name: conceptFile?.name ?? "concept", part: 0, line: 0 }, type: "concept" }, { k: "vocabulary", ...e })
    }

    // The CDM's own date "for which the source data are most current" (CDM_SOURCE) is the dataset's
    // as_of unless --as-of is given; one after the day of the import is counted, never taken.
    yield* setup.progress("reading", 0)
    let released: number | undefined
    yield* each("cdm_source", (r) => {
      const day = dayOf(r.get("source_release_date"), "source_release_date")
      if (day === undefined) return
      if (isProblem(day)) return "CDM_SOURCE.source_release_date not a date: not taken for as_of"
      if (day > staging.today) return "CDM_SOURCE.source_release_date after the day of the import: not taken for as_of"
      released = Math.max(released ?? day, day)
    })

    // What persons and visits refer to, then the persons.
    for (const [table, reader] of REFERENCE_READERS) yield* each(table, reader(reading))
    staging.closePhaseOne()
    // The persons' ids, for the bulk reads of MEASUREMENT and OBSERVATION (a row of a person not in PERSON is a problem).
    yield* engine.run("person ids", "CREATE OR REPLACE TEMP TABLE persons (id VARCHAR)")
    for (const file of files.filter((f) => f.table === "person")) {
      const { columns, from } = yield* relationOf(engine, file)
      yield* engine.run(`${file.name}: not readable`, `INSERT INTO persons SELECT DISTINCT trim(coalesce(${col(columns, "person_id")}::VARCHAR, '')) FROM ${from}`)
    }

    for (const [table, reader] of CLINICAL_READERS) yield* each(table, reader(reading))

    // MEASUREMENT and OBSERVATION: in bulk, else (a row with a problem) row by row (observations.ts).
    const drugOf = (id: string) => reading.conceptFor("drug", id, "", "")
    for (const table of ["measurement", "observation"] as const) {
      const mapper = new ObservationMapper(table, vocabulary, setup.axisModel, drugOf)
      for (const file of files.filter((f) => f.table === table)) {
        const fileIndex = files.indexOf(file)
        const inBulk = yield* readInBulk(mapper, engine, file, {
          staging,
          report,
          persons: "persons",
          origin: (line) => ({ file: fileIndex * PARTS, line, place: { name: file.name, part: 0, line }, type: table }),
          onStep: (share) => setup.progress("reading", (done.reading + share * file.bytes) / Math.max(1, totals.reading))
        })
        yield* eachFile(file, inBulk ? undefined : (r) => mapper.mapRow(r, (reason) => report.note(reason)))
      }
    }

    // The eras the source derived itself: compared with the import's, never stored (reconcile.ts).
    for (const table of ["drug_era", "condition_era"] as const) yield* each(table, readEra(table)(reading))

    if (report.read.get("person") === undefined && report.problemCount === 0) report.problem("person", "", "the PERSON table has no rows")
    const surveillance = yield* surveillanceOf([options.folder], setup)
    if (report.problemCount > 0) return yield* Effect.fail(new ImportRejected(report.problems, report.problemCount))
    // A release date does not date a shifted dataset's own dates (Staging.shifted).
    if (asOf === undefined && released !== undefined && staging.shifted) {
      report.note("CDM_SOURCE.source_release_date before the data's (shifted) dates: not taken for as_of")
      released = undefined
    }
    const derived = new Set(files.flatMap((f) => (f.table === "drug_era" || f.table === "condition_era" || f.table === "observation_period" ? [f.table] : [])))
    return yield* finishImport(setup, { asOf: asOf ?? released, derived, format: "omop", surveillance, files: files.length, bytes: files.reduce((s, f) => s + f.bytes, 0), started, onSwitched: options.onSwitched })
  })
