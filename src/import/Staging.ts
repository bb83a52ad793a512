/**
 * Where an import collects what it reads before anything reaches the service's database: a
 * scratch SQLite file beside it (journal off; deleted at the end, and by the next import if a
 * kill left it behind). Facts arrive in any order (files are read on several threads); every row
 * keeps the file and line it came from, and ids are given in that order at the end, so the same
 * export always gives the same dataset. Memory holds only what references are resolved against
 * (patient ids, organizations, medications, concepts): the rest is on disk, so memory does not
 * grow with the size of the files.
 *
 * `rows()` then turns the staged facts into the dataset's tables (docs/data.md, the rules of
 * "Importing FHIR and OMOP"), lazily, chunk by chunk, for DatasetWriter.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite"
import { rmSync } from "node:fs"
import { AXES } from "../plugin/axes.ts"
import { formatDate, lastDayOfMonth, monthOfDay } from "../health/calendar.ts"
import { CONCEPT_MAPS, type MapKind, primaryCodeOf } from "../health/ConceptMaps.ts"
import type { Chunk } from "../health/DatasetWriter.ts"
import type { Row, Rows } from "../health/generator.ts"
import { DEFAULT_VOCABULARY } from "../health/vocabulary.ts"
import { STANDARD_SYSTEM_NAMES } from "../health/codeSystems.ts"
import { labelOf, nameOf } from "./concepts.ts"
import type { Concept, DeviceEvent, Fact } from "./facts.ts"
import type { RegionMap } from "./regions.ts"
import type { Place, Report } from "./Report.ts"

/** Days after an implant in which a revision or complication counts towards its rate metrics. */
export const FOLLOW_UP_DAYS = 365
/** Two records of the same patient's implant of one category this close are one implant. */
export const SAME_IMPLANT_DAYS = 7
/** Rows per chunk handed to the writer. */
const ROWS_PER_CHUNK = 20_000
/** Staged rows per transaction of the scratch file. */
const ROWS_PER_COMMIT = 50_000

/** Where a fact came from: a sort key of its file and part (in the import's file order), its line, its place for messages. */
export interface Origin {
  /** Orders files, and parts of a file, as they come in the import (file number × PARTS + part). */
  readonly file: number
  /** The line within the part. */
  readonly line: number
  readonly place: Place
  /** The record's type (a FHIR resourceType, an OMOP table), for source ids. */
  readonly type: string
}

/** The most parts a file is read in (the sort key of an Origin). */
export const PARTS = 4096

interface PatientRecord {
  readonly origin: Origin
  readonly fact: Extract<Fact, { k: "patient" }>
}

const known = new Set(STANDARD_SYSTEM_NAMES)

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
}

/** What the summary reports of the dataset made. */
export interface Made {
  readonly asOf: string
  readonly rows: Record<string, number>
  readonly axisCoverage: Record<string, number>
  readonly unmapped: ReadonlyArray<{ readonly kind: string; readonly code: string; readonly standard: string | null; readonly label: string; readonly patients: number }>
}

/** The scratch store of one import. */
export class Staging {
  private readonly db: DatabaseSync
  private readonly insert = new Map<string, StatementSync>()
  private pending = 0
  /** Phase one's patients, until their ids are given in file order. */
  private patientRecords: Array<PatientRecord> = []
  private readonly patientIndex = new Map<string, number>()
  private readonly organizations = new Map<string, { readonly name: string; readonly region: string }>()
  private readonly orgIdentifiers = new Map<string, string>()
  /** Vocabulary entries the source declares (FHIR CodeSystem resources of the service's vocabularies). */
  readonly seeds = new Map<string, { readonly label: string; readonly system: string | null; readonly standard: string | null }>()
  private readonly concepts = new Map<string, number>()
  private readonly conceptList: Array<{ readonly kind: MapKind; readonly concept: Concept }> = []
  private maxDay = Number.NEGATIVE_INFINITY
  private patientLookup: StatementSync | undefined

  readonly path: string
  private readonly report: Report
  /** fhir: references to `Patient`s in `Type.subject`; omop: `person_id`s of PERSON. */
  private readonly format: "fhir" | "omop"

  constructor(path: string, report: Report, format: "fhir" | "omop") {
    this.path = path
    this.report = report
    this.format = format
    rmSync(path, { force: true })
    this.db = new DatabaseSync(path)
    this.db.exec(`PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE; PRAGMA cache_size = -65536;
      CREATE TABLE patient (idx INTEGER PRIMARY KEY, src TEXT, birth_year INTEGER, sex TEXT, region TEXT, death INTEGER);
      CREATE TABLE patient_identifier (key TEXT, idx INTEGER);
      CREATE TABLE condition (patient INTEGER, concept INTEGER);
      CREATE TABLE device_event (patient INTEGER, metric TEXT, devices TEXT, day INTEGER);
      CREATE TABLE encounter (f INTEGER, l INTEGER, src TEXT, type TEXT, patient INTEGER, kind TEXT, cls TEXT, start INTEGER, finish INTEGER, org TEXT);
      CREATE TABLE course (f INTEGER, l INTEGER, src TEXT, type TEXT, patient INTEGER, concept INTEGER, start INTEGER, finish INTEGER, adherence REAL);
      CREATE TABLE dispense (patient INTEGER, concept INTEGER, day INTEGER, days INTEGER);
      CREATE TABLE adverse (f INTEGER, l INTEGER, src TEXT, type TEXT, patient INTEGER, drug INTEGER, event INTEGER, day INTEGER);
      CREATE TABLE procedure (f INTEGER, l INTEGER, src TEXT, type TEXT, patient INTEGER, device TEXT, devices TEXT, day INTEGER, org TEXT, encounter TEXT);
      CREATE TABLE device (src TEXT, patient INTEGER, device TEXT);
      CREATE TABLE scores (patient INTEGER, month INTEGER, direct INTEGER, ${AXES.map((_, a) => `s${a} REAL, n${a} INTEGER`).join(", ")});
      CREATE TABLE outcome (implant TEXT, metric TEXT, value REAL);
      BEGIN`)
  }

  private run(table: string, values: ReadonlyArray<string | number | null>): void {
    let st = this.insert.get(table)
    if (st === undefined) {
      st = this.db.prepare(`INSERT INTO ${table} VALUES (${values.map(() => "?").join(", ")})`)
      this.insert.set(table, st)
    }
    st.run(...values)
    if (++this.pending >= ROWS_PER_COMMIT) {
      this.db.exec("COMMIT; BEGIN")
      this.pending = 0
    }
  }

  private seen(day: number | null): void {
    if (day !== null && day > this.maxDay) this.maxDay = day
  }

  /** The id of a concept (deduplicated by kind, mapped targets and code, or text when it has no code). */
  private conceptId(kind: MapKind, concept: Concept): number {
    const key = `${kind}|${concept.targets.join(",")}|${concept.system ?? ""}|${concept.code ?? `text:${concept.display.toLowerCase()}`}`
    let id = this.concepts.get(key)
    if (id === undefined) {
      id = this.conceptList.length
      this.conceptList.push({ kind, concept })
      this.concepts.set(key, id)
    }
    return id
  }

  /** A patient reference → the patient's index, or undefined after reporting it. */
  private patientOf(ref: string, origin: Origin, path: string): number | undefined {
    let idx: number | undefined
    if (ref.startsWith("?")) {
      this.patientLookup ??= this.db.prepare("SELECT idx FROM patient_identifier WHERE key = ?")
      const rows = this.patientLookup.all(ref) as Array<{ readonly idx: number }>
      const ids = new Set(rows.map((r) => r.idx))
      if (ids.size > 1) {
        this.report.problem(origin.place, path, `the identifier ${ref.slice(1)} names ${ids.size} patients`)
        return undefined
      }
      idx = rows[0]?.idx
    } else {
      idx = this.patientIndex.get(ref)
    }
    if (idx === undefined) {
      this.report.problem(origin.place, path, this.format === "omop"
        ? `person ${ref} is not in the PERSON table`
        : `Patient ${ref.startsWith("?") ? `with identifier ${ref.slice(1)}` : ref} is not in the export`)
    }
    return idx
  }

  /** An organization reference → its id in the export, or null when it is not there. */
  organizationOf(ref: string | null): string | null {
    if (ref === null) return null
    if (ref.startsWith("?")) return this.orgIdentifiers.get(ref) ?? null
    return this.organizations.has(ref) ? ref : null
  }

  /** Phase one: patients, organizations and vocabulary entries (medications are kept by the reader). */
  addPhaseOne(origin: Origin, fact: Fact): void {
    switch (fact.k) {
      case "patient":
        this.patientRecords.push({ origin, fact })
        this.seen(fact.death)
        return
      case "organization":
        this.organizations.set(fact.src, { name: fact.name, region: fact.region })
        for (const id of fact.identifiers) if (!this.orgIdentifiers.has(id)) this.orgIdentifiers.set(id, fact.src)
        return
      case "vocabulary":
        this.seeds.set(`${fact.kind}|${fact.code}`, { label: fact.label, system: fact.system, standard: fact.standard })
        return
      default:
        return
    }
  }

  /** Ends phase one: patients get their indexes in file order; a patient id seen twice is a problem. */
  closePhaseOne(): void {
    this.patientRecords.sort((a, b) => a.origin.file - b.origin.file || a.origin.line - b.origin.line)
    const first = new Map<string, Origin>()
    for (const { origin, fact } of this.patientRecords) {
      const earlier = first.get(fact.src)
      if (earlier !== undefined) {
        this.report.problem(origin.place, this.format === "omop" ? "person_id" : "Patient.id", `'${fact.src}' is also the id of the patient at ${this.report.render(earlier.place)}`)
        continue
      }
      first.set(fact.src, origin)
      const idx = this.patientIndex.size
      this.patientIndex.set(fact.src, idx)
      this.run("patient", [idx, `${origin.type}/${fact.src}`, fact.birthYear, fact.sex, fact.region, fact.death])
      for (const key of fact.identifiers) this.run("patient_identifier", [key, idx])
    }
    this.patientRecords = []
    this.db.exec("COMMIT; CREATE INDEX patient_identifier_key ON patient_identifier (key); BEGIN")
    this.pending = 0
  }

  /** The regions of the patients and organizations read. */
  regions(): ReadonlySet<string> {
    const out = new Set((this.db.prepare("SELECT DISTINCT region FROM patient").all() as Array<{ readonly region: string }>).map((r) => r.region))
    for (const o of this.organizations.values()) out.add(o.region)
    return out
  }

  /** How many patients phase one found. */
  get patients(): number {
    return this.patientIndex.size
  }

  /** Where a record names its patient, for messages. */
  private subject(origin: Origin): string {
    if (this.format === "omop") return "person_id"
    return origin.type === "AllergyIntolerance" || origin.type === "Device" ? `${origin.type}.patient` : `${origin.type}.subject`
  }

  /** A day the data holds (as_of is the latest unless given), for records that are not facts (OMOP observation periods). */
  seenDay(day: number): void {
    this.seen(day)
  }

  /** Phase two: one fact of a record. */
  add(origin: Origin, fact: Fact): void {
    const src = (id: string) => `${origin.type}/${id}`
    switch (fact.k) {
      case "condition": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.seen(fact.day)
        this.run("condition", [p, this.conceptId("condition", fact.concept)])
        if (fact.day !== null) this.events(p, fact.events, fact.day)
        return
      }
      case "encounter": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.seen(fact.end)
        this.run("encounter", [origin.file, origin.line, fact.src, origin.type, p, fact.kind, fact.cls, fact.start, fact.end, fact.org])
        return
      }
      case "course": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.seen(fact.start)
        this.run("course", [origin.file, origin.line, src(fact.src), origin.type, p, this.conceptId("drug", fact.drug), fact.start, fact.end, fact.adherence])
        return
      }
      case "dispense": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.seen(fact.day)
        this.run("dispense", [p, this.conceptId("drug", fact.drug), fact.day, fact.days])
        return
      }
      case "adverse": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.seen(fact.day)
        this.run("adverse", [origin.file, origin.line, src(fact.src), origin.type, p, this.conceptId("drug", fact.drug), this.conceptId("adverse_event", fact.event), fact.day])
        return
      }
      case "procedure": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.seen(fact.day)
        this.events(p, fact.events, fact.day)
        if (fact.device !== null || fact.deviceRefs.length > 0) {
          this.run("procedure", [origin.file, origin.line, fact.src, origin.type, p, fact.device, JSON.stringify(fact.deviceRefs), fact.day, fact.org, fact.encounter])
        }
        return
      }
      case "device": {
        const p = fact.patient === null ? null : this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.run("device", [fact.src, p, fact.device])
        return
      }
      case "scores": {
        const p = this.patientOf(fact.patient, origin, this.subject(origin))
        if (p === undefined) return
        this.seen(fact.day)
        const values: Array<number | null> = [p, fact.month, fact.direct ? 1 : 0]
        for (let a = 0; a < AXES.length; a++) values.push(fact.counts[a]! > 0 ? fact.sums[a]! : null, fact.counts[a]!)
        this.run("scores", values)
        return
      }
      case "outcome":
        this.run("outcome", [fact.implant, fact.metric, fact.value])
        return
      default:
        this.addPhaseOne(origin, fact)
    }
  }

  private events(patient: number, events: ReadonlyArray<DeviceEvent>, day: number): void {
    for (const e of events) this.run("device_event", [patient, e.metric, e.devices.join(","), day])
  }

  /** The latest day in the data (as_of unless given), or undefined when there is none. */
  get latestDay(): number | undefined {
    return Number.isFinite(this.maxDay) ? this.maxDay : undefined
  }

  /** Ends the writes: everything is on disk and indexed for the reads of `rows()`. */
  closePhaseTwo(): void {
    this.db.exec(`COMMIT;
      CREATE INDEX encounter_src ON encounter (src);
      CREATE INDEX device_event_patient ON device_event (patient, day);
      CREATE INDEX outcome_implant ON outcome (implant)`)
  }

  /** Deletes the scratch file. */
  close(): void {
    if (this.db.isOpen) this.db.close()
    for (const suffix of ["", "-journal", "-wal", "-shm"]) rmSync(this.path + suffix, { force: true })
  }

  /**
   * The dataset's tables from the staged facts, as writer chunks (lazily), and, once they have all
   * been taken, what the summary reports (`made`).
   */
  rows(options: RowsOptions): { readonly chunks: Iterable<Chunk>; readonly made: () => Made } {
    const db = this.db
    const latest = options.asOf ?? this.latestDay
    if (latest === undefined) throw new Error("the data holds no date: give --as-of")
    const asOfDay: number = latest
    const counts: Record<string, number> = {}
    let made: Made | undefined
    const vocab = this.vocabulary(options)
    const self = this
    function* generate(): Generator<Chunk> {
      const n = self.patients
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
          self.report.note(`${String(r.type)} of class ${String(r.cls)}: not a visit the analytics count, left out`)
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
      yield* self.courses(vocab, asOfDay, (rows) => emit(rows, 0.75))

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

      yield emit(self.implants(options), 0.95)

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
        unmapped: self.unmapped(vocab)
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
  private vocabulary(options: RowsOptions) {
    const entries = new Map<string, { readonly kind: string; readonly code: string; readonly label: string; readonly system: string | null; readonly standard: string | null }>()
    const defaults = new Map(Object.entries(DEFAULT_VOCABULARY).flatMap(([kind, list]) => list.map((e) => [`${kind}|${e.code}`, e.label] as const)))
    const addEntry = (kind: string, code: string, label: string, standard: { readonly system: string; readonly code: string } | undefined) => {
      const key = `${kind}|${code}`
      if (entries.has(key)) return
      const seed = this.seeds.get(key)
      entries.set(key, seed === undefined
        ? { kind, code, label, system: standard?.system ?? null, standard: standard?.code ?? null }
        : { kind, code, label: seed.label, system: seed.system, standard: seed.standard })
    }
    const mappedLabel = (kind: string, code: string) => this.seeds.get(`${kind}|${code}`)?.label ?? defaults.get(`${kind}|${code}`) ?? labelOf(code.replaceAll("_", " "))
    // Unmapped concepts: one code per distinct standard code (or text), named from the display; a
    // name another entry already has gets its code appended.
    const codesOfConcept: Array<ReadonlyArray<string>> = []
    const taken = new Set<string>()
    for (const { kind, concept } of this.conceptList) for (const t of concept.targets) taken.add(`${kind}|${t}`)
    const unmappedNames = new Map<string, string>()
    // In an order that does not depend on the order files were read in (they are read in parallel),
    // so two codes with one display always get the same names.
    const key = ({ kind, concept }: (typeof this.conceptList)[number]) => `${kind}|${concept.system ?? ""}|${concept.code ?? ""}|${concept.display}|${concept.targets.join(",")}`
    const order = this.conceptList.map((c, id) => [key(c), id] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([, id]) => id)
    for (const id of order) {
      const { kind, concept } = this.conceptList[id]!
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
    for (const r of this.db.prepare("SELECT DISTINCT device FROM procedure WHERE device IS NOT NULL UNION SELECT DISTINCT device FROM device WHERE device IS NOT NULL").all() as Array<{ readonly device: string }>) {
      addEntry("device", r.device, mappedLabel("device", r.device), primaryCodeOf("device", r.device))
    }
    for (const e of DEFAULT_VOCABULARY.device_metric) addEntry("device_metric", e.code, e.label, undefined)
    const regions = new Set<string>((this.db.prepare("SELECT DISTINCT region FROM patient").all() as Array<{ readonly region: string }>).map((r) => r.region))
    for (const o of this.organizations.values()) regions.add(o.region)
    for (const rows of [options.surveillance?.animal_surveillance ?? [], options.surveillance?.human_surveillance ?? []]) {
      for (const row of rows) regions.add(String(row[row.length - 3]))
    }
    for (const region of regions) addEntry("region", region, this.seeds.get(`region|${region}`)?.label ?? options.regions.labelOf(region), undefined)
    if (options.surveillance !== undefined) {
      for (const kind of ["species", "zoonotic_condition"] as const) {
        for (const e of DEFAULT_VOCABULARY[kind]) addEntry(kind, e.code, e.label, kind === "zoonotic_condition" ? primaryCodeOf(kind, e.code) : undefined)
      }
    }
    for (const [key, seed] of this.seeds) {
      const [kind, code] = key.split("|") as [string, string]
      if (!entries.has(key)) entries.set(key, { kind, code, label: seed.label, system: seed.system, standard: seed.standard })
    }
    const rows: Array<Row> = [...entries.values()]
      .sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
      .map((e) => [e.kind, e.code, e.label, e.system, e.standard])
    return {
      rows,
      codesOf: (concept: number): ReadonlyArray<string> => codesOfConcept[concept] ?? [],
      isUnmapped: (concept: number) => this.conceptList[concept]!.concept.targets.length === 0,
      kindOf: (concept: number) => this.conceptList[concept]!.kind,
      standardOf: (concept: number) => {
        const c = this.conceptList[concept]!.concept
        return c.system === null || c.code === null ? null : `${c.system}:${c.code}`
      },
      labelOfConcept: (concept: number) => labelOf(this.conceptList[concept]!.concept.display)
    }
  }

  /**
   * Drug courses, patient by patient: a course of several ingredients is one course each; its
   * adherence is the stated one, else the proportion of the course's days covered by the patient's
   * dispenses of the ingredient (PQA PDC: a supply that overlaps the one before is shifted to
   * start after it), else unknown (no dispenses: NULL, never assumed). Dispenses of an ingredient
   * the patient has no course of make one course, from the first to the end of the last supply.
   */
  private *courses(vocab: ReturnType<Staging["vocabulary"]>, asOfDay: number, emit: (rows: Rows) => Chunk): Generator<Chunk> {
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
    const courses = this.db.prepare("SELECT f, l, src, patient, concept, start, finish, adherence FROM course ORDER BY patient").iterate() as Iterator<Record<string, number | string | null>>
    const dispenses = this.db.prepare("SELECT patient, concept, day, days FROM dispense ORDER BY patient, day").iterate() as Iterator<Record<string, number>>
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
  private implants(options: RowsOptions): Rows {
    const deviceOf = new Map((this.db.prepare("SELECT src, device FROM device WHERE device IS NOT NULL").all() as Array<{ readonly src: string; readonly device: string }>).map((d) => [d.src, d.device]))
    const encounterOrg = this.db.prepare("SELECT org FROM encounter WHERE src = ? LIMIT 1")
    const patientRegion = this.db.prepare("SELECT region FROM patient WHERE idx = ?")
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
    for (const r of this.db.prepare("SELECT src, type, patient, device, devices, day, org, encounter FROM procedure ORDER BY f, l").all() as Array<Record<string, string | number | null>>) {
      const device = (r.device as string | null) ?? (JSON.parse(String(r.devices)) as Array<string>).map((d) => deviceOf.get(d)).find((d) => d !== undefined)
      if (device === undefined) {
        this.report.note("Procedure whose focal device is of no implant category: left out")
        continue
      }
      const viaEncounter = r.encounter === null ? null : (encounterOrg.get(String(r.encounter)) as { readonly org: string | null } | undefined)?.org ?? null
      const org = this.organizationOf(r.org as string | null) ?? this.organizationOf(viaEncounter) ?? ""
      const implant = { src: String(r.src), type: String(r.type), patient: Number(r.patient), device, day: Number(r.day), org }
      // One implant recorded twice (a procedure and a device exposure, say) is counted once.
      const key = `${implant.patient}|${device}`
      const days = daysOf.get(key) ?? []
      if (days.some((d) => Math.abs(d - implant.day) <= SAME_IMPLANT_DAYS)) {
        this.report.note(`implant recorded again within ${SAME_IMPLANT_DAYS} days: counted once`)
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
      const region = this.organizations.get(i.org)?.region ?? (patientRegion.get(i.patient) as { readonly region: string }).region
      studies.set(id, [id, i.device, region])
      if (i.org !== "") studySources.push(["device_studies", id, `${this.format === "omop" ? "care_site" : "Organization"}/${i.org}`])
    }
    const outcomeOf = this.db.prepare("SELECT metric, value FROM outcome WHERE implant = ?")
    const eventsOf = this.db.prepare("SELECT metric, devices FROM device_event WHERE patient = ? AND day BETWEEN ? AND ?")
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
    void options
    return {
      device_studies: [...studies.values()].sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1)),
      device_implants: implantRows,
      device_outcomes: outcomeRows,
      source_ids: [...studySources, ...sources]
    }
  }

  /** The unmapped codes by how many patients have them, most first (conditions, drugs, adverse events). */
  private unmapped(vocab: ReturnType<Staging["vocabulary"]>): Made["unmapped"] {
    const counts = new Map<number, number>()
    for (const [table, column] of [["condition", "concept"], ["course", "concept"], ["dispense", "concept"], ["adverse", "event"], ["adverse", "drug"]] as const) {
      const rows = this.db.prepare(`SELECT ${column} AS concept, COUNT(DISTINCT patient) AS n FROM ${table} GROUP BY ${column}`).all() as Array<{ readonly concept: number; readonly n: number }>
      for (const r of rows) if (vocab.isUnmapped(r.concept)) counts.set(r.concept, Math.max(counts.get(r.concept) ?? 0, r.n))
    }
    const code = (concept: number) => vocab.codesOf(concept)[0]!
    return [...counts]
      .sort((a, b) => b[1] - a[1] || (code(a[0]) < code(b[0]) ? -1 : code(a[0]) > code(b[0]) ? 1 : 0))
      .slice(0, 20)
      .map(([concept, patients]) => ({ kind: vocab.kindOf(concept), code: vocab.codesOf(concept)[0]!, standard: vocab.standardOf(concept), label: vocab.labelOfConcept(concept), patients }))
  }
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
