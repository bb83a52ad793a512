/**
 * The HealthData service: on start-up, generates the default dataset if the database holds none
 * (HCC_POPULATION patients, HCC_SEED), then loads what queries need into typed arrays. Both run in
 * the background: the server listens at once, /readyz says 503 until the data is loaded, and data
 * endpoints answer 503 `unavailable` (with Retry-After) meanwhile. Cohort selection runs on the WASM
 * cohort-scan kernels.
 */
import { Duration, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { ComputePool, CoreArena } from "../compute/ComputePool.ts"
import type { Arena } from "../kernels/Arena.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { breathe } from "../eventLoop.ts"
import { recordDatasetLoading, recordDatasetReady } from "../observability/Metrics.ts"
import { type CheckState, Readiness } from "../http/Readiness.ts"
import { Kernels, type KernelsService } from "../kernels/Kernels.ts"
import { AXES, type Axis } from "../plugin/axes.ts"
import { DomainError } from "../plugin/Plugin.ts"
import { closest } from "../plugin/suggest.ts"
import { firstDayOfMonth, monthOfDay, parseDate, parseMonth } from "./calendar.ts"
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { bulkWriter } from "../db/Database.ts"
import * as Leases from "../db/Leases.ts"
import { resolveCode } from "./codes.ts"
import { hasDataset, replaceDataset } from "./DatasetWriter.ts"
import { generatedChunks } from "./generator.ts"
import { type CohortCriteria, type Dataset, DatasetPreparations, ENCOUNTER_KINDS, HealthData, type HealthDataService, type VocabularyDetail } from "./HealthData.ts"
import { datasetStamp, readSnapshot, SNAPSHOT_FILE, type SnapshotRead, writeSnapshot } from "./snapshot.ts"
import { SEXES, VOCABULARY_KINDS, type VocabularyKind } from "./vocabulary.ts"

/** The longest axis history the panel keeps (older monthly rows are not loaded). */
export const MAX_PANEL_MONTHS = 120

/** Patients per axis_scores and encounters read (bounds the memory of one read and the time the event loop waits for it). */
const PATIENTS_PER_READ = 5000
/** Rows per read of the tables read in id order (drug courses, adverse events). */
const ROWS_PER_READ = 50_000
/** Reads of a dataset that was replaced while being read before the load gives up (each replacement is a whole import). */
const MAX_LOAD_ATTEMPTS = 5

type Values = ReadonlyArray<ReadonlyArray<unknown>>

/** A parser that remembers the few thousand distinct dates (or months) a dataset has; NULL → NaN. */
const memoParser = (parse: (text: string) => number) => {
  const seen = new Map<string, number>()
  return (text: unknown): number => {
    if (text === null || text === undefined) return Number.NaN
    const key = String(text)
    let d = seen.get(key)
    if (d === undefined) {
      d = parse(key)
      seen.set(key, d)
    }
    return d
  }
}

/**
 * A zeroed typed array on shared memory: the big columns are made shareable as they are read, so
 * compute threads (src/compute/ComputePool.ts) get them without a copy.
 */
const sharedArray = <T extends Int32Array | Float64Array>(Ctor: { readonly BYTES_PER_ELEMENT: number; new(buffer: SharedArrayBuffer): T }, length: number): T =>
  new Ctor(new SharedArrayBuffer(length * Ctor.BYTES_PER_ELEMENT))

/** Orders strings by UTF-16 code unit, as SQLite's BINARY collation does for our ASCII codes. */
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Index of each code of a kind; an unknown code (never after import validation) is −1. */
const indexer = (codes: ReadonlyArray<string>) => {
  const map = new Map(codes.map((c, i) => [c, i]))
  return (code: unknown) => map.get(String(code)) ?? -1
}

/**
 * Reads the whole dataset from the database into columns and makes the scanned ones resident;
 * `report` hears which table is being read and the share of the load done (for /readyz).
 */
export const loadDataset = (kernels: KernelsService, report: (table: string, done: number) => void = () => {}, arena?: Arena) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const values = <E>(statement: { readonly values: Effect.Effect<Values, E> }) => statement.values
    const day = memoParser(parseDate)
    const month = memoParser(parseMonth)

    const stamp = yield* datasetStamp
    const info: Record<string, string> = {}
    for (const [k, v] of yield* values(sql`SELECT key, value FROM dataset_info`)) info[String(k)] = String(v)
    const asOf = info["as_of"]
    const asOfDay = asOf === undefined ? Number.NaN : parseDate(asOf)
    if (Number.isNaN(asOfDay)) return yield* Effect.fail(new Error("dataset_info has no valid as_of date"))

    const entries = Object.fromEntries(VOCABULARY_KINDS.map((k) => [k, [] as Array<readonly [string, VocabularyDetail]>])) as Record<VocabularyKind, Array<readonly [string, VocabularyDetail]>>
    for (const [kind, code, label, system, standard] of yield* values(sql`SELECT kind, code, label, system, standard_code FROM vocabulary`)) {
      const detail: VocabularyDetail = { label: String(label), standard: system === null || standard === null ? null : `${String(system)}:${String(standard)}` }
      entries[kind as VocabularyKind]?.push([String(code), detail])
    }
    // Text is ordered here, not by ORDER BY: PostgreSQL sorts by the database's collation, SQLite by
    // code point, and the same data must give the same answers on both engines.
    for (const list of Object.values(entries)) list.sort((a, b) => byCodePoint(a[0], b[0]))
    const vocabulary = Object.fromEntries(VOCABULARY_KINDS.map((k) => [k, entries[k].map((e) => e[0])])) as Record<VocabularyKind, Array<string>>
    const vocabularyDetails = Object.fromEntries(VOCABULARY_KINDS.map((k) => [k, entries[k].map((e) => e[1])])) as Record<VocabularyKind, Array<VocabularyDetail>>
    const codeOf = Object.fromEntries(VOCABULARY_KINDS.map((k) => [k, indexer(vocabulary[k])])) as Record<VocabularyKind, (c: unknown) => number>

    // Tables with millions of rows are read in pieces, with a turn of the event loop between them:
    // one statement over all of them would hold the loop for seconds (tens at a million patients).
    const count = (table: string) => Effect.map(values(sql`SELECT COUNT(*) FROM ${sql(table)}`), (rows) => Number(rows[0]![0]))
    /** Rows in id order, ROWS_PER_READ at a time (keyset on the primary key); `fill` gets each row (without its id) and its position. */
    const byId = (select: (after: number) => Effect.Effect<Values, unknown>, fill: (row: ReadonlyArray<unknown>, i: number) => void) =>
      Effect.gen(function*() {
        let after = Number.MIN_SAFE_INTEGER
        let i = 0
        for (;;) {
          yield* breathe
          const rows = yield* select(after)
          for (const row of rows) fill(row, i++)
          if (rows.length < ROWS_PER_READ) return
          after = Number(rows[rows.length - 1]![0])
        }
      })

    // Patients.
    report("patients", 0.01)
    const n = yield* count("patients")
    const ids = sharedArray(Int32Array, n)
    const birthYear = new Float64Array(n)
    const sex = new Int32Array(n)
    const region = new Int32Array(n)
    const deathDay = new Float64Array(n)
    const sexes = indexer(SEXES)
    const indexOf = new Map<number, number>()
    yield* byId((after) => values(sql`SELECT id, birth_year, sex, region, death_date FROM patients WHERE id > ${after} ORDER BY id LIMIT ${ROWS_PER_READ}`), ([id, by, s, r, d], i) => {
      ids[i] = Number(id)
      birthYear[i] = Number(by)
      sex[i] = sexes(s)
      region[i] = codeOf.region(r)
      deathDay[i] = day(d)
      indexOf.set(Number(id), i)
    })
    const patientIndex = (id: unknown) => indexOf.get(Number(id)) ?? -1
    /** Runs `read` over consecutive ranges of `per` patients (first and last id, first index), with a turn of the event loop before each. */
    const byPatients = (per: number, read: (firstId: number, lastId: number, from: number) => Effect.Effect<void, unknown>) =>
      Effect.gen(function*() {
        for (let from = 0; from < n; from += per) {
          yield* breathe
          yield* read(ids[from]!, ids[Math.min(n, from + per) - 1]!, from)
        }
      })

    const conditionFlags = new Map(vocabulary.condition.map((c) => [c, new Int32Array(n)]))
    yield* byPatients(PATIENTS_PER_READ * 10, (first, last) =>
      Effect.map(values(sql`SELECT patient_id, condition FROM patient_conditions WHERE patient_id BETWEEN ${first} AND ${last}`), (rows) => {
        for (const [p, c] of rows) conditionFlags.get(String(c))![patientIndex(p)] = 1
      }))

    // The axis panel: months from the earliest score (at most MAX_PANEL_MONTHS back) to as_of. The
    // earliest month is looked up per range of patients (on the primary key), not by one table scan.
    const lastMonth = monthOfDay(asOfDay)
    let minMonth = Number.POSITIVE_INFINITY
    yield* byPatients(PATIENTS_PER_READ * 10, (first, last) =>
      Effect.map(values(sql`SELECT MIN(month) FROM axis_scores WHERE patient_id BETWEEN ${first} AND ${last}`), (rows) => {
        const m = rows[0]?.[0]
        if (m !== null && m !== undefined) minMonth = Math.min(minMonth, month(m))
      }))
    const firstMonth = minMonth === Number.POSITIVE_INFINITY ? lastMonth : Math.max(minMonth, lastMonth - MAX_PANEL_MONTHS + 1)
    const months = lastMonth - firstMonth + 1
    // Filled with NaN (missing) a range of patients at a time, just before their scores are read;
    // in the core's memory from the start when the loader has the core (no copy at the end).
    const inPlace = arena?.residentF32(AXES.length * n * months)
    const panel = inPlace?.view ?? new Float32Array(AXES.length * n * months)
    yield* byPatients(PATIENTS_PER_READ, (first, last, from) =>
      Effect.gen(function*() {
        report("axis_scores", 0.05 + 0.5 * (from / n))
        const upTo = Math.min(n, from + PATIENTS_PER_READ)
        for (let a = 0; a < AXES.length; a++) panel.fill(Number.NaN, (a * n + from) * months, (a * n + upTo) * months)
        const rows = yield* values(sql`SELECT patient_id, month, po, nm, er, sc, rs, es, ta, pv FROM axis_scores WHERE patient_id BETWEEN ${first} AND ${last}`)
        for (const row of rows) {
          const m = month(row[1]) - firstMonth
          if (m < 0 || m >= months) continue
          const p = patientIndex(row[0])
          for (let a = 0; a < AXES.length; a++) {
            const v = row[a + 2]
            if (v !== null) panel[(a * n + p) * months + m] = Number(v)
          }
        }
      }))

    // Drug courses; a patient "takes" a drug when a course overlaps the panel's months.
    const windowStart = firstDayOfMonth(firstMonth)
    yield* breathe
    report("drug_exposures", 0.55)
    const nEx = yield* count("drug_exposures")
    const exposures = {
      patient: sharedArray(Int32Array, nEx),
      drug: sharedArray(Int32Array, nEx),
      startDay: sharedArray(Float64Array, nEx),
      endDay: sharedArray(Float64Array, nEx),
      adherence: sharedArray(Float64Array, nEx)
    }
    const drugFlags = new Map(vocabulary.drug.map((d) => [d, new Int32Array(n)]))
    yield* byId((after) =>
      values(sql`SELECT id, patient_id, drug, start_date, end_date, adherence FROM drug_exposures WHERE id > ${after} ORDER BY id LIMIT ${ROWS_PER_READ}`), ([, p, d, s, e, a], i) => {
      exposures.patient[i] = patientIndex(p)
      exposures.drug[i] = codeOf.drug(d)
      exposures.startDay[i] = day(s)
      exposures.endDay[i] = day(e)
      exposures.adherence[i] = a === null ? Number.NaN : Number(a)
      const ends = exposures.endDay[i]!
      if (exposures.startDay[i]! <= asOfDay && (Number.isNaN(ends) || ends >= windowStart)) drugFlags.get(String(d))![exposures.patient[i]!] = 1
    })

    yield* breathe
    report("adverse_events", 0.6)
    const nAe = yield* count("adverse_events")
    const adverseEvents = { patient: sharedArray(Int32Array, nAe), drug: sharedArray(Int32Array, nAe), eventType: sharedArray(Int32Array, nAe), day: sharedArray(Float64Array, nAe) }
    yield* byId((after) => values(sql`SELECT id, patient_id, drug, event_type, date FROM adverse_events WHERE id > ${after} ORDER BY id LIMIT ${ROWS_PER_READ}`), (r, i) => {
      adverseEvents.patient[i] = patientIndex(r[1])
      adverseEvents.drug[i] = codeOf.drug(r[2])
      adverseEvents.eventType[i] = codeOf.adverse_event(r[3])
      adverseEvents.day[i] = day(r[4])
    })

    yield* breathe
    report("encounters", 0.65)
    const nEn = yield* count("encounters")
    const kinds = indexer(ENCOUNTER_KINDS)
    const encounters = { patient: sharedArray(Int32Array, nEn), kind: sharedArray(Int32Array, nEn), startDay: sharedArray(Float64Array, nEn), endDay: sharedArray(Float64Array, nEn) }
    // By patient ranges, each in (patient, start, id) order: together the order of the whole table.
    let e = 0
    for (let from = 0; from < n; from += PATIENTS_PER_READ) {
      const to = Math.min(n, from + PATIENTS_PER_READ) - 1
      yield* breathe
      const rows = yield* values(sql`SELECT patient_id, kind, start_date, end_date FROM encounters
        WHERE patient_id BETWEEN ${ids[from]!} AND ${ids[to]!} ORDER BY patient_id, start_date, id`)
      for (const r of rows) {
        encounters.patient[e] = patientIndex(r[0])
        encounters.kind[e] = kinds(r[1])
        encounters.startDay[e] = day(r[2])
        encounters.endDay[e] = day(r[3])
        e++
      }
    }

    yield* breathe
    report("device_studies", 0.85)
    const st = [...yield* values(sql`SELECT id, device, region FROM device_studies`)].sort((a, b) => byCodePoint(String(a[0]), String(b[0])))
    const studyIndex = indexer(st.map((r) => String(r[0])))
    const im = yield* values(sql`SELECT id, patient_id, device, study_id, implant_date FROM device_implants ORDER BY id`)
    const implantIndex = indexer(im.map((r) => String(r[0])))
    const oc = [...yield* values(sql`SELECT implant_id, metric, value FROM device_outcomes`)].sort((a, b) =>
      Number(a[0]) - Number(b[0]) || byCodePoint(String(a[1]), String(b[1])))
    const devices = {
      studies: { ids: st.map((r) => String(r[0])), device: Int32Array.from(st, (r) => codeOf.device(r[1])), region: Int32Array.from(st, (r) => codeOf.region(r[2])) },
      implants: {
        patient: Int32Array.from(im, (r) => patientIndex(r[1])),
        device: Int32Array.from(im, (r) => codeOf.device(r[2])),
        study: Int32Array.from(im, (r) => studyIndex(r[3])),
        day: Float64Array.from(im, (r) => day(r[4]))
      },
      outcomes: {
        implant: Int32Array.from(oc, (r) => implantIndex(r[0])),
        metric: Int32Array.from(oc, (r) => codeOf.device_metric(r[1])),
        value: Float64Array.from(oc, (r) => Number(r[2]))
      }
    }

    // Surveillance: every series on one weekly grid from the earliest to the latest week.
    yield* breathe
    report("surveillance", 0.92)
    const animalRows = yield* values(sql`SELECT species, condition, region, week, cases FROM animal_surveillance`)
    const humanRows = yield* values(sql`SELECT condition, region, week, cases FROM human_surveillance`)
    const weekDays = [...animalRows.map((r) => day(r[3])), ...humanRows.map((r) => day(r[2]))]
    const firstWeek = weekDays.length === 0 ? asOfDay : weekDays.reduce((a, b) => Math.min(a, b))
    const lastWeek = weekDays.length === 0 ? asOfDay : weekDays.reduce((a, b) => Math.max(a, b))
    const weeks = Math.floor((lastWeek - firstWeek) / 7) + 1
    const series = (map: Map<string, Float64Array>, key: string, week: number, cases: unknown) => {
      let s = map.get(key)
      if (s === undefined) {
        s = new Float64Array(weeks).fill(Number.NaN)
        map.set(key, s)
      }
      s[Math.floor((week - firstWeek) / 7)] = Number(cases)
    }
    const animal = new Map<string, Float64Array>()
    const human = new Map<string, Float64Array>()
    for (const [sp, c, r, w, k] of animalRows) series(animal, `${sp}/${c}/${r}`, day(w), k)
    for (const [c, r, w, k] of humanRows) series(human, `${c}/${r}`, day(w), k)
    const sorted = (m: Map<string, Float64Array>) => new Map([...m].sort(([a], [b]) => byCodePoint(a, b)))

    const resident = (m: Map<string, Int32Array>) =>
      Effect.forEach([...m], ([code, flags]) => Effect.map(kernels.columnI32(flags), (col) => [code, col] as const)).pipe(Effect.map((e) => new Map(e)))
    const dataset: Dataset = {
      id: stamp ?? "",
      asOf: asOf!,
      asOfDay,
      firstMonth,
      months,
      vocabulary,
      vocabularyDetails,
      axisCoverage: axisCoverageOf(panel, n, months),
      info,
      patients: {
        count: n,
        ids,
        birthYear: yield* kernels.columnF64(birthYear),
        sex: yield* kernels.columnI32(sex),
        deathDay,
        region: yield* kernels.columnI32(region),
        conditions: yield* resident(conditionFlags),
        drugs: yield* resident(drugFlags)
      },
      panel: inPlace === undefined ? yield* kernels.panel(panel, n, AXES.length, months) : { data: panel, ptr: inPlace.ptr, nPatients: n, nAxes: AXES.length, nMonths: months },
      exposures,
      adverseEvents,
      encounters,
      devices,
      surveillance: { firstWeek, weeks, animal: sorted(animal), human: sorted(human) }
    }
    return dataset
  })

/** Per axis, the share of patients with at least one score in the panel (axis × patient × month). */
export const axisCoverageOf = (panel: Float32Array, n: number, months: number): Record<Axis, number> => {
  const out = {} as Record<Axis, number>
  AXES.forEach((axis, a) => {
    let covered = 0
    for (let p = 0; p < n; p++) {
      const from = (a * n + p) * months
      for (let m = 0; m < months; m++) {
        if (!Number.isNaN(panel[from + m]!)) {
          covered++
          break
        }
      }
    }
    out[axis] = n === 0 ? 0 : covered / n
  })
  return out
}

const unknownCode = (kind: "condition" | "drug" | "region", code: string, known: ReadonlyArray<string>) =>
  new DomainError({
    code: `unknown_${kind}`,
    detail: `No ${kind} named '${code}' in the dataset.`,
    suggestions: closest(code, known)
  })

/** Cohort selection over a loaded dataset (exported for tests and benchmarks). */
export const selectCohort = (kernels: KernelsService, data: Dataset, criteria: CohortCriteria) =>
  Effect.gen(function*() {
    const p = data.patients
    let mask: Uint8Array = new Uint8Array(p.count).fill(1)
    const orDie = <A>(e: Effect.Effect<A, unknown>) => Effect.orDie(e)
    if (criteria.ageRange !== undefined) {
      const asOfYear = Number(data.asOf.slice(0, 4))
      mask = yield* orDie(kernels.maskRange(p.birthYear, asOfYear - criteria.ageRange[1], asOfYear - criteria.ageRange[0], mask))
    }
    if (criteria.sex !== undefined) {
      const set = new Uint8Array(SEXES.length)
      for (const s of criteria.sex) set[SEXES.indexOf(s)] = 1
      mask = yield* orDie(kernels.maskInSet(p.sex, set, mask))
    }
    if (criteria.regions !== undefined) {
      const set = new Uint8Array(data.vocabulary.region.length)
      for (const r of criteria.regions) {
        const i = data.vocabulary.region.indexOf(r)
        if (i < 0) return yield* Effect.fail(unknownCode("region", r, data.vocabulary.region))
        set[i] = 1
      }
      mask = yield* orDie(kernels.maskInSet(p.region, set, mask))
    }
    const present = new Uint8Array([0, 1])
    for (const [kind, codes, columns] of [["condition", criteria.conditions, p.conditions], ["drug", criteria.drugs, p.drugs]] as const) {
      for (const text of codes ?? []) {
        const code = resolveCode(data, kind, text)
        const col = code === undefined ? undefined : columns.get(code)
        if (col === undefined) return yield* Effect.fail(unknownCode(kind, text, [...columns.keys()]))
        mask = yield* orDie(kernels.maskInSet(col, present, mask))
      }
    }
    const from = criteria.months?.from ?? 0
    const to = criteria.months?.to ?? data.months
    for (const [axis, bounds] of Object.entries(criteria.axes ?? {})) {
      if (bounds === undefined) continue
      const lo = bounds.min ?? Number.NEGATIVE_INFINITY
      const hi = bounds.max ?? Number.POSITIVE_INFINITY
      mask = yield* orDie(kernels.panelMeanMask(data.panel, AXES.indexOf(axis as (typeof AXES)[number]), from, to, lo, hi, mask))
    }
    return { mask, size: yield* orDie(kernels.maskCount(mask)) }
  })

/**
 * Runs the plugins' dataset preparations in order. A failing one is logged (with its plugin's
 * name) and skipped: its plugin answers `unavailable`, the other domains are served.
 */
export const prepareDataset = (dataset: Dataset) =>
  Effect.gen(function*() {
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
      yield* bulkWriter(replaceDataset(generatedChunks({ patients: config.population, seed: config.seed }), { onProgress: (done) => Effect.andThen(Effect.sync(() => setStep(generating, done)), Effect.orDie(renew)) })).pipe(
        Effect.ensuring(Effect.ignore(Leases.release(GENERATION_LEASE, owner)))
      )
      yield* Effect.logInfo("generated the default dataset").pipe(Effect.annotateLogs({ seconds: Number(((performance.now() - started) / 1000).toFixed(2)) }))
    }
  })

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
          : yield* readSnapshot(snapshotPath, stamp, kernels, arena, (done) => step("loading the snapshot", done))
        if ("skipped" in read && read.skipped !== "off" && read.skipped !== "no snapshot") {
          yield* Effect.logWarning("dataset snapshot not used; loading from the database").pipe(Effect.annotateLogs({ file: snapshotPath, reason: read.skipped }))
        }
        const from = "dataset" in read ? "snapshot" : "database"
        const loaded = "dataset" in read ? read.dataset : yield* loadDataset(kernels, (table, done) => step(`loading ${table}`, done), arena)
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
      seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
      rss_mib: Math.round(process.memoryUsage().rss / 1_048_576),
      ...(arena === undefined ? {} : { core_mib: Math.round(arena.used / 1_048_576) })
    })
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
      yield* Effect.logInfo("health data loaded").pipe(Effect.annotateLogs(loadedLog(dataset, from, started)))
      yield* keepSnapshot(loaded, from, stamp, snapshotPath)
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
