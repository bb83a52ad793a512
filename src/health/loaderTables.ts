/**
 * The loader's table readers (loader.ts): each table of the dataset into its columns, read in
 * pieces (by patient or by id) with a turn of the event loop between reads.
 */
import * as Effect from "effect/Effect"
import type * as SqlClient from "effect/sql/SqlClient"
import { breathe } from "../eventLoop.ts"
import { AXES } from "../plugin/axes.ts"
import { ENCOUNTER_KINDS, type VocabularyDetail } from "./HealthData.ts"
import type { panelFill } from "./panelStorage.ts"
import { VOCABULARY_KINDS, type VocabularyKind } from "./vocabulary.ts"

/** Patients per axis_scores and encounters read (bounds the memory of one read and the time the event loop waits for it). */
export const PATIENTS_PER_READ = 5000
/** Rows per read of the tables read in id order (drug courses, adverse events). */
export const ROWS_PER_READ = 50_000
/** Implants whose device outcomes are read at a time (a few rows each). */
const IMPLANTS_PER_READ = 1000
export type Values = ReadonlyArray<ReadonlyArray<unknown>>

/**
 * A zeroed typed array on shared memory: the big columns are made shareable as they are read, so
 * compute threads (src/compute/ComputePool.ts) get them without a copy.
 */
export const sharedArray = <T extends Int32Array | Float64Array | Float32Array | Uint8Array>(Ctor: { readonly BYTES_PER_ELEMENT: number; new(buffer: SharedArrayBuffer): T }, length: number): T =>
  new Ctor(new SharedArrayBuffer(length * Ctor.BYTES_PER_ELEMENT))

/** Orders strings by UTF-16 code unit, as SQLite's BINARY collation does for our ASCII codes. */
export const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Index of each code of a kind; an unknown code (never after import validation) is −1. */
export const indexer = (codes: ReadonlyArray<string>) => {
  const map = new Map(codes.map((c, i) => [c, i]))
  return (code: unknown) => map.get(String(code)) ?? -1
}

/**
 * Tables with millions of rows are read — and counted — in pieces, with a turn of the event loop
 * between them: one statement over all of them would hold the loop for seconds (even a COUNT(*)
 * of tens of millions of encounters, when the file is larger than the page cache).
 */
export const pagedReads = (sql: SqlClient.SqlClient) => {
  /** Rows in id order, ROWS_PER_READ at a time (keyset on the primary key); `fill` gets each row and its position. Returns the rows read. */
  const byId = (select: (after: number) => Effect.Effect<Values, unknown>, fill: (row: ReadonlyArray<unknown>, i: number) => void) =>
    Effect.gen(function*() {
      let after = Number.MIN_SAFE_INTEGER
      let i = 0
      for (;;) {
        yield* breathe
        const rows = yield* select(after)
        for (const row of rows) fill(row, i++)
        if (rows.length < ROWS_PER_READ) return i
        after = Number(rows[rows.length - 1]![0])
      }
    })
  /** The rows of a table with an integer `id`, counted ROWS_PER_READ ids at a time. */
  const countById = (table: string) =>
    byId((after) => sql`SELECT id FROM ${sql(table)} WHERE id > ${after} ORDER BY id LIMIT ${ROWS_PER_READ}`.values, () => {})
  /** Fails when a table gave other than the rows it was counted to have (the arrays were sized by the count). */
  const checkRead = (table: string, read: number, counted: number) =>
    read === counted ? Effect.void : Effect.fail(new Error(`${table}: ${read} rows read where ${counted} were counted (rows of patients not in the patients table?)`))
  return { byId, checkRead, countById }
}

/** Reads over ranges of patients (`ids`, ascending): a function per range, and a table's rows counted that way. */
export const patientRanges = (sql: SqlClient.SqlClient, ids: Int32Array) => {
  const n = ids.length
  /** Runs `read` over consecutive ranges of `per` patients (first and last id, first index), with a turn of the event loop before each. */
  const byPatients = (per: number, read: (firstId: number, lastId: number, from: number) => Effect.Effect<void, unknown>) =>
    Effect.gen(function*() {
      for (let from = 0; from < n; from += per) {
        yield* breathe
        yield* read(ids[from]!, ids[Math.min(n, from + per) - 1]!, from)
      }
    })
  /** The rows of a table with a `patient_id`, counted a range of patients at a time (over its patient index). */
  const countByPatients = (table: string) =>
    Effect.gen(function*() {
      let counted = 0
      yield* byPatients(PATIENTS_PER_READ * 10, (first, last) =>
        Effect.map(sql`SELECT COUNT(*) FROM ${sql(table)} WHERE patient_id BETWEEN ${first} AND ${last}`.values, (rows) => {
          counted += Number(rows[0]![0])
        }))
      return counted
    })
  return { byPatients, countByPatients }
}

/** The vocabulary: each kind's codes in code-point order, their details, and each code's index. */
export const readVocabulary = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const entries = Object.fromEntries(VOCABULARY_KINDS.map((k) => [k, [] as Array<readonly [string, VocabularyDetail]>])) as Record<VocabularyKind, Array<readonly [string, VocabularyDetail]>>
    for (const [kind, code, label, system, standard] of yield* sql`SELECT kind, code, label, system, standard_code FROM vocabulary`.values) {
      const detail: VocabularyDetail = { label: String(label), standard: system === null || standard === null ? null : `${String(system)}:${String(standard)}` }
      entries[kind as VocabularyKind]?.push([String(code), detail])
    }
    // Text is ordered here, not by ORDER BY: PostgreSQL sorts by the database's collation, SQLite by
    // code point, and the same data must give the same answers on both engines.
    for (const list of Object.values(entries)) list.sort((a, b) => byCodePoint(a[0], b[0]))
    const vocabulary = Object.fromEntries(VOCABULARY_KINDS.map((k) => [k, entries[k].map((e) => e[0])])) as Record<VocabularyKind, Array<string>>
    const vocabularyDetails = Object.fromEntries(VOCABULARY_KINDS.map((k) => [k, entries[k].map((e) => e[1])])) as Record<VocabularyKind, Array<VocabularyDetail>>
    const codeOf = Object.fromEntries(VOCABULARY_KINDS.map((k) => [k, indexer(vocabulary[k])])) as Record<VocabularyKind, (c: unknown) => number>
    return { codeOf, vocabulary, vocabularyDetails }
  })

/** What the loader's table readers share: the connection, the parsers, the codes, the patients and the paged reads. */
export interface LoadContext {
  readonly sql: SqlClient.SqlClient
  readonly values: <E>(statement: { readonly values: Effect.Effect<Values, E> }) => Effect.Effect<Values, E>
  readonly day: (text: unknown) => number
  readonly month: (text: unknown) => number
  readonly codeOf: Record<VocabularyKind, (c: unknown) => number>
  readonly n: number
  readonly ids: Int32Array
  readonly patientIndex: (id: unknown) => number
  /** Rows in id order, ROWS_PER_READ at a time; `fill` gets each row and its position; gives the rows read. */
  readonly byId: (select: (after: number) => Effect.Effect<Values, unknown>, fill: (row: ReadonlyArray<unknown>, i: number) => void) => Effect.Effect<number, unknown>
  /** Runs `read` over consecutive ranges of `per` patients (first and last id, first index), with a turn of the event loop before each. */
  readonly byPatients: (per: number, read: (firstId: number, lastId: number, from: number) => Effect.Effect<void, unknown>) => Effect.Effect<void, unknown>
  /** The rows of a table with a `patient_id`, counted a range of patients at a time. */
  readonly countByPatients: (table: string) => Effect.Effect<number, unknown>
  /** Fails when a table gave other than the rows it was counted to have. */
  readonly checkRead: (table: string, read: number, counted: number) => Effect.Effect<void, Error>
}

/**
 * The monthly axis scores into the panel, a range of patients at a time; per axis, the patients
 * with a score of it (the axis coverage), counted a range at a time as the scores are read: one
 * pass over the whole panel at the end would hold the event loop in proportion to the patients.
 */
export const readScores = (ctx: LoadContext, panel: ReturnType<typeof panelFill>, firstMonth: number, months: number, report: (table: string, done: number) => void) =>
  Effect.gen(function*() {
    const { byPatients, month, n, patientIndex, sql, values } = ctx
    const covered = new Float64Array(AXES.length)
    const scoredInRange = new Uint8Array(AXES.length * PATIENTS_PER_READ)
    yield* byPatients(PATIENTS_PER_READ, (first, last, from) =>
      Effect.gen(function*() {
        report("axis_scores", 0.05 + 0.5 * (from / n))
        const upTo = Math.min(n, from + PATIENTS_PER_READ)
        for (let a = 0; a < AXES.length; a++) panel.clear((a * n + from) * months, (a * n + upTo) * months)
        scoredInRange.fill(0)
        const rows = yield* values(sql`SELECT patient_id, month, po, nm, er, sc, rs, es, ta, pv FROM axis_scores WHERE patient_id BETWEEN ${first} AND ${last}`)
        for (const row of rows) {
          const m = month(row[1]) - firstMonth
          if (m < 0 || m >= months) continue
          const p = patientIndex(row[0])
          for (let a = 0; a < AXES.length; a++) {
            const v = row[a + 2]
            if (v === null) continue
            panel.set((a * n + p) * months + m, Number(v))
            scoredInRange[a * PATIENTS_PER_READ + p - from] = 1
          }
        }
        for (let a = 0; a < AXES.length; a++) {
          for (let i = a * PATIENTS_PER_READ; i < (a + 1) * PATIENTS_PER_READ; i++) covered[a]! += scoredInRange[i]!
        }
      }))
    return covered
  })

/** Drug courses; a patient "takes" a drug when a course overlaps the panel's months (from `windowStart` to `asOfDay`). */
export const readExposures = (ctx: LoadContext, drugs: ReadonlyArray<string>, asOfDay: number, windowStart: number) =>
  Effect.gen(function*() {
    const { byId, checkRead, codeOf, countByPatients, day, n, patientIndex, sql, values } = ctx
    const nEx = yield* countByPatients("drug_exposures")
    const exposures = {
      patient: sharedArray(Int32Array, nEx),
      drug: sharedArray(Int32Array, nEx),
      startDay: sharedArray(Float32Array, nEx),
      endDay: sharedArray(Float32Array, nEx),
      adherence: sharedArray(Float64Array, nEx)
    }
    const drugFlags = new Map(drugs.map((d) => [d, new Uint8Array(n)]))
    const readEx = yield* byId((after) =>
      values(sql`SELECT id, patient_id, drug, start_date, end_date, adherence FROM drug_exposures WHERE id > ${after} ORDER BY id LIMIT ${ROWS_PER_READ}`), ([, p, d, s, e, a], i) => {
      exposures.patient[i] = patientIndex(p)
      exposures.drug[i] = codeOf.drug(d)
      exposures.startDay[i] = day(s)
      exposures.endDay[i] = day(e)
      exposures.adherence[i] = a === null ? Number.NaN : Number(a)
      const ends = exposures.endDay[i]!
      if (exposures.startDay[i]! <= asOfDay && (Number.isNaN(ends) || ends >= windowStart)) drugFlags.get(String(d))![exposures.patient[i]!] = 1
    })
    yield* checkRead("drug_exposures", readEx, nEx)
    return { drugFlags, exposures }
  })

/** Adverse events, in id order. */
export const readAdverseEvents = (ctx: LoadContext) =>
  Effect.gen(function*() {
    const { byId, checkRead, codeOf, countByPatients, day, patientIndex, sql, values } = ctx
    const nAe = yield* countByPatients("adverse_events")
    const adverseEvents = { patient: sharedArray(Int32Array, nAe), drug: sharedArray(Int32Array, nAe), eventType: sharedArray(Int32Array, nAe), day: sharedArray(Float32Array, nAe) }
    const readAe = yield* byId((after) => values(sql`SELECT id, patient_id, drug, event_type, date FROM adverse_events WHERE id > ${after} ORDER BY id LIMIT ${ROWS_PER_READ}`), (r, i) => {
      adverseEvents.patient[i] = patientIndex(r[1])
      adverseEvents.drug[i] = codeOf.drug(r[2])
      adverseEvents.eventType[i] = codeOf.adverse_event(r[3])
      adverseEvents.day[i] = day(r[4])
    })
    yield* checkRead("adverse_events", readAe, nAe)
    return adverseEvents
  })

/** Encounters, by patient ranges, each in (patient, start, id) order: together the order of the whole table. */
export const readEncounters = (ctx: LoadContext) =>
  Effect.gen(function*() {
    const { checkRead, countByPatients, day, ids, n, patientIndex, sql, values } = ctx
    const nEn = yield* countByPatients("encounters")
    const kinds = indexer(ENCOUNTER_KINDS)
    const encounters = { patient: sharedArray(Int32Array, nEn), kind: sharedArray(Uint8Array, nEn), startDay: sharedArray(Float32Array, nEn), endDay: sharedArray(Float32Array, nEn) }
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
    yield* checkRead("encounters", e, nEn)
    return encounters
  })

/** Device studies, implants and their outcomes (in implant, metric order). */
export const readDevices = (ctx: LoadContext) =>
  Effect.gen(function*() {
    const { byId, codeOf, day, patientIndex, sql, values } = ctx
    const st = [...yield* values(sql`SELECT id, device, region FROM device_studies`)].sort((a, b) => byCodePoint(String(a[0]), String(b[0])))
    const studyIndex = indexer(st.map((r) => String(r[0])))
    const im: Array<ReadonlyArray<unknown>> = []
    yield* byId((after) => values(sql`SELECT id, patient_id, device, study_id, implant_date FROM device_implants WHERE id > ${after} ORDER BY id LIMIT ${ROWS_PER_READ}`), (r) => im.push(r))
    const implantIndex = indexer(im.map((r) => String(r[0])))
    // Outcomes in (implant, metric) order, read by ranges of implant ids (the table's key).
    const oc = { implant: [] as Array<number>, metric: [] as Array<number>, value: [] as Array<number> }
    for (let from = 0; from < im.length; from += IMPLANTS_PER_READ) {
      yield* breathe
      const first = im[from]![0]
      const last = im[Math.min(im.length, from + IMPLANTS_PER_READ) - 1]![0]
      const rows = [...yield* values(sql`SELECT implant_id, metric, value FROM device_outcomes WHERE implant_id BETWEEN ${first} AND ${last}`)]
      for (const r of rows.sort((a, b) => Number(a[0]) - Number(b[0]) || byCodePoint(String(a[1]), String(b[1])))) {
        oc.implant.push(implantIndex(r[0]))
        oc.metric.push(codeOf.device_metric(r[1]))
        oc.value.push(Number(r[2]))
      }
    }
    const devices = {
      studies: { ids: st.map((r) => String(r[0])), device: Int32Array.from(st, (r) => codeOf.device(r[1])), region: Int32Array.from(st, (r) => codeOf.region(r[2])) },
      implants: {
        patient: Int32Array.from(im, (r) => patientIndex(r[1])),
        device: Int32Array.from(im, (r) => codeOf.device(r[2])),
        study: Int32Array.from(im, (r) => studyIndex(r[3])),
        day: Float32Array.from(im, (r) => day(r[4]))
      },
      outcomes: {
        implant: Int32Array.from(oc.implant),
        metric: Int32Array.from(oc.metric),
        value: Float64Array.from(oc.value)
      }
    }
    return devices
  })

/** The surveillance series, every one on one weekly grid from the earliest to the latest week. */
export const readSurveillanceSeries = (ctx: LoadContext, asOfDay: number) =>
  Effect.gen(function*() {
    const { day, sql, values } = ctx
    yield* breathe
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
    return { firstWeek, weeks, animal: sorted(animal), human: sorted(human) }
  })

