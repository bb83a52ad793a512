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
import type { Row, Rows } from "../health/healthTables.ts"
import { DEFAULT_VOCABULARY } from "../health/vocabulary.ts"
import { STANDARD_SYSTEM_NAMES } from "../plugin/codeSystems.ts"
import { labelOf, UniqueNames } from "./concepts.ts"
import type { StagedFacts } from "./Staging.ts"
import { coursesOf, ROWS_PER_CHUNK } from "./courses.ts"
import { encountersOf } from "./encounters.ts"
import { implantsOf } from "./implants.ts"
import { type Agreement, type DerivedTable, newAgreement, reconcile } from "./reconcile.ts"
import type { RegionMap } from "./regions.ts"

/** Options of the dataset the staged facts become. */
export interface RowsOptions {
  /** `--as-of`, else the latest day in the data. */
  readonly asOf?: number | undefined
  /** `fhir` or `omop`. */
  readonly format: string
  readonly axisModelVersion: string
  readonly regions: RegionMap
  /** Surveillance rows brought beside the import (CSV layout of docs/data.md), already checked. */
  readonly surveillance?: Rows | undefined
  /** The source's own derived tables present (OMOP), to compare the import with (reconcile.ts). */
  readonly derived?: ReadonlySet<DerivedTable> | undefined
}

/** What the summary reports of the dataset made. */
export interface Made {
  readonly asOf: string
  readonly rows: Record<string, number>
  readonly axisCoverage: Record<string, number>
  readonly unmapped: ReadonlyArray<{ readonly kind: string; readonly code: string; readonly standard: string | null; readonly label: string; readonly patients: number }>
  readonly reconciled: Partial<Record<DerivedTable, Agreement>>
}

const known = new Set(STANDARD_SYSTEM_NAMES)

/** The dataset's vocabulary and how each staged concept maps into it. */
export type Vocab = ReturnType<typeof vocabularyOf>

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
    yield* patientsOf(s, (rows) => emit(rows, 0.05))

    // Conditions: distinct (patient, code), a code at most once per patient.
    yield* conditionsOf(s, vocab, (rows) => emit(rows, 0.1))

    // Monthly axis scores: per axis, the mean of the month's direct scores when it has any, else
    // of its instruments' scores; one decimal.
    const lastMonth = monthOfDay(asOfDay)
    const axis = (a: number) =>
      `CASE WHEN SUM(direct * n${a}) > 0 THEN SUM(CASE WHEN direct = 1 THEN s${a} END) / SUM(direct * n${a}) WHEN SUM(n${a}) > 0 THEN SUM(s${a}) / SUM(n${a}) END`
    let batch: Array<Row> = []
    const scored = new Array<Uint8Array>(AXES.length).fill(new Uint8Array(0)).map(() => new Uint8Array(n))
    // An instrument for some ages only counts where the patient's age in the month's year (the
    // year minus the year of birth) is one of them; without a year of birth, nowhere.
    // (Looked up only for such rows: most scores apply at every age.)
    const age = "(s.month / 12 - p.birth_year)"
    // Nothing is observed of a patient after their death: a month after the death's is left out, counted.
    const deaths = new Map<number, number>()
    for (const r of db.prepare("SELECT idx, death FROM patient WHERE death IS NOT NULL").iterate() as Iterable<{ readonly idx: number; readonly death: number }>) deaths.set(r.idx, r.death)
    let afterDeath = 0
    const statement = db.prepare(`SELECT patient, month, ${AXES.map((_, a) => axis(a)).join(", ")} FROM scores AS s
      WHERE month <= ? AND (age_from IS NULL AND age_below IS NULL OR EXISTS (SELECT 1 FROM patient AS p WHERE p.idx = s.patient
        AND (age_from IS NULL OR ${age} >= age_from) AND (age_below IS NULL OR ${age} < age_below)))
      GROUP BY patient, month ORDER BY patient, month`)
    statement.setReturnArrays(true)
    for (const r of statement.iterate(lastMonth) as Iterable<ReadonlyArray<number | null>>) {
      const death = deaths.size === 0 ? undefined : deaths.get(Number(r[0]))
      if (death !== undefined && Number(r[1]) > monthOfDay(death)) {
        afterDeath++
        continue
      }
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
    if (afterDeath > 0) s.report.note("axis scores of a month after the patient's death: left out", afterDeath)

    // Encounters of a mapped class, in file order; none runs past a death.
    yield* encountersOf(s, asOfDay, deaths, (rows) => emit(rows, 0.6))

    // Drug exposure eras, one per person and ingredient, with adherence as PDC from their fills (courses.ts).
    const derived = options.derived ?? new Set<DerivedTable>()
    const agreement = derived.size > 0 ? newAgreement() : undefined
    yield* coursesOf(s, vocab, asOfDay, (rows) => emit(rows, 0.75), agreement)
    const reconciled = agreement === undefined ? {} : reconcile(s, vocab.codesOf, derived, agreement)

    // Adverse events, one per suspected ingredient.
    yield* adverseEventsOf(s, vocab, (rows) => emit(rows, 0.85))

    yield emit(implantsOf(s, asOfDay), 0.95)

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
      unmapped: unmappedOf(s, vocab),
      reconciled
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

/** The patients, with their source ids, in chunks. */
function* patientsOf(s: StagedFacts, emit: (rows: Rows) => Chunk): Generator<Chunk> {
  const db = s.db
  let batch: Array<Row> = []
  let sources: Array<Row> = []
  for (const r of db.prepare("SELECT idx, src, birth_year, sex, region, death FROM patient ORDER BY idx").iterate() as Iterable<Record<string, number | string | null>>) {
    batch.push([Number(r.idx) + 1, r.birth_year!, r.sex!, r.region!, r.death === null ? null : formatDate(Number(r.death))])
    sources.push(["patients", String(Number(r.idx) + 1), r.src!])
    if (batch.length >= ROWS_PER_CHUNK) {
      yield emit({ patients: batch, source_ids: sources })
      batch = []
      sources = []
    }
  }
  yield emit({ patients: batch, source_ids: sources })
}

/** The conditions: distinct (patient, code), a code at most once per patient, in chunks. */
function* conditionsOf(s: StagedFacts, vocab: Vocab, emit: (rows: Rows) => Chunk): Generator<Chunk> {
  const db = s.db
  let batch: Array<Row> = []
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
        yield emit({ patient_conditions: batch })
        batch = []
      }
    }
    for (const code of vocab.codesOf(r.concept)) codes.add(code)
  }
  flush()
  yield emit({ patient_conditions: batch })
}

/** The adverse events, one per suspected ingredient, with their source ids, in chunks. */
function* adverseEventsOf(s: StagedFacts, vocab: Vocab, emit: (rows: Rows) => Chunk): Generator<Chunk> {
  const db = s.db
  let batch: Array<Row> = []
  let sources: Array<Row> = []
  let id = 0
  for (const r of db.prepare("SELECT src, patient, drug, event, day FROM adverse ORDER BY f, l").iterate() as Iterable<Record<string, number | string>>) {
    const event = vocab.codesOf(Number(r.event))[0]!
    for (const drug of vocab.codesOf(Number(r.drug))) {
      id++
      batch.push([id, Number(r.patient) + 1, drug, event, formatDate(Number(r.day))])
      sources.push(["adverse_events", String(id), String(r.src)])
    }
    if (batch.length >= ROWS_PER_CHUNK) {
      yield emit({ adverse_events: batch, source_ids: sources })
      batch = []
      sources = []
    }
  }
  yield emit({ adverse_events: batch, source_ids: sources })
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
  // name another entry already has gets its system and code, else a number, appended.
  const codesOfConcept: Array<ReadonlyArray<string>> = []
  const names = new UniqueNames()
  for (const { kind, concept } of s.concepts) for (const t of concept.targets) names.take(kind, t)
  const unmappedNames = new Map<string, string>()
  // In an order that does not depend on the order files were read in (they are read in parallel),
  // so two codes with one display always get the same names.
  const key = ({ kind, concept }: (typeof s.concepts)[number]) => `${kind}|${concept.system ?? ""}|${concept.code ?? ""}|${concept.display}|${concept.targets.join(",")}`
  const order = s.concepts.map((c, id) => [key(c), id] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, id]) => id)
  for (const id of order) {
    const { kind, concept } = s.concepts[id]!
    // A concept only a source's DRUG_ERA or CONDITION_ERA names is compared, never an entry.
    if (s.comparedOnly.has(id)) {
      codesOfConcept[id] = concept.targets.length > 0 ? concept.targets : [`compared:${id}`]
      continue
    }
    if (concept.targets.length > 0) {
      for (const t of concept.targets) addEntry(kind, t, mappedLabel(kind, t), kind in CONCEPT_MAPS ? primaryCodeOf(kind, t) : undefined)
      codesOfConcept[id] = concept.targets
      continue
    }
    const identity = `${kind}|${concept.system ?? ""}|${concept.code ?? `text:${concept.display.toLowerCase()}`}`
    let code = unmappedNames.get(identity)
    if (code === undefined) {
      code = names.name(kind, concept.display || concept.code || "unnamed", concept.system, concept.code)
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
