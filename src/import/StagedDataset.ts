/**
 * The staged facts of an import (Staging.ts) → the dataset's tables (docs/data.md, the rules of
 * "Importing FHIR and OMOP"), lazily, chunk by chunk, for DatasetWriter: the vocabulary (mapped
 * targets, unmapped codes named from their display, the source's own entries), patients,
 * conditions, the monthly axis scores, encounters, drug courses with their adherence, adverse
 * events, implants with their studies and outcomes, and every row's source id.
 */
import { AXES } from "../plugin/axes.ts"
import { formatDate, lastDayOfMonth, monthOfDay } from "../health/calendar.ts"
import { CONCEPT_MAPS, primaryCodeOf } from "../health/ConceptMaps.ts"
import type { Chunk } from "../health/DatasetWriter.ts"
import type { Row, Rows } from "../health/generator.ts"
import { DEFAULT_VOCABULARY } from "../health/vocabulary.ts"
import { STANDARD_SYSTEM_NAMES } from "../health/codeSystems.ts"
import { labelOf, nameOf } from "./concepts.ts"
import type { Made, RowsOptions, StagedFacts } from "./Staging.ts"

/** Days after an implant in which a revision or complication counts towards its rate metrics. */
export const FOLLOW_UP_DAYS = 365
/** Two records of the same patient's implant of one category this close are one implant. */
export const SAME_IMPLANT_DAYS = 7

/** Rows per chunk handed to the writer. */
const ROWS_PER_CHUNK = 20_000

const known = new Set(STANDARD_SYSTEM_NAMES)

/** The dataset's vocabulary and how each staged concept maps into it. */
type Vocab = ReturnType<typeof vocabularyOf>

/**
 * The dataset's tables from the staged facts, as writer chunks (lazily), and, once they have all
 * been taken, what the summary reports (`made`).
 */
export const datasetRows = (s: StagedFacts, options: RowsOptions): { readonly chunks: Iterable<Chunk>; readonly made: () => Made } => {
  const db = s.db
  const latest = options.asOf ?? s.latestDay
  if (latest === undefined) throw new Error("the data holds no date: give --as-of")
  const asOfDay: number = latest
  const counts: Record<string, number> = {}
  let made: Made | undefined
  const vocab = vocabularyOf(s, options)
  function* generate(): Generator<Chunk> {
    const n = s.patients
    const emit = (rows: Rows, done: number): Chunk => {
      for (const [t, list] of Object.entries(rows)) counts[t] = (counts[t] ?? 0) + (list?.length ?? 0)
      return { rows, done }
    }
    yield emit({ vocabulary: vocab.rows }, 0.01)

    // Patients, with their source ids.
    let batch: Array<Row> = []
    let sources: Array<Row> = []
    for (const r of db.prepare("SELECT idx, src, birth_year, sex, region, death FROM patient ORDER BY idx").iterate() as Iterable<Record<string, number | string | null>>) {
      batch.push([Number(r.idx) + 1, r.birth_year!, r.sex!, r.region!, r.death === null ? null : formatDate(Number(r.death))])
      sources.push(["patients", String(Number(r.idx) + 1), r.src!])
      if (batch.length >= ROWS_PER_CHUNK) {
        yield emit({ patients: batch, source_ids: sources }, 0.05)
        batch = []
        sources = []
      }
    }
    yield emit({ patients: batch, source_ids: sources }, 0.05)

    // Conditions: distinct (patient, code), a code at most once per patient.
    batch = []
    let last = -1
    let codes = new Set<string>()
    const flush = () => {
      for (const code of [...codes].sort()) batch.push([last + 1, code])
      codes = new Set()
    }
    for (const r of db.prepare("SELECT DISTINCT patient, concept FROM condition ORDER BY patient").iterate() as Iterable<{ readonly patient: number; readonly concept: number }>) {
      if (r.patient !== last) {
        flush()
        last = r.patient
        if (batch.length >= ROWS_PER_CHUNK) {
          yield emit({ patient_conditions: batch }, 0.1)
          batch = []
        }
      }
      for (const code of vocab.codesOf(r.concept)) codes.add(code)
    }
    flush()
    yield emit({ patient_conditions: batch }, 0.1)

    // Monthly axis scores: per axis, the mean of the month's direct scores when it has any, else
    // of its instruments' scores; one decimal.
    const lastMonth = monthOfDay(asOfDay)
    const axis = (a: number) =>
      `CASE WHEN SUM(direct * n${a}) > 0 THEN SUM(CASE WHEN direct = 1 THEN s${a} END) / SUM(direct * n${a}) WHEN SUM(n${a}) > 0 THEN SUM(s${a}) / SUM(n${a}) END`
    batch = []
    const scored = new Array<Uint8Array>(AXES.length).fill(new Uint8Array(0)).map(() => new Uint8Array(n))
    const statement = db.prepare(`SELECT patient, month, ${AXES.map((_, a) => axis(a)).join(", ")} FROM scores WHERE month <= ? GROUP BY patient, month ORDER BY patient, month`)
    statement.setReturnArrays(true)
    for (const r of statement.iterate(lastMonth) as Iterable<ReadonlyArray<number | null>>) {
      const row: Row = [Number(r[0]) + 1, formatMonthOf(Number(r[1]))]
      for (let a = 0; a < AXES.length; a++) {
        const v = r[a + 2]
        if (v === null || v === undefined) row.push(null)
        else {
          row.push(Math.round(Math.min(10, Math.max(0, Number(v))) * 10) / 10)
          scored[a]![Number(r[0])] = 1
        }
      }
      batch.push(row)
      if (batch.length >= ROWS_PER_CHUNK) {
        yield emit({ axis_scores: batch }, 0.4)
        batch = []
      }
    }
    yield emit({ axis_scores: batch }, 0.4)

    // Encounters of a mapped class, in file order.
    batch = []
    sources = []
    let id = 0
    for (const r of db.prepare("SELECT src, type, patient, kind, cls, start, finish FROM encounter ORDER BY f, l").iterate() as Iterable<Record<string, number | string | null>>) {
      if (r.kind === null) {
        s.report.note(`${String(r.type)} of class ${String(r.cls)}: not a visit the analytics count, left out`)
        continue
      }
      id++
      batch.push([id, Number(r.patient) + 1, r.kind!, formatDate(Number(r.start)), formatDate(Number(r.finish))])
      sources.push(["encounters", String(id), `${String(r.type)}/${String(r.src)}`])
      if (batch.length >= ROWS_PER_CHUNK) {
        yield emit({ encounters: batch, source_ids: sources }, 0.6)
        batch = []
        sources = []
      }
    }
    yield emit({ encounters: batch, source_ids: sources }, 0.6)

    // Drug courses, one per ingredient, with adherence as PDC from the patient's dispenses of it.
    yield* coursesOf(s, vocab, asOfDay, (rows) => emit(rows, 0.75))

    // Adverse events, one per suspected ingredient.
    batch = []
    sources = []
    id = 0
    for (const r of db.prepare("SELECT src, patient, drug, event, day FROM adverse ORDER BY f, l").iterate() as Iterable<Record<string, number | string>>) {
      const event = vocab.codesOf(Number(r.event))[0]!
      for (const drug of vocab.codesOf(Number(r.drug))) {
        id++
        batch.push([id, Number(r.patient) + 1, drug, event, formatDate(Number(r.day))])
        sources.push(["adverse_events", String(id), String(r.src)])
      }
      if (batch.length >= ROWS_PER_CHUNK) {
        yield emit({ adverse_events: batch, source_ids: sources }, 0.85)
        batch = []
        sources = []
      }
    }
    yield emit({ adverse_events: batch, source_ids: sources }, 0.85)

    yield emit(implantsOf(s), 0.95)

    const info: Array<Row> = [
      ["as_of", formatDate(asOfDay)],
      ["source", "imported"],
      ["format", options.format],
      ["axis_model", options.axisModelVersion],
      ["patients", String(n)]
    ]
    yield emit({ ...(options.surveillance ?? {}), dataset_info: info }, 1)

    made = {
      asOf: formatDate(asOfDay),
      rows: counts,
      axisCoverage: Object.fromEntries(AXES.map((axisCode, a) => {
        let c = 0
        for (const x of scored[a]!) c += x
        return [axisCode, n === 0 ? 0 : c / n]
      })),
      unmapped: unmappedOf(s, vocab)
    }
  }
  return {
    chunks: { [Symbol.iterator]: generate },
    made: () => {
      if (made === undefined) throw new Error("the rows were not all taken")
      return made
    }
  }
}

/** The vocabulary: mapped targets used, unmapped concepts named from their display, the source's own entries. */
const vocabularyOf = (s: StagedFacts, options: RowsOptions) => {
  const entries = new Map<string, { readonly kind: string; readonly code: string; readonly label: string; readonly system: string | null; readonly standard: string | null }>()
  const defaults = new Map(Object.entries(DEFAULT_VOCABULARY).flatMap(([kind, list]) => list.map((e) => [`${kind}|${e.code}`, e.label] as const)))
  const addEntry = (kind: string, code: string, label: string, standard: { readonly system: string; readonly code: string } | undefined) => {
    const key = `${kind}|${code}`
    if (entries.has(key)) return
    const seed = s.seeds.get(key)
    entries.set(key, seed === undefined
      ? { kind, code, label, system: standard?.system ?? null, standard: standard?.code ?? null }
      : { kind, code, label: seed.label, system: seed.system, standard: seed.standard })
  }
  const mappedLabel = (kind: string, code: string) => s.seeds.get(`${kind}|${code}`)?.label ?? defaults.get(`${kind}|${code}`) ?? labelOf(code.replaceAll("_", " "))
  // Unmapped concepts: one code per distinct standard code (or text), named from the display; a
  // name another entry already has gets its code appended.
  const codesOfConcept: Array<ReadonlyArray<string>> = []
  const taken = new Set<string>()
  for (const { kind, concept } of s.concepts) for (const t of concept.targets) taken.add(`${kind}|${t}`)
  const unmappedNames = new Map<string, string>()
  // In an order that does not depend on the order files were read in (they are read in parallel),
  // so two codes with one display always get the same names.
  const key = ({ kind, concept }: (typeof s.concepts)[number]) => `${kind}|${concept.system ?? ""}|${concept.code ?? ""}|${concept.display}|${concept.targets.join(",")}`
  const order = s.concepts.map((c, id) => [key(c), id] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, id]) => id)
  for (const id of order) {
    const { kind, concept } = s.concepts[id]!
    if (concept.targets.length > 0) {
      for (const t of concept.targets) addEntry(kind, t, mappedLabel(kind, t), kind in CONCEPT_MAPS ? primaryCodeOf(kind, t) : undefined)
      codesOfConcept[id] = concept.targets
      continue
    }
    const identity = `${kind}|${concept.system ?? ""}|${concept.code ?? `text:${concept.display.toLowerCase()}`}`
    let code = unmappedNames.get(identity)
    if (code === undefined) {
      const base = nameOf(concept.display || concept.code || "unnamed")
      code = base
      if (taken.has(`${kind}|${code}`)) code = nameOf(`${base} ${concept.system ?? ""} ${concept.code ?? ""}`)
      for (let i = 2; taken.has(`${kind}|${code}`); i++) code = nameOf(`${base} ${i}`)
      taken.add(`${kind}|${code}`)
      unmappedNames.set(identity, code)
      const standard = concept.system !== null && concept.code !== null && known.has(concept.system) ? { system: concept.system, code: concept.code } : undefined
      addEntry(kind, code, labelOf(concept.display || code), standard)
    }
    codesOfConcept[id] = [code]
  }
  // Device categories of implants, device metrics, regions of patients and studies, and the
  // source's own declared entries (so an exported dataset comes back with its whole vocabulary).
  for (const r of s.db.prepare("SELECT DISTINCT device FROM procedure WHERE device IS NOT NULL UNION SELECT DISTINCT device FROM device WHERE device IS NOT NULL").all() as Array<{ readonly device: string }>) {
    addEntry("device", r.device, mappedLabel("device", r.device), primaryCodeOf("device", r.device))
  }
  for (const e of DEFAULT_VOCABULARY.device_metric) addEntry("device_metric", e.code, e.label, undefined)
  const regions = new Set<string>((s.db.prepare("SELECT DISTINCT region FROM patient").all() as Array<{ readonly region: string }>).map((r) => r.region))
  for (const o of s.organizations.values()) regions.add(o.region)
  for (const rows of [options.surveillance?.animal_surveillance ?? [], options.surveillance?.human_surveillance ?? []]) {
    for (const row of rows) regions.add(String(row[row.length - 3]))
  }
  for (const region of regions) addEntry("region", region, s.seeds.get(`region|${region}`)?.label ?? options.regions.labelOf(region), undefined)
  if (options.surveillance !== undefined) {
    for (const kind of ["species", "zoonotic_condition"] as const) {
      for (const e of DEFAULT_VOCABULARY[kind]) addEntry(kind, e.code, e.label, kind === "zoonotic_condition" ? primaryCodeOf(kind, e.code) : undefined)
    }
  }
  for (const [key, seed] of s.seeds) {
    const [kind, code] = key.split("|") as [string, string]
    if (!entries.has(key)) entries.set(key, { kind, code, label: seed.label, system: seed.system, standard: seed.standard })
  }
  const rows: Array<Row> = [...entries.values()]
    .sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
    .map((e) => [e.kind, e.code, e.label, e.system, e.standard])
  return {
    rows,
    codesOf: (concept: number): ReadonlyArray<string> => codesOfConcept[concept] ?? [],
    isUnmapped: (concept: number) => s.concepts[concept]!.concept.targets.length === 0,
    kindOf: (concept: number) => s.concepts[concept]!.kind,
    standardOf: (concept: number) => {
      const c = s.concepts[concept]!.concept
      return c.system === null || c.code === null ? null : `${c.system}:${c.code}`
    },
    labelOfConcept: (concept: number) => labelOf(s.concepts[concept]!.concept.display)
  }
}

/**
 * Drug courses, patient by patient: a course of several ingredients is one course each; its
 * adherence is the stated one, else the proportion of the course's days covered by the patient's
 * dispenses of the ingredient (PQA PDC: a supply that overlaps the one before is shifted to
 * start after it), else unknown (no dispenses: NULL, never assumed). Dispenses of an ingredient
 * the patient has no course of make one course, from the first to the end of the last supply.
 */
function* coursesOf(s: StagedFacts, vocab: Vocab, asOfDay: number, emit: (rows: Rows) => Chunk): Generator<Chunk> {
  interface C {
    readonly f: number
    readonly l: number
    readonly src: string
    readonly patient: number
    readonly drug: string
    readonly sub: number
    readonly start: number
    readonly end: number | null
    readonly adherence: number | null
  }
  const out: Array<C> = []
  const courses = s.db.prepare("SELECT f, l, src, patient, concept, start, finish, adherence FROM course ORDER BY patient").iterate() as Iterator<Record<string, number | string | null>>
  const dispenses = s.db.prepare("SELECT patient, concept, day, days FROM dispense ORDER BY patient, day").iterate() as Iterator<Record<string, number>>
  let nextCourse = courses.next()
  let nextDispense = dispenses.next()
  const patientOf = (r: IteratorResult<Record<string, unknown>>) => (r.done === true ? Number.POSITIVE_INFINITY : Number(r.value.patient))
  let synthetic = 0
  while (nextCourse.done !== true || nextDispense.done !== true) {
    const p = Math.min(patientOf(nextCourse), patientOf(nextDispense))
    const mine: Array<Record<string, number | string | null>> = []
    while (patientOf(nextCourse) === p) {
      mine.push(nextCourse.value!)
      nextCourse = courses.next()
    }
    const supplies = new Map<string, Array<readonly [number, number]>>()
    while (patientOf(nextDispense) === p) {
      const d = nextDispense.value!
      for (const drug of vocab.codesOf(d.concept!)) {
        const list = supplies.get(drug) ?? []
        list.push([d.day!, d.days!])
        supplies.set(drug, list)
      }
      nextDispense = dispenses.next()
    }
    const covered = new Set<string>()
    for (const c of mine) {
      vocab.codesOf(Number(c.concept)).forEach((drug, sub) => {
        covered.add(drug)
        const start = Number(c.start)
        const end = c.finish === null ? null : Number(c.finish)
        const stated = c.adherence === null ? null : Number(c.adherence)
        const s = supplies.get(drug)
        out.push({ f: Number(c.f), l: Number(c.l), src: String(c.src), patient: p, drug, sub, start, end, adherence: stated ?? (s === undefined ? null : pdc(s, start, end ?? asOfDay)) })
      })
    }
    for (const [drug, s] of supplies) {
      if (covered.has(drug)) continue
      const start = s[0]![0]
      let end = start
      for (const [day, days] of s) end = Math.max(end, day + days - 1)
      synthetic++
      out.push({ f: Number.MAX_SAFE_INTEGER, l: synthetic, src: "", patient: p, drug, sub: 0, start, end, adherence: pdc(s, start, end) })
    }
  }
  out.sort((a, b) => a.f - b.f || a.l - b.l || a.sub - b.sub)
  let batch: Array<Row> = []
  let sources: Array<Row> = []
  for (const [i, c] of out.entries()) {
    batch.push([i + 1, c.patient + 1, c.drug, formatDate(c.start), c.end === null ? null : formatDate(c.end), c.adherence === null ? null : Math.round(c.adherence * 1e4) / 1e4])
    if (c.src !== "") sources.push(["drug_exposures", String(i + 1), c.src])
    if (batch.length >= ROWS_PER_CHUNK) {
      yield emit({ drug_exposures: batch, source_ids: sources })
      batch = []
      sources = []
    }
  }
  yield emit({ drug_exposures: batch, source_ids: sources })
}

/**
 * Implants (procedures of an implant category, or whose focal device is of one), grouped into
 * studies by the organization that performed them (the procedure's performer, else its
 * encounter's service provider), and their outcomes: the source's own outcome observations, else
 * for each rate metric 1 when a revision or complication of the category happened to the patient
 * within FOLLOW_UP_DAYS of the implant, 0 otherwise.
 */
const implantsOf = (s: StagedFacts): Rows => {
  const deviceOf = new Map((s.db.prepare("SELECT src, device FROM device WHERE device IS NOT NULL").all() as Array<{ readonly src: string; readonly device: string }>).map((d) => [d.src, d.device]))
  const encounterOrg = s.db.prepare("SELECT org FROM encounter WHERE src = ? LIMIT 1")
  const patientRegion = s.db.prepare("SELECT region FROM patient WHERE idx = ?")
  interface Implant {
    readonly src: string
    readonly type: string
    readonly patient: number
    readonly device: string
    readonly day: number
    readonly org: string
  }
  const implants: Array<Implant> = []
  const daysOf = new Map<string, ReadonlyArray<number>>()
  for (const r of s.db.prepare("SELECT src, type, patient, device, devices, day, org, encounter FROM procedure ORDER BY f, l").all() as Array<Record<string, string | number | null>>) {
    const device = (r.device as string | null) ?? (JSON.parse(String(r.devices)) as Array<string>).map((d) => deviceOf.get(d)).find((d) => d !== undefined)
    if (device === undefined) {
      s.report.note("Procedure whose focal device is of no implant category: left out")
      continue
    }
    const viaEncounter = r.encounter === null ? null : (encounterOrg.get(String(r.encounter)) as { readonly org: string | null } | undefined)?.org ?? null
    const org = s.organizationOf(r.org as string | null) ?? s.organizationOf(viaEncounter) ?? ""
    const implant = { src: String(r.src), type: String(r.type), patient: Number(r.patient), device, day: Number(r.day), org }
    // One implant recorded twice (a procedure and a device exposure, say) is counted once.
    const key = `${implant.patient}|${device}`
    const days = daysOf.get(key) ?? []
    if (days.some((d) => Math.abs(d - implant.day) <= SAME_IMPLANT_DAYS)) {
      s.report.note(`implant recorded again within ${SAME_IMPLANT_DAYS} days: counted once`)
      continue
    }
    daysOf.set(key, [...days, implant.day])
    implants.push(implant)
  }
  const categories = new Map<string, Set<string>>()
  for (const i of implants) categories.set(i.org, (categories.get(i.org) ?? new Set()).add(i.device))
  const studyOf = (i: Implant) => i.org === "" ? `unknown_organization/${i.device}` : categories.get(i.org)!.size === 1 ? i.org : `${i.org}/${i.device}`
  const studies = new Map<string, Row>()
  const studySources: Array<Row> = []
  for (const i of implants) {
    const id = studyOf(i)
    if (studies.has(id)) continue
    const region = s.organizations.get(i.org)?.region ?? (patientRegion.get(i.patient) as { readonly region: string }).region
    studies.set(id, [id, i.device, region])
    if (i.org !== "") studySources.push(["device_studies", id, `${s.format === "omop" ? "care_site" : "Organization"}/${i.org}`])
  }
  const outcomeOf = s.db.prepare("SELECT metric, value FROM outcome WHERE implant = ?")
  const eventsOf = s.db.prepare("SELECT metric, devices FROM device_event WHERE patient = ? AND day BETWEEN ? AND ?")
  const rateMetrics = DEFAULT_VOCABULARY.device_metric.map((m) => m.code).filter((m) => m.endsWith("_rate"))
  const implantRows: Array<Row> = []
  const outcomeRows: Array<Row> = []
  const sources: Array<Row> = []
  implants.forEach((i, k) => {
    const id = k + 1
    implantRows.push([id, i.patient + 1, i.device, studyOf(i), formatDate(i.day)])
    sources.push(["device_implants", String(id), `${i.type}/${i.src}`])
    const stated = outcomeOf.all(i.src) as Array<{ readonly metric: string; readonly value: number }>
    if (stated.length > 0) {
      for (const o of [...stated].sort((a, b) => (a.metric < b.metric ? -1 : 1))) outcomeRows.push([id, o.metric, o.value])
      return
    }
    const happened = new Set<string>()
    for (const e of eventsOf.all(i.patient, i.day, i.day + FOLLOW_UP_DAYS) as Array<{ readonly metric: string; readonly devices: string }>) {
      if (e.devices === "" || e.devices.split(",").includes(i.device)) happened.add(e.metric)
    }
    // A device infection or failure is also a complication.
    if (happened.has("infection_rate") || happened.has("device_failure_rate")) happened.add("complication_rate")
    for (const metric of [...rateMetrics].sort()) outcomeRows.push([id, metric, happened.has(metric) ? 1 : 0])
  })
  return {
    device_studies: [...studies.values()].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
    device_implants: implantRows,
    device_outcomes: outcomeRows,
    source_ids: [...studySources, ...sources]
  }
}

/** The unmapped codes by how many patients have them, most first (conditions, drugs, adverse events). */
const unmappedOf = (s: StagedFacts, vocab: Vocab): Made["unmapped"] => {
  const counts = new Map<number, number>()
  for (const [table, column] of [["condition", "concept"], ["course", "concept"], ["dispense", "concept"], ["adverse", "event"], ["adverse", "drug"]] as const) {
    const rows = s.db.prepare(`SELECT ${column} AS concept, COUNT(DISTINCT patient) AS n FROM ${table} GROUP BY ${column}`).all() as Array<{ readonly concept: number; readonly n: number }>
    for (const r of rows) if (vocab.isUnmapped(r.concept)) counts.set(r.concept, Math.max(counts.get(r.concept) ?? 0, r.n))
  }
  const code = (concept: number) => vocab.codesOf(concept)[0]!
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (code(a[0]) < code(b[0]) ? -1 : code(a[0]) > code(b[0]) ? 1 : 0))
    .slice(0, 20)
    .map(([concept, patients]) => ({ kind: vocab.kindOf(concept), code: vocab.codesOf(concept)[0]!, standard: vocab.standardOf(concept), label: vocab.labelOfConcept(concept), patients }))
}

const formatMonthOf = (month: number) => formatDate(lastDayOfMonth(month)).slice(0, 7)

/**
 * Proportion of days covered over [start, end] by supplies (day handed over, days supplied), in
 * the order handed over; a supply that starts before the one before it runs out starts the day
 * after (Pharmacy Quality Alliance, PDC methodology). 0–1.
 */
export const pdc = (supplies: ReadonlyArray<readonly [number, number]>, start: number, end: number): number => {
  const sorted = [...supplies].sort((a, b) => a[0] - b[0])
  let coveredUntil = Number.NEGATIVE_INFINITY
  let covered = 0
  for (const [day, days] of sorted) {
    const from = Math.max(day, coveredUntil + 1)
    const to = from + days - 1
    coveredUntil = to
    const a = Math.max(from, start)
    const b = Math.min(to, end)
    if (b >= a) covered += b - a + 1
  }
  return end < start ? 0 : Math.min(1, covered / (end - start + 1))
}
