/**
 * `hcc data import --format fhir`: a FHIR R4 Bulk Data export → the health dataset. Two phases
 * over the files (bulkFiles.ts): first the resources others refer to (Patient, Organization,
 * Medication, and the service's own CodeSystems), then the rest; each resource mapped by
 * fhir/resources.ts into facts, collected in a staging file (Staging.ts), checked whole, and only
 * then written as one new dataset in one transaction — any problem, and nothing is written.
 */
import { Effect } from "effect"
import type * as fhir4 from "fhir/r4.js"
import { ImportRejected } from "../health/csv.ts"
import { parseDate } from "../health/calendar.ts"
import type { Report } from "./Report.ts"
import { type BulkFile, findBulkFiles, forEachLines } from "./fhir/bulkFiles.ts"
import { type FhirContext, mapResource, type MedicationCode, PHASE_ONE, PHASE_TWO, READ_TYPES } from "./fhir/resources.ts"
import { type ImportSetup, type ImportSummary, finishImport, loadSetup, surveillanceOf } from "./importCommon.ts"
import type { Staging } from "./Staging.ts"

/** Options of a FHIR import. */
export interface FhirImportOptions {
  /** Folders of bulk files, or files. */
  readonly paths: ReadonlyArray<string>
  /** `YYYY-MM-DD`; default the latest date in the data. */
  readonly asOf?: string | undefined
  readonly axisModelFile?: string | undefined
  readonly regionMapFile?: string | undefined
  /** Where the staging file goes (the data folder). */
  readonly stagingDir: string
  readonly onProgress?: ((done: number) => Effect.Effect<void>) | undefined
}

/** JSON.parse that returns its error instead of throwing it. */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch (e) {
    return e instanceof SyntaxError ? e : new SyntaxError(String(e))
  }
}

/** Reads the files of one phase into the staging store. */
const readPhase = (
  files: ReadonlyArray<{ readonly file: BulkFile; readonly number: number }>,
  types: ReadonlySet<string>,
  setup: ImportSetup,
  staging: Staging,
  ctx: () => FhirContext,
  medications: Map<string, MedicationCode>,
  progress: (bytes: number) => Effect.Effect<void>
) =>
  Effect.forEach(files.filter(({ file }) => file.type !== undefined && types.has(file.type)), ({ file, number }) =>
    Effect.gen(function*() {
      const report: Report = setup.report
      const type = file.type!
      const context = ctx()
      let base = 0
      yield* forEachLines(file, (lines, first) => {
        for (let i = 0; i < lines.length; i++) {
          const text = lines[i]!
          if (text.trim() === "") continue
          const line = first + i
          const where = `${file.name}:${line}`
          const parsed = parseJson(text)
          if (parsed instanceof SyntaxError) {
            report.problem(where, "", `not JSON: ${parsed.message}`)
            continue
          }
          const resource = parsed as fhir4.FhirResource
          if (typeof resource !== "object" || resource === null || typeof resource.resourceType !== "string") {
            report.problem(where, "resourceType", "is required (each line is one FHIR resource)")
            continue
          }
          if (resource.resourceType !== type) {
            report.problem(where, "resourceType", `'${resource.resourceType}' in a file of ${type} resources (a bulk file holds one type)`)
            continue
          }
          report.count(type)
          const mapped = mapResource(resource, context)
          for (const p of mapped.problems) report.problem(where, p.path, p.reason)
          for (const n of mapped.notes ?? []) report.note(n)
          if (mapped.problems.length > 0) continue
          const origin = { file: number, line, where, type }
          for (const f of mapped.facts) {
            if (f.k === "medication") {
              medications.set(f.src, { codings: f.codings, text: f.text ?? undefined })
              for (const id of f.identifiers) if (!medications.has(id)) medications.set(id, { codings: f.codings, text: f.text ?? undefined })
            } else {
              staging.add(origin, f)
            }
          }
        }
      }, (bytes) => {
        base = bytes
        Effect.runSync(progress(bytes))
      })
      yield* progress(base)
    }), { discard: true })

/** Imports a FHIR Bulk Data export (see the module comment); fails with ImportRejected listing every problem. */
export const importFhir = (options: FhirImportOptions) =>
  Effect.gen(function*() {
    const started = performance.now()
    const { files, missing } = findBulkFiles(options.paths)
    if (missing.length > 0) return yield* Effect.fail(new ImportRejected(missing.map((m) => `${m}: no such file or folder`), missing.length))
    if (files.length === 0) return yield* Effect.fail(new ImportRejected([`${options.paths.join(", ")}: no FHIR Bulk Data files (*.ndjson, *.ndjson.gz)`], 1))
    const asOf = options.asOf === undefined ? undefined : parseDate(options.asOf)
    if (asOf !== undefined && Number.isNaN(asOf)) return yield* Effect.fail(new ImportRejected([`--as-of: '${options.asOf}' is not a date (YYYY-MM-DD)`], 1))
    return yield* Effect.acquireUseRelease(
      loadSetup(options, "fhir"),
      (setup) =>
        Effect.gen(function*() {
          const { report, staging } = setup
          const numbered = files.map((file, number) => ({ file, number }))
          for (const { file } of numbered) {
            if (file.type === undefined) report.note(`${file.name}: empty, no resource type`)
            else if (!READ_TYPES.has(file.type)) report.skip(file.type, yield* countLines(file))
          }
          const total = files.filter((f) => f.type !== undefined && READ_TYPES.has(f.type)).reduce((s, f) => s + f.bytes, 0)
          let done = 0
          const progress = (share: (bytes: number) => number) => (bytes: number) => options.onProgress?.(0.8 * share(bytes)) ?? Effect.void
          const medications = new Map<string, MedicationCode>()
          const ctx = (): FhirContext => ({ axisModel: setup.axisModel, regions: setup.regions, medications })
          // Phase one in file order, so patients get their ids in the order of the export.
          for (const phase of [new Set<string>(PHASE_ONE), new Set<string>(PHASE_TWO)]) {
            for (const entry of numbered) {
              if (entry.file.type === undefined || !phase.has(entry.file.type)) continue
              const before = done
              yield* readPhase([entry], phase, setup, staging, ctx, medications, progress((b) => (before + b) / Math.max(1, total)))
              done += entry.file.bytes
            }
            if (phase.has("Patient")) staging.closePhaseOne()
          }
          if (report.read.get("Patient") === undefined && report.problemCount === 0) report.problem(options.paths.join(", "), "", "no Patient resources (a Patient file is required)")
          const surveillance = yield* surveillanceOf(options.paths, setup)
          if (report.problemCount > 0) return yield* Effect.fail(new ImportRejected(report.problems, report.problemCount))
          staging.closePhaseTwo()
          return yield* finishImport(setup, {
            asOf,
            format: "fhir",
            surveillance,
            files: files.length,
            bytes: files.reduce((s, f) => s + f.bytes, 0),
            started,
            onProgress: options.onProgress
          })
        }),
      (setup) => Effect.sync(() => setup.staging.close())
    )
  })

/** The non-empty lines of a file the importer does not read (counted for the summary). */
const countLines = (file: BulkFile) =>
  Effect.gen(function*() {
    let n = 0
    yield* forEachLines(file, (lines) => {
      for (const l of lines) if (l.trim() !== "") n++
    })
    return n
  })

export type { ImportSummary }
