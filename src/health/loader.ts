/**
 * Loads a dataset from the database into what queries read: typed columns (on shared memory, so
 * compute threads share them), the monthly axis panel resident in the WASM core, vocabularies and
 * their details. Tables are read in pieces (by patient or by id) with a turn of the event loop
 * between reads, so probes are answered while a large dataset loads.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import type { Arena } from "../kernels/Arena.ts"
import type { KernelsService } from "../kernels/Kernels.ts"
import { breathe } from "../eventLoop.ts"
import { AXES, type Axis } from "../plugin/axes.ts"
import { firstDayOfMonth, monthOfDay, parseDate, parseMonth } from "./calendar.ts"
import type { Dataset } from "./HealthData.ts"
import { panelFill, type ScoreStorage } from "./panelStorage.ts"
import { datasetStamp } from "./snapshot.ts"
import { SEXES } from "../plugin/vocabularies.ts"
import { type LoadContext, pagedReads, patientRanges, readAdverseEvents, readDevices, readEncounters, readExposures, readScores, readSurveillanceSeries, readVocabulary, ROWS_PER_READ, sharedArray, indexer, PATIENTS_PER_READ, type Values } from "./loaderTables.ts"

/** The longest axis history the panel keeps (older monthly rows are not loaded). */
export const MAX_PANEL_MONTHS = 120

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
 * The index of a patient id in `ids` (ascending, distinct), −1 when absent: an offset when the ids
 * are consecutive (as generated), otherwise a binary search. A map from id to index would hold tens
 * of bytes per patient for the whole load (hundreds of MB at ten million patients).
 */
export const patientIndexer = (ids: Int32Array): (id: unknown) => number => {
  const n = ids.length
  if (n === 0) return () => -1
  const first = ids[0]!
  if (ids[n - 1]! - first === n - 1) {
    return (id) => {
      const i = Number(id) - first
      return i >= 0 && i < n && Number.isInteger(i) ? i : -1
    }
  }
  return (id) => {
    const v = Number(id)
    let lo = 0
    let hi = n - 1
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1
      const at = ids[mid]!
      if (at === v) return mid
      if (at < v) lo = mid + 1
      else hi = mid - 1
    }
    return -1
  }
}

/**
 * Reads the whole dataset from the database into columns and makes the scanned ones resident;
 * `report` hears which table is being read and the share of the load done (for /readyz).
 */
export const loadDataset = (kernels: KernelsService, report: (table: string, done: number) => void = () => {}, arena?: Arena, storage: ScoreStorage = "compact") =>
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

    const { codeOf, vocabulary, vocabularyDetails } = yield* readVocabulary(sql)

    const { byId, checkRead, countById } = pagedReads(sql)

    // Patients.
    report("patients", 0.01)
    const n = yield* countById("patients")
    const ids = sharedArray(Int32Array, n)
    const birthYear = new Float64Array(n)
    const sex = new Int32Array(n)
    const region = new Int32Array(n)
    const deathDay = new Float32Array(n)
    const sexes = indexer(SEXES)
    yield* byId((after) => values(sql`SELECT id, birth_year, sex, region, death_date FROM patients WHERE id > ${after} ORDER BY id LIMIT ${ROWS_PER_READ}`), ([id, by, s, r, d], i) => {
      ids[i] = Number(id)
      birthYear[i] = Number(by)
      sex[i] = sexes(s)
      region[i] = codeOf.region(r)
      deathDay[i] = day(d)
    })
    const patientIndex = patientIndexer(ids)
    const { byPatients, countByPatients } = patientRanges(sql, ids)

    const ctx: LoadContext = { sql, values, day, month, codeOf, n, ids, patientIndex, byId, byPatients, countByPatients, checkRead }

    const conditionFlags = new Map(vocabulary.condition.map((c) => [c, new Uint8Array(n)]))
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
    // Cleared (all missing) a range of patients at a time, just before their scores are read; in
    // the core's memory from the start when the loader has the core (no copy at the end).
    const panel = panelFill(AXES.length * n * months, storage, arena)
    const covered = yield* readScores(ctx, panel, firstMonth, months, report)

    // Drug courses; a patient "takes" a drug when a course overlaps the panel's months.
    yield* breathe
    report("drug_exposures", 0.55)
    const { drugFlags, exposures } = yield* readExposures(ctx, vocabulary.drug, asOfDay, firstDayOfMonth(firstMonth))

    yield* breathe
    report("adverse_events", 0.6)
    const adverseEvents = yield* readAdverseEvents(ctx)

    yield* breathe
    report("encounters", 0.65)
    const encounters = yield* readEncounters(ctx)

    yield* breathe
    report("device_studies", 0.85)
    const devices = yield* readDevices(ctx)

    // Surveillance: every series on one weekly grid from the earliest to the latest week.
    report("surveillance", 0.92)
    const surveillance = yield* readSurveillanceSeries(ctx, asOfDay)

    const resident = (m: Map<string, Uint8Array>) =>
      Effect.forEach([...m], ([code, flags]) => Effect.map(kernels.columnU8(flags), (col) => [code, col] as const)).pipe(Effect.map((e) => new Map(e)))
    const scores = panel.result()
    const dataset: Dataset = {
      id: stamp ?? "",
      asOf: asOf!,
      asOfDay,
      firstMonth,
      months,
      vocabulary,
      vocabularyDetails,
      axisCoverage: Object.fromEntries(AXES.map((axis, a) => [axis, n === 0 ? 0 : covered[a]! / n])) as Record<Axis, number>,
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
      panel: scores.ptr === undefined ? yield* kernels.panel(scores.data, n, AXES.length, months) : { data: scores.data, ptr: scores.ptr, nPatients: n, nAxes: AXES.length, nMonths: months },
      exposures,
      adverseEvents,
      encounters,
      devices,
      surveillance
    }
    return dataset
  })
