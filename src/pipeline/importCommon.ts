/**
 * What every import format shares: the axis and region maps it reads with (shipped, or an
 * operator's own, checked), the staging store, the surveillance series brought beside the data,
 * the one transaction that replaces the dataset, and the summary.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import { randomUUID } from "node:crypto"
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { dayOfMillis } from "../health/calendar.ts"
import { replaceDataset } from "../health/DatasetWriter.ts"
import type { Rows } from "../health/healthTables.ts"
import { type PhaseProgress, PhaseTimes } from "../health/progress.ts"
import { AxisModelFile, compileAxisModel, type CompiledAxisModel, DEFAULT_AXIS_MODEL } from "./AxisModel.ts"
import { compileRegionMap, DEFAULT_REGION_MAP, type RegionMap, RegionMapFile } from "./regions.ts"
import { ImportRejected, Report } from "./Report.ts"
import type { DerivedTable } from "./reconcile.ts"
import type { ImportSummary } from "./importSummary.ts"
import { datasetRows } from "./StagedDataset.ts"
import { Staging } from "./Staging.ts"

/** An import under way: its report, its staging store and the maps it reads with. */
export interface ImportSetup {
  readonly report: Report
  /** The import's id (its scratch files are named after it). */
  readonly id: string
  readonly staging: Staging
  readonly axisModel: CompiledAxisModel
  readonly regions: RegionMap
  /** The files they were compiled from (parse threads compile their own). */
  readonly axisModelFile: AxisModelFile
  readonly regionMapFile: RegionMapFile
  /** Region codes the map knows (the surveillance files may name them). */
  readonly regionCodes: ReadonlySet<string>
  /** The time each phase took (for the summary). */
  readonly phases: PhaseTimes
  /** Reports a phase's share done: to the caller's display, timed in `phases`. */
  readonly progress: PhaseProgress
}

/** The staging files of imports, in the data folder. */
const STAGING = /^import-[0-9a-z-]+(\.staging\.db(-journal|-wal|-shm)?|\.spill)$/

/** Removes the scratch files and folders an import killed earlier left in `dir`. */
export const removeLeftovers = (dir: string) =>
  Effect.try({
    try: () => {
      if (existsSync(dir)) for (const f of readdirSync(dir)) if (STAGING.test(f)) rmSync(join(dir, f), { recursive: true, force: true })
    },
    catch: (e) => new Error(`cannot remove an earlier import's scratch files in ${dir}: ${e instanceof Error ? e.message : String(e)}`)
  })

/** A new scratch file's path in `dir` (named so that removeLeftovers finds it). */
export const scratchPath = (dir: string, what: string): string => join(dir, `import-${randomUUID()}-${what}.staging.db`)

/** Reads and checks a JSON file against a schema; every mismatch is `file: path: reason`. */
const readJsonFile = <S extends Schema.Top>(file: string, schema: S): Effect.Effect<S["Type"], ImportRejected> =>
  Effect.gen(function*() {
    const text = yield* Effect.try({ try: () => readFileSync(file, "utf8"), catch: (e) => new ImportRejected([`${file}: cannot be read: ${e instanceof Error ? e.message : String(e)}`], 1) })
    const json = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: (e) => new ImportRejected([`${file}: not JSON: ${e instanceof Error ? e.message : String(e)}`], 1) })
    return yield* Schema.decodeUnknownEffect(schema as unknown as Schema.Codec<S["Type"], unknown>)(json).pipe(
      Effect.mapError((e) => {
        const issues = SchemaIssue.makeFormatterStandardSchemaV1()(e.issue).issues
        const lines = issues.map((i) => `${file}: /${(i.path ?? []).map((p) => String(typeof p === "object" ? p.key : p)).join("/")}: ${i.message}`)
        return new ImportRejected(lines.slice(0, 50), lines.length)
      })
    )
  })

/** Loads the maps (an operator's own when given) and opens a staging store, removing any a killed import left. */
export const loadSetup = (
  options: {
    readonly axisModelFile?: string | undefined
    readonly regionMapFile?: string | undefined
    readonly stagingDir: string
    readonly onProgress?: PhaseProgress | undefined
    readonly strict?: boolean | undefined
  },
  format: string
) =>
  Effect.gen(function*() {
    const axisFile = options.axisModelFile === undefined ? DEFAULT_AXIS_MODEL : yield* readJsonFile(options.axisModelFile, AxisModelFile)
    const regionFile = options.regionMapFile === undefined ? DEFAULT_REGION_MAP : yield* readJsonFile(options.regionMapFile, RegionMapFile)
    const regions = yield* Effect.try({ try: () => compileRegionMap(regionFile), catch: (e) => new ImportRejected([`${options.regionMapFile}: ${e instanceof Error ? e.message : String(e)}`], 1) })
    yield* removeLeftovers(options.stagingDir)
    const today = dayOfMillis(yield* Clock.currentTimeMillis)
    const staging = yield* Effect.try({
      try: () => {
        const report = new Report()
        const id = randomUUID()
        return { report, id, staging: new Staging(join(options.stagingDir, `import-${id}.staging.db`), report, format === "omop" ? "omop" : "fhir", today, options.strict === true) }
      },
      catch: (e) => new Error(`cannot open the ${format} import's staging file in ${options.stagingDir}: ${e instanceof Error ? e.message : String(e)}`)
    })
    const phases = new PhaseTimes()
    return {
      ...staging,
      phases,
      progress: phases.tracking(options.onProgress),
      axisModel: compileAxisModel(axisFile),
      regions,
      axisModelFile: axisFile,
      regionMapFile: regionFile,
      regionCodes: new Set(regionFile.regions.map((r) => r.code))
    } satisfies ImportSetup
  })

/**
 * Rows naming a person the dataset lacks may be at most this share of the rows read (the vocabulary
 * tables aside): past it, the person table evidently does not go with the rest of the files, and the
 * import is refused. Below it they are left out and reported per table and column with their rate,
 * as the Data Quality Dashboard reports its foreign-key checks.
 */
export const MAX_ORPHAN_SHARE = 0.5

/** OMOP's vocabulary tables: rows about concepts, not people. */
const VOCABULARY_TABLES: ReadonlySet<string> = new Set(["concept", "concept_relationship", "concept_ancestor"])

/** Rows naming a person the dataset lacks, by table and column, with their share of that table's rows read. */
const orphansOf = (report: Report): Record<string, { readonly rows: number; readonly rate: number }> =>
  Object.fromEntries([...report.orphans].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([column, rows]) => {
    const read = report.read.get(column.slice(0, column.indexOf("."))) ?? rows
    return [column, { rows, rate: Math.round((rows / Math.max(1, read)) * 10_000) / 10_000 }]
  }))

/** The import's refusal when rows naming no person pass MAX_ORPHAN_SHARE of the rows read, else undefined. */
const tooManyOrphans = (report: Report): ImportRejected | undefined => {
  let orphans = 0
  for (const n of report.orphans.values()) orphans += n
  let read = 0
  for (const [table, n] of report.read) if (!VOCABULARY_TABLES.has(table)) read += n
  if (orphans === 0 || orphans <= MAX_ORPHAN_SHARE * read) return undefined
  const lines = Object.entries(orphansOf(report)).map(([column, o]) => `${column}: ${o.rows} rows (${(o.rate * 100).toFixed(1)} %) name a person the data does not hold`)
  return new ImportRejected([
    `${orphans} of ${read} rows read (${((orphans / read) * 100).toFixed(1)} %) name a person the data does not hold, more than the ${MAX_ORPHAN_SHARE * 100} % an import accepts: is the person table (PERSON, Patient) the one that goes with the other files?`,
    ...lines
  ], 1 + lines.length)
}


const sorted = (m: ReadonlyMap<string, number>) => Object.fromEntries([...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)))

/**
 * Ends the reading, turns the staged facts into the dataset's tables and writes them in one
 * transaction; says what was done. `onSwitched` runs with the summary right after the new dataset
 * is in place, in the same uninterruptible step: once the dataset has switched, a stop signal no
 * longer makes the command report that it stopped before.
 */
export const finishImport = (
  setup: ImportSetup,
  options: {
    readonly asOf: number | undefined
    readonly format: string
    readonly surveillance: Rows | undefined
    /** The source's derived tables present, to compare with (OMOP). */
    readonly derived?: ReadonlySet<DerivedTable> | undefined
    readonly files: number
    readonly bytes: number
    readonly started: number
    /** FHIR: the parse threads the files were read on (0: the importing thread). */
    readonly parseThreads?: number | undefined
    readonly onSwitched?: ((summary: ImportSummary) => Effect.Effect<void>) | undefined
  }
) =>
  Effect.gen(function*() {
    yield* setup.progress("staging", 0)
    yield* Effect.try({ try: () => setup.staging.closePhaseTwo(), catch: (e) => new ImportRejected([e instanceof Error ? e.message : String(e)], 1) })
    // Closing resolves records read more than once; one that cannot be resolved is a problem.
    if (setup.report.problemCount > 0) return yield* Effect.fail(new ImportRejected(setup.report.problems, setup.report.problemCount))
    const refused = tooManyOrphans(setup.report)
    if (refused !== undefined) return yield* Effect.fail(refused)
    const { chunks, made } = yield* Effect.try({
      try: () => {
        return datasetRows(setup.staging.facts(), { asOf: options.asOf, format: options.format, axisModelVersion: setup.axisModel.version, regions: setup.regions, surveillance: options.surveillance, derived: options.derived })
      },
      catch: (e) => new ImportRejected([e instanceof Error ? e.message : String(e)], 1)
    })
    yield* setup.progress("staging", 1)
    let summary: ImportSummary | undefined
    const summarize = () => {
      setup.phases.end()
      const m = made()
      return {
        format: options.format,
        as_of: m.asOf,
        files: options.files,
        bytes: options.bytes,
        seconds: Math.round((performance.now() - options.started) / 100) / 10,
        read: sorted(setup.report.read),
        skipped: sorted(setup.report.skipped),
        left_out: sorted(setup.report.notes),
        orphans: orphansOf(setup.report),
        rows: Object.fromEntries(Object.entries(m.rows).filter(([t]) => t !== "source_ids").concat([["source_ids", m.rows["source_ids"] ?? 0]])),
        unmapped: m.unmapped,
        reconciled: m.reconciled,
        axis_coverage: Object.fromEntries(Object.entries(m.axisCoverage).map(([a, share]) => [a, Math.round(share * 1000) / 1000])),
        axis_model: setup.axisModel.version,
        phases: setup.phases.toRecord(),
        ...(options.parseThreads === undefined ? {} : { parse_threads: options.parseThreads })
      } satisfies ImportSummary
    }
    yield* replaceDataset(chunks, {
      onProgress: (done) => setup.progress("writing", done),
      onSwitched: Effect.suspend(() => {
        summary = summarize()
        return options.onSwitched?.(summary) ?? Effect.void
      })
    })
    return summary ?? summarize()
  })
