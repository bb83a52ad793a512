/**
 * The HealthData service: on start-up, generates the default dataset if the database holds none
 * (HCC_POPULATION patients, HCC_SEED), then loads what queries need into typed arrays. Both run in
 * the background: the server listens at once, /readyz says 503 until the data is loaded, and data
 * endpoints answer 503 `unavailable` (with Retry-After) meanwhile. Cohort selection runs on the WASM
 * cohort-scan kernels. A network coordinator (HCC_NETWORK) holds no data: nothing is generated or
 * loaded, and its `data` check is ready at once.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as SqlClient from "effect/sql/SqlClient"
import { ComputePool, CoreArena } from "../compute/ComputePool.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { breathe } from "../eventLoop.ts"
import { recordDatasetLoading, recordDatasetReady } from "../observability/Metrics.ts"
import { type CheckState, Readiness } from "../http/Readiness.ts"
import { Kernels } from "../kernels/Kernels.ts"
import { DomainError } from "../plugin/errors.ts"
import { join } from "node:path"
import { bulkWriter } from "../db/Database.ts"
import * as Leases from "../db/Leases.ts"
import { hasDataset, replaceDataset } from "./DatasetWriter.ts"
import { generatedOnThread } from "../synthetic/generationThread.ts"
import { type Dataset, DatasetPreparations, HealthData, type HealthDataService } from "./HealthData.ts"
import { selectCohort } from "./cohorts.ts"
import { loadDataset } from "./loader.ts"
import { datasetStamp, readSnapshot, SNAPSHOT_FILE, type SnapshotRead, writeSnapshot } from "./snapshot.ts"

/** Reads of a dataset that was replaced while being read before the load gives up (each replacement is a whole import). */
const MAX_LOAD_ATTEMPTS = 5

/**
 * Runs the plugins' dataset preparations in order. A failing one is logged (with its plugin's
 * name) and skipped: its plugin answers `unavailable`, the other domains are served.
 */
export const prepareDataset = (dataset: Dataset) => {
  return Effect.gen(function*() {
    const preparations = yield* DatasetPreparations
    for (const { name, prepare } of preparations) {
      const started = performance.now()
      yield* breathe
      yield* prepare(dataset).pipe(
        Effect.tap(() => Effect.logInfo("dataset prepared").pipe(Effect.annotateLogs({ plugin: name, seconds: Number(((performance.now() - started) / 1000).toFixed(2)) }))),
        Effect.catchCause((cause) => Effect.logError("dataset preparation failed", cause).pipe(Effect.annotateLogs({ plugin: name })))
      )
    }
  })
}

/** Seconds a caller is told to wait while the dataset loads. */
export const LOADING_RETRY_AFTER_SECONDS = 5

type State =
  | { readonly _tag: "loading"; readonly step: string; readonly progress?: number }
  | { readonly _tag: "ready"; readonly dataset: Dataset }
  | { readonly _tag: "failed"; readonly reason: string }

/** The lease a process holds while it generates the default dataset. */
const GENERATION_LEASE = "dataset-generation"
/** How long the lease lasts unless renewed (it is renewed after every chunk). */
const GENERATION_LEASE_MS = 60_000
/** How often a process waiting for another's generation looks again. */
const WAIT_POLL = "500 millis"

/**
 * Generates the default dataset when the database has none. Several processes may start on one
 * empty database (workers, replicas): the one that takes the generation lease generates (chunked
 * commits on a bulk connection, renewing the lease as it goes); the others wait until the dataset
 * is complete — or until the lease expires because its holder died, and then one of them takes over.
 */
const generateIfMissing = (config: AppConfig["Service"], setStep: (step: string, progress?: number) => void) =>
  Effect.gen(function*() {
    const owner = Leases.newOwner()
    const sql = yield* SqlClient.SqlClient
    let announced = false
    while (!(yield* hasDataset)) {
      if (!(yield* Leases.acquire(GENERATION_LEASE, owner, GENERATION_LEASE_MS))) {
        if (!announced) yield* Effect.logInfo("waiting for another process to generate the dataset")
        announced = true
        setStep("waiting for another process to generate the dataset")
        yield* Effect.sleep(WAIT_POLL)
        continue
      }
      const generating = `generating ${config.population} patients (seed ${config.seed})`
      setStep(generating, 0)
      yield* Effect.logInfo("generating the default dataset").pipe(Effect.annotateLogs({ patients: config.population, seed: config.seed }))
      const started = performance.now()
      // Renewed on the service's own connection (the rows go through the bulk one).
      const renew = Leases.acquire(GENERATION_LEASE, owner, GENERATION_LEASE_MS).pipe(
        Effect.andThen(breathe),
        Effect.provideService(SqlClient.SqlClient, sql)
      )
      yield* bulkWriter(replaceDataset(generatedOnThread({ patients: config.population, seed: config.seed }), { onProgress: (done) => Effect.andThen(Effect.sync(() => setStep(generating, done)), Effect.orDie(renew)) })).pipe(
        Effect.ensuring(Effect.ignore(Leases.release(GENERATION_LEASE, owner)))
      )
      yield* Effect.logInfo("generated the default dataset").pipe(Effect.annotateLogs({ seconds: Number(((performance.now() - started) / 1000).toFixed(2)) }))
    }
  })

/**
 * How this process reads the dataset in the database and keeps its snapshot, with its settings,
 * kernels and core arena.
 */
const datasetReader = (config: AppConfig["Service"], kernels: Kernels["Service"], arena: CoreArena["Service"] | undefined) => {
  /**
   * The dataset in the database: from its snapshot when it has one, else from SQL. A read from
   * SQL takes many statements; a writer that switched datasets meanwhile (its stamp changed)
   * may have left it with tables of both, so it is read again.
   */
  const load = (step: (text: string, done?: number) => void) =>
    Effect.gen(function*() {
      for (let attempt = 1;; attempt++) {
        const read = yield* loadOnce(step)
        if (read.from === "snapshot" || (yield* datasetStamp) === read.stamp) return read
        if (attempt === MAX_LOAD_ATTEMPTS) return yield* Effect.fail(new Error(`the dataset was replaced while it was read, ${attempt} times in a row`))
        yield* Effect.logInfo("the dataset was replaced while it was read; reading it again")
      }
    })
  const loadOnce = (step: (text: string, done?: number) => void) =>
    Effect.gen(function*() {
      const stamp = yield* datasetStamp
      const snapshotPath = join(config.dataDir, SNAPSHOT_FILE)
      const read: SnapshotRead = !config.snapshot || stamp === undefined
        ? { skipped: "off" }
        : yield* readSnapshot(snapshotPath, stamp, kernels, arena, (done) => step("loading the snapshot", done), config.scores)
      if ("skipped" in read && read.skipped !== "off" && read.skipped !== "no snapshot") {
        yield* Effect.logWarning("dataset snapshot not used; loading from the database").pipe(Effect.annotateLogs({ file: snapshotPath, reason: read.skipped }))
      }
      const from = "dataset" in read ? "snapshot" : "database"
      const loaded = "dataset" in read ? read.dataset : yield* loadDataset(kernels, (table, done) => step(`loading ${table}`, done), arena, config.scores)
      return { loaded, from, stamp, snapshotPath } as const
    })
  /** Loaded from SQL: keeps the columns for the next start, unless the dataset was replaced meanwhile. */
  const keepSnapshot = (loaded: Dataset, from: string, stamp: string | undefined, snapshotPath: string) =>
    Effect.gen(function*() {
      if (from !== "database" || !config.snapshot || stamp === undefined || (yield* datasetStamp) !== stamp) return
      const writing = performance.now()
      yield* writeSnapshot(snapshotPath, stamp, loaded).pipe(
        Effect.tap(({ bytes }) =>
          Effect.logInfo("dataset snapshot written").pipe(Effect.annotateLogs({
            file: snapshotPath,
            mib: Math.round(bytes / 1_048_576),
            seconds: Number(((performance.now() - writing) / 1000).toFixed(2))
          }))
        ),
        Effect.catch((e: Error) => Effect.logWarning("dataset snapshot not written").pipe(Effect.annotateLogs({ file: snapshotPath, reason: e.message })))
      )
    })
  const loadedLog = (dataset: Dataset, from: string, started: number) => ({
    patients: dataset.patients.count,
    as_of: dataset.info["as_of"] ?? null,
    source: dataset.info["source"] ?? null,
    dataset_id: dataset.id,
    from,
    months: dataset.months,
    scores: dataset.panel.data instanceof Uint8Array ? "tenths" : "wide",
    seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
    rss_mib: Math.round(process.memoryUsage().rss / 1_048_576),
    ...(arena === undefined ? {} : { core_mib: Math.round(arena.used / 1_048_576) })
  })
  return { load, keepSnapshot, loadedLog }
}

/** A coordinator's health data: none; its `data` check says so, and a read of it fails (nothing is served that reads it). */
const coordinatorData = (readiness: Readiness["Service"]) => {
  return Effect.gen(function*() {
    yield* readiness.register({
      name: "data",
      check: Effect.succeed<CheckState>({ status: "ok", detail: "none: this service coordinates a network of sites and holds no patient data" })
    })
    const dataset = Effect.fail(new DomainError({ code: "unavailable", detail: "This service coordinates a network of sites and holds no patient data; ask /v1/network/…" }))
    const service: HealthDataService = { dataset, select: () => dataset }
    return service
  })
}

/** The service, loading in the background; /readyz reports `data` until it is ready. */
export const layer = Layer.effect(
  HealthData,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const kernels = yield* Kernels
    const readiness = yield* Readiness
    const sql = yield* SqlClient.SqlClient
    const pool = Option.getOrUndefined(yield* Effect.serviceOption(ComputePool))
    const arena = Option.getOrUndefined(yield* Effect.serviceOption(CoreArena))
    // A network coordinator (HCC_NETWORK) holds no patient data: nothing to generate or load, and
    // /readyz does not wait for any (docs/network.md).
    if (config.network !== undefined) return yield* coordinatorData(readiness)
    let state: State = { _tag: "loading", step: "starting" }
    const setStep = (step: string, progress?: number) => {
      recordDatasetLoading(progress ?? 0)
      state = progress === undefined ? { _tag: "loading", step } : { _tag: "loading", step, progress: Math.min(1, Math.max(0, progress)) }
    }
    yield* readiness.register({
      name: "data",
      check: Effect.sync((): CheckState => {
        switch (state._tag) {
          case "ready":
            return { status: "ok", detail: `${state.dataset.patients.count} patients loaded` }
          case "loading":
            return { status: "loading", detail: `health data: ${state.step}`, ...(state.progress === undefined ? {} : { progress: Math.round(state.progress * 1000) / 1000 }) }
          case "failed":
            return { status: "failed", detail: `health data failed to load: ${state.reason}` }
        }
      })
    })
    const { keepSnapshot, load, loadedLog } = datasetReader(config, kernels, arena)
    const job = Effect.gen(function*() {
      yield* generateIfMissing(config, setStep)
      setStep("loading", 0)
      const started = performance.now()
      const { from, loaded, snapshotPath, stamp } = yield* load(setStep)
      let dataset = loaded
      if (pool !== undefined && pool.threads > 0) {
        // The compute threads run the preparations (in parallel, off this thread); ready once all have.
        const threads = pool.threads
        setStep(`preparing on ${threads} compute threads`, 0)
        dataset = yield* pool.start(loaded, (ready) => setStep(`preparing (${ready} of ${threads} compute threads ready)`, ready / threads))
      } else {
        setStep("preparing")
        yield* prepareDataset(loaded)
      }
      state = { _tag: "ready", dataset }
      recordDatasetReady(dataset.patients.count, (performance.now() - started) / 1000)
      const line = loadedLog(dataset, from, started)
      // The snapshot is kept (or not) before the line, so the line says the loader's work is done.
      yield* keepSnapshot(loaded, from, stamp, snapshotPath)
      yield* Effect.logInfo("health data loaded").pipe(Effect.annotateLogs(line))
    }).pipe(
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.provideService(Kernels, kernels),
      Effect.catchCause((cause) =>
        Effect.andThen(
          Effect.sync(() => {
            state = { _tag: "failed", reason: "see the log" }
          }),
          Effect.logError("health data failed to load", cause)
        ))
    )

    /**
     * A new dataset (imported or generated by another process) is loaded beside the one served,
     * prepared (on the compute threads, which switch together), and then served: requests go on
     * meanwhile, answered from the old one. A dataset that fails to load is logged and not tried
     * again; the old one stays.
     */
    let refused: string | undefined
    const refresh = (stamp: string) =>
      Effect.gen(function*() {
        const started = performance.now()
        yield* Effect.logInfo("a new dataset is in the database; loading it beside the one served").pipe(Effect.annotateLogs({ dataset_id: stamp }))
        const { from, loaded, snapshotPath, stamp: loadedStamp } = yield* load(() => {})
        if (loadedStamp !== stamp) return
        const dataset = pool !== undefined && pool.threads > 0 ? yield* pool.refresh(loaded) : yield* Effect.as(prepareDataset(loaded), loaded)
        state = { _tag: "ready", dataset }
        recordDatasetReady(dataset.patients.count, (performance.now() - started) / 1000)
        yield* Effect.logInfo("dataset refreshed").pipe(Effect.annotateLogs(loadedLog(dataset, from, started)))
        yield* keepSnapshot(loaded, from, loadedStamp, snapshotPath)
      }).pipe(
        Effect.catchCause((cause) =>
          Effect.andThen(
            Effect.sync(() => {
              refused = stamp
            }),
            Effect.logError("the new dataset could not be loaded; still serving the previous one (restart to retry)", cause)
          ))
      )
    const watch = Effect.gen(function*() {
      for (;;) {
        yield* Effect.sleep(Duration.seconds(config.datasetPollSeconds))
        // Ready, or failed (a new import may mend it); never while the first load runs.
        if (state._tag === "loading") continue
        const stamp = yield* Effect.orElseSucceed(datasetStamp, () => undefined)
        if (stamp === undefined || (state._tag === "ready" && stamp === state.dataset.id) || stamp === refused) continue
        // A database without a dataset (never written): nothing to load.
        if (!(yield* Effect.orElseSucceed(hasDataset, () => false))) continue
        yield* refresh(stamp)
      }
    }).pipe(Effect.provideService(SqlClient.SqlClient, sql), Effect.provideService(Kernels, kernels))

    yield* Effect.forkScoped(config.datasetPollSeconds > 0 ? Effect.andThen(job, watch) : job)
    const unavailable = () =>
      new DomainError({
        code: "unavailable",
        detail: state._tag === "failed"
          ? "The health dataset failed to load; the operator must fix it (see the server log)."
          : `The health dataset is still loading (${state._tag === "loading" ? state.step : ""}). Retry in a few seconds.`,
        context: { retry_after_seconds: LOADING_RETRY_AFTER_SECONDS }
      })
    const dataset = Effect.suspend(() => state._tag === "ready" ? Effect.succeed(state.dataset) : Effect.fail(unavailable()))
    const service: HealthDataService = {
      dataset,
      select: (criteria) => Effect.flatMap(dataset, (d) => selectCohort(kernels, d, criteria))
    }
    return service
  })
)

/** A dataset already in hand (tests, benchmarks), without the start-up job; runs the preparations. */
export const layerFromDataset = (dataset: Dataset) =>
  Layer.effect(
    HealthData,
    Effect.gen(function*() {
      const kernels = yield* Kernels
      yield* prepareDataset(dataset)
      const service: HealthDataService = {
        dataset: Effect.succeed(dataset),
        select: (criteria) => selectCohort(kernels, dataset, criteria)
      }
      return service
    })
  )

