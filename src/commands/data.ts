/** `hcc data …`: generate, import and export the health dataset (docs/cli.md, docs/data.md). */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { AppConfig, parseThreads } from "../config/AppConfig.ts"
import * as Database from "../db/Database.ts"
import { replaceDataset } from "../health/DatasetWriter.ts"
import { removeSnapshot } from "../health/snapshot.ts"
import { DEFAULT_POPULATION, MAX_PATIENTS, MAX_SEED } from "../config/limits.ts"
import { generatedForWriting } from "../synthetic/generationThread.ts"
import { inPhase, progressBar, ProgressOut } from "../health/progress.ts"
import { formatSummary, type ImportSummary } from "../pipeline/importSummary.ts"
import { Committed, emit, emitter, UsageError } from "./output.ts"

// Each format's reader and writer loads (Effect.promise of an import) when a command uses it: every
// other command (accounts, tokens, another format) starts without their module graphs.

/** The migrated database of the configured data folder. */
const DatabaseLive = Database.layer.pipe(Layer.provideMerge(AppConfig.layer))

/** Progress bars on the command's progress stream (stderr for the process; runCli's own writer). */
const progressBars = Effect.map(Effect.service(ProgressOut), (out) => (label: string) => progressBar(label, out))

const SWITCH_NOTE = "A running server switches to it on its own within HCC_DATASET_POLL_SECONDS (10 s by default), answering from the old one meanwhile."

export const dataGenerate = Command.make(
  "generate",
  {
    patients: Flag.Int("patients").pipe(Flag.withDescription(`Patients to generate, 1 to ${MAX_PATIENTS} (default HCC_POPULATION, ${DEFAULT_POPULATION})`), Flag.optional),
    seed: Flag.Int("seed").pipe(Flag.withDescription("Generator seed (default HCC_SEED); the same seed gives the same data"), Flag.optional)
  },
  (flags) =>
    Effect.gen(function*() {
      const bar = yield* progressBars
      const config = yield* AppConfig
      const patients = Option.getOrElse(flags.patients, () => config.population)
      const seed = Option.getOrElse(flags.seed, () => config.seed)
      if (patients < 1 || patients > MAX_PATIENTS) return yield* Effect.fail(new UsageError(`--patients must be between 1 and ${MAX_PATIENTS}`))
      if (seed < 0 || seed > MAX_SEED) return yield* Effect.fail(new UsageError(`--seed must be between 0 and ${MAX_SEED}`))
      const started = performance.now()
      const say = yield* emitter
      const committed = yield* Committed
      yield* replaceDataset(generatedForWriting({ patients, seed }), {
        onProgress: inPhase(bar(`generating ${patients} patients`), "writing"),
        onSwitched: Effect.suspend(() => {
          committed.done = true
          const seconds = Number(((performance.now() - started) / 1000).toFixed(1))
          return Effect.andThen(removeSnapshot(config.dataDir), say({ patients, seed, seconds }, () => `generated ${patients} patients with seed ${seed} in ${seconds.toFixed(1)} s. ${SWITCH_NOTE}`))
        })
      })
    }).pipe(Effect.provide(DatabaseLive))
).pipe(
  Command.withDescription("Replace the health dataset with a generated synthetic population (planted truths: docs/data.md)"),
  Command.withExamples([{ command: "hcc data generate --patients 200000 --seed 7", description: "200,000 patients from seed 7 (progress on stderr)" }])
)

const folder = Argument.String("folder").pipe(Argument.withDescription("Folder to write to (created when missing)"))
const sources = Argument.String("paths").pipe(
  Argument.atLeast(1),
  Argument.withDescription("csv: one folder of <table>.csv files; fhir: folders of Bulk Data files (*.ndjson, *.ndjson.gz) or the files; omop: one folder of OMOP CDM tables (CSV, TSV or Parquet)")
)

export const dataImport = Command.make(
  "import",
  {
    paths: sources,
    format: Flag.Literals("format", ["csv", "fhir", "omop"]).pipe(Flag.withDefault("csv" as const), Flag.withDescription("csv (the service's own tables, default), fhir (FHIR R4 Bulk Data) or omop (OMOP CDM 5.3 or 5.4)")),
    asOf: Flag.String("as-of").pipe(Flag.withDescription("fhir, omop: the dataset's as_of date, YYYY-MM-DD (default: OMOP's CDM_SOURCE.source_release_date or the FHIR Bulk manifest's transactionTime, else the latest date in the data not after today)"), Flag.optional),
    timeZone: Flag.String("time-zone").pipe(Flag.withDescription("fhir: the IANA time zone whose calendar days instants fall on, e.g. America/New_York (default: the date as written in each dateTime)"), Flag.optional),
    axisModel: Flag.String("axis-model").pipe(Flag.withDescription("fhir, omop: an axis model file to use instead of the shipped one (layout: docs/data.md)"), Flag.optional),
    regionMap: Flag.String("region-map").pipe(Flag.withDescription("fhir, omop: a region map file to use instead of the shipped one (layout: docs/data.md)"), Flag.optional),
    strict: Flag.Boolean("strict").pipe(Flag.withDefault(false), Flag.withDescription("fhir, omop: refuse the import if any row names a person the data does not hold (default: such rows are left out and counted, and the import is refused only when they are more than half of the rows read)")),
    threads: Flag.String("threads").pipe(
      Flag.withDescription("fhir: the threads that read and parse the files, besides this one: a number from 0 (this thread alone) to 99, or auto (default: one per core, or none for an export of less than 32 MiB of NDJSON)"),
      Flag.optional
    )
  },
  (flags) =>
    Effect.gen(function*() {
      const bar = yield* progressBars
      const config = yield* AppConfig
      const say = yield* emitter
      const committed = yield* Committed
      // Once the new dataset is in place: the command is done whatever signal comes (Committed).
      const switched = (report: Effect.Effect<void>) => Effect.andThen(Effect.sync(() => (committed.done = true)), Effect.andThen(removeSnapshot(config.dataDir), report))
      if (flags.strict && flags.format === "csv") return yield* Effect.fail(new UsageError("--strict is for --format fhir and omop (the service's own CSV tables are always checked whole)"))
      if (Option.isSome(flags.timeZone) && flags.format !== "fhir") return yield* Effect.fail(new UsageError("--time-zone is for --format fhir (OMOP's date columns and the service's CSV tables hold dates already)"))
      if (Option.isSome(flags.threads) && flags.format !== "fhir") return yield* Effect.fail(new UsageError("--threads is for --format fhir"))
      const threads = Option.isNone(flags.threads) || flags.threads.value === "auto" ? undefined : parseThreads(flags.threads.value, 0)
      if (Option.isSome(flags.threads) && flags.threads.value !== "auto" && threads === undefined) return yield* Effect.fail(new UsageError("--threads must be auto or a whole number from 0 to 99"))
      if (flags.format === "csv") {
        if (flags.paths.length !== 1) return yield* Effect.fail(new UsageError("--format csv imports one folder"))
        const folder = flags.paths[0]!
        const { importCsv } = yield* Effect.promise(() => import("../formats/csv/importCsv.ts"))
        return yield* importCsv({
          folder,
          stagingDir: config.dataDir,
          onProgress: bar("importing CSV"),
          onSwitched: (summary) => switched(say(summary, () => `imported ${summary.patients} patients from ${folder} (${(summary.bytes / 1_048_576).toFixed(1)} MiB) in ${summary.seconds} s. ${SWITCH_NOTE}`))
        })
      }
      const options = {
        paths: flags.paths,
        asOf: Option.getOrUndefined(flags.asOf),
        axisModelFile: Option.getOrUndefined(flags.axisModel),
        regionMapFile: Option.getOrUndefined(flags.regionMap),
        strict: flags.strict,
        stagingDir: config.dataDir,
        onProgress: bar(`importing ${flags.format.toUpperCase()}`),
        onSwitched: (summary: ImportSummary) => switched(say(summary, () => `${formatSummary(summary)}\n${SWITCH_NOTE}`))
      }
      if (flags.format === "omop" && flags.paths.length !== 1) return yield* Effect.fail(new UsageError("--format omop imports one folder"))
      if (flags.format === "omop") {
        const { importOmop } = yield* Effect.promise(() => import("../formats/omop/importOmop.ts"))
        return yield* importOmop({ ...options, folder: flags.paths[0]! })
      }
      const { importFhir } = yield* Effect.promise(() => import("../formats/fhir/importFhir.ts"))
      yield* importFhir({ ...options, timeZone: Option.getOrUndefined(flags.timeZone), threads })
    }).pipe(Effect.provide(DatabaseLive))
).pipe(
  Command.withDescription("Replace the health dataset with an import; everything is checked first and nothing is written if anything is wrong (docs/data.md)"),
  Command.withExamples([
    { command: "hcc data import ./my-data", description: "Import ./my-data/patients.csv and the other tables" },
    { command: "hcc data import --format fhir ./bulk-export", description: "Import a FHIR R4 Bulk Data export (Patient.ndjson, Observation.1.ndjson.gz, …)" },
    { command: "hcc data import --format omop ./cdm --json", description: "Import OMOP CDM 5.3 or 5.4 tables (CSV, TSV or Parquet); the summary as JSON" }
  ])
)

export const dataExport = Command.make(
  "export",
  {
    folder,
    format: Flag.Literals("format", ["csv", "fhir", "omop"]).pipe(Flag.withDefault("csv" as const), Flag.withDescription("csv (the service's own tables, default), fhir (FHIR R4 Bulk Data NDJSON) or omop (OMOP CDM 5.4)")),
    gzip: Flag.Boolean("gzip").pipe(Flag.withDefault(false), Flag.withDescription("fhir: write .ndjson.gz files")),
    parquet: Flag.Boolean("parquet").pipe(Flag.withDefault(false), Flag.withDescription("omop: write .parquet files instead of CSV"))
  },
  ({ folder, format, gzip, parquet }) =>
    Effect.gen(function*() {
      const bar = yield* progressBars
      if (gzip && format !== "fhir") return yield* Effect.fail(new UsageError("--gzip is for --format fhir"))
      if (parquet && format !== "omop") return yield* Effect.fail(new UsageError("--parquet is for --format omop"))
      if (format === "csv") {
        const { writeFolder } = yield* Effect.promise(() => import("../formats/csv/exportCsv.ts"))
        yield* writeFolder(folder, bar("exporting"))
        return yield* emit({ format, folder }, () => `exported the health dataset to ${folder}`)
      }
      if (format === "omop") {
        const config = yield* AppConfig
        const { exportOmop } = yield* Effect.promise(() => import("../formats/omop/exportOmop.ts"))
        const tables = yield* exportOmop({ folder, parquet, scratchDir: config.dataDir, onProgress: inPhase(bar("exporting OMOP"), "writing") })
        return yield* emit({ format, folder, files: parquet ? "parquet" : "csv", rows: tables }, () =>
          `exported the health dataset to ${folder} as OMOP CDM 5.4 ${parquet ? "Parquet" : "CSV"}: ${Object.entries(tables).map(([t, n]) => `${n} ${t}`).join(", ")}`)
      }
      const { exportFhir } = yield* Effect.promise(() => import("../formats/fhir/exportFhir.ts"))
      const written = yield* exportFhir({ folder, gzip, onProgress: inPhase(bar("exporting FHIR"), "writing") })
      yield* emit({ format, folder, resources: written }, () =>
        `exported the health dataset to ${folder} as FHIR R4 Bulk Data: ${Object.entries(written).map(([t, n]) => `${n} ${t}`).join(", ")}`)
    }).pipe(Effect.provide(DatabaseLive))
).pipe(
  Command.withDescription("Write the health dataset as CSV files in the layout import reads, or as FHIR R4 Bulk Data or OMOP CDM 5.4 files that import back to the same dataset"),
  Command.withExamples([
    { command: "hcc data export ./backup", description: "One CSV file per table in ./backup" },
    { command: "hcc data export --format fhir --gzip ./bulk", description: "Patient.ndjson.gz, Observation.ndjson.gz, … in ./bulk" },
    { command: "hcc data export --format omop --parquet ./cdm", description: "person.parquet, measurement.parquet, concept.parquet, … in ./cdm" }
  ])
)

