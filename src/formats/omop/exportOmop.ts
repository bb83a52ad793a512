/**
 * `hcc data export --format omop`: any dataset (the generated one too) as an OMOP CDM 5.4 folder, CSV
 * or Parquet, with the CONCEPT and CONCEPT_RELATIONSHIP rows it uses, written so that importing it
 * gives the same dataset and so the same answers (docs/data.md, "Exporting OMOP CDM").
 *
 * Concepts: each vocabulary entry is a source concept of the vocabulary `HCC <kind>` (its code the
 * dataset's code), which "Maps to" a standard concept of the entry's standard code. Without the
 * Athena download the export cannot know OMOP's concept ids for those standard codes, so every
 * concept it writes has an id of the site-local range (above 2,000,000,000), except the Gender,
 * Visit and Type concepts whose ids are fixed and well known. Clinical rows carry the standard
 * concept in `*_concept_id` (0 when the entry has no standard code) and the entry in
 * `*_source_concept_id`. What the CDM has no column for is written in the service's own terms,
 * which the importer reads first: a location's region (`location_source_value`
 * `urn:hcc:region:<code>`), a device study (`care_site_source_value` `urn:hcc:device-study:<id>`),
 * a course's adherence and whether it is ongoing (OBSERVATION rows of the vocabulary `HCC`, linked
 * to the DRUG_EXPOSURE row by observation_event_id), device outcomes (MEASUREMENT rows of
 * `HCC device_metric`, linked to the PROCEDURE_OCCURRENCE row) and monthly axis scores
 * (MEASUREMENT rows of `HCC axis`). The surveillance series are written beside as CSV.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from "node:fs"
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { AXES } from "../../plugin/axes.ts"
import { formatDate, lastDayOfMonth, parseDate, parseMonth } from "../../health/calendar.ts"
import { omopVocabularyOf } from "../../plugin/codeSystems.ts"
import { csvField } from "../csv/csvField.ts"
import { forEachPage, writeTable } from "../csv/exportCsv.ts"
import { tableSpec } from "../../health/healthTables.ts"
import { Engine, literal } from "../../pipeline/Engine.ts"
import { CDM54, type CdmTable, DUCKDB_TYPE, FIELD_CONCEPT } from "./cdm54.ts"
import { HCC_AXIS_VOCABULARY, HCC_FACT_VOCABULARY, HCC_REGION_PREFIX, HCC_STUDY_PREFIX, hccVocabularyOf, LOCAL_CONCEPT_BASE } from "./ownTerms.ts"

/** Gender concepts (vocabulary Gender). */
const GENDER: Readonly<Record<string, readonly [number, string, string]>> = {
  female: [8532, "FEMALE", "F"],
  male: [8507, "MALE", "M"],
  other: [8521, "OTHER", "O"],
  unknown: [8551, "UNKNOWN", "U"]
}
/** Visit concepts (vocabulary Visit). */
const VISIT: Readonly<Record<string, readonly [number, string, string]>> = {
  inpatient: [9201, "Inpatient Visit", "IP"],
  outpatient: [9202, "Outpatient Visit", "OP"],
  emergency: [9203, "Emergency Room Visit", "ER"]
}
/** Type concepts: EHR, EHR prescription. */
const EHR = 32817
const EHR_PRESCRIPTION = 32838
/** CDM v5.4.0 (vocabulary CDM). */
const CDM_V54 = 756265
const DOMAIN: Readonly<Record<string, string>> = { condition: "Condition", drug: "Drug", adverse_event: "Condition", device: "Device", device_metric: "Measurement", region: "Geography", zoonotic_condition: "Condition" }
const VALID = ["1970-01-01", "2099-12-31", ""] as const

type Value = string | number | null | undefined

/** One table as CSV: rows given as the values of some of its columns, the rest written empty. */
const csvTable = (folder: string, table: CdmTable) => {
  const columns = CDM54[table].map(([name]) => name)
  const fd = openSync(join(folder, `${table}.csv`), "w")
  let buffer: Array<string> = [columns.join(",")]
  let rows = 0
  const flush = () => {
    if (buffer.length > 0) writeSync(fd, buffer.join("\n") + "\n")
    buffer = []
  }
  return {
    rows: () => rows,
    /** A row writer for the named columns, in that order. */
    with: (names: ReadonlyArray<string>) => {
      const at = names.map((n) => {
        const i = columns.indexOf(n)
        if (i < 0) throw new Error(`${table} has no column ${n}`)
        return i
      })
      const empty = new Array<string>(columns.length).fill("")
      return (values: ReadonlyArray<Value>) => {
        const line = empty.slice()
        for (let k = 0; k < at.length; k++) line[at[k]!] = csvField(values[k])
        buffer.push(line.join(","))
        rows++
        if (buffer.length >= 5000) flush()
      }
    },
    close: () => {
      flush()
      closeSync(fd)
    }
  }
}

/** Options of an export. */
export interface OmopExportOptions {
  readonly folder: string
  readonly parquet?: boolean
  /** Where DuckDB may spill while it writes Parquet. */
  readonly scratchDir: string
  readonly onProgress?: (done: number) => Effect.Effect<void>
}

/** Opens a CDM table's CSV file for writing. */
type OpenTable = (table: CdmTable) => ReturnType<typeof csvTable>
/** Closes one, counting its rows written. */
type CloseTable = (t: ReturnType<typeof csvTable>, table: CdmTable) => void

/**
 * CONCEPT, CONCEPT_RELATIONSHIP and VOCABULARY: the dataset's entries (source concepts), their
 * standard concepts ("Maps to"), and the service's own concepts (axes, course facts, the adverse
 * reaction, genders, visits). Gives each entry's source and standard concept ids and the own ones.
 */
const writeVocabulary = (open: OpenTable, close: CloseTable, info: ReadonlyMap<string, string>) => {
  return Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const concept = open("concept")
    const conceptRow = concept.with(["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code", "valid_start_date", "valid_end_date", "invalid_reason"])
    const relationship = open("concept_relationship")
    const relationshipRow = relationship.with(["concept_id_1", "concept_id_2", "relationship_id", "valid_start_date", "valid_end_date", "invalid_reason"])
    let nextId = LOCAL_CONCEPT_BASE
    const localOf = new Map<string, number>()
    const standardOf = new Map<string, number>()
    const standards = new Map<string, number>()
    const vocabularies = new Set<string>()
    for (const [kind, code, label, system, standard] of yield* sql`SELECT kind, code, label, system, standard_code FROM vocabulary ORDER BY kind, code`.values) {
      const k = String(kind)
      const id = ++nextId
      localOf.set(`${k}|${String(code)}`, id)
      vocabularies.add(hccVocabularyOf(k))
      conceptRow([id, String(label), DOMAIN[k] ?? "Observation", hccVocabularyOf(k), k, "", String(code), ...VALID])
      const vocabularyId = system === null ? undefined : omopVocabularyOf(String(system))
      if (vocabularyId === undefined || standard === null) continue
      const key = `${vocabularyId}|${String(standard)}`
      let target = standards.get(key)
      if (target === undefined) {
        standards.set(key, target = ++nextId)
        conceptRow([target, String(label), DOMAIN[k] ?? "Observation", vocabularyId, "Undefined", "S", String(standard), ...VALID])
      }
      standardOf.set(`${k}|${String(code)}`, target)
      relationshipRow([id, target, "Maps to", ...VALID])
      relationshipRow([target, id, "Mapped from", ...VALID])
    }
    const axisConcept = new Map(AXES.map((axis) => {
      const id = ++nextId
      conceptRow([id, `${axis} axis score`, "Measurement", HCC_AXIS_VOCABULARY, "Axis", "", axis, ...VALID])
      return [axis, id] as const
    }))
    const adherenceConcept = ++nextId
    conceptRow([adherenceConcept, "Adherence: proportion of the course's days covered", "Observation", HCC_FACT_VOCABULARY, "Course fact", "", "adherence", ...VALID])
    const ongoingConcept = ++nextId
    conceptRow([ongoingConcept, "Course ongoing at the dataset's as_of", "Observation", HCC_FACT_VOCABULARY, "Course fact", "", "ongoing", ...VALID])
    // Adverse reactions are OBSERVATION rows of SNOMED CT 62014003 "Adverse reaction to drug".
    let adverseConcept = standards.get("SNOMED|62014003")
    if (adverseConcept === undefined) {
      adverseConcept = ++nextId
      conceptRow([adverseConcept, "Adverse reaction to drug", "Observation", "SNOMED", "Undefined", "S", "62014003", ...VALID])
    }
    for (const [id, name, code] of Object.values(GENDER)) conceptRow([id, name, "Gender", "Gender", "Gender", "S", code, ...VALID])
    for (const [id, name, code] of Object.values(VISIT)) conceptRow([id, name, "Visit", "Visit", "Visit", "S", code, ...VALID])
    close(concept, "concept")
    close(relationship, "concept_relationship")
    const vocabulary = open("vocabulary")
    const vocabularyRow = vocabulary.with(["vocabulary_id", "vocabulary_name", "vocabulary_reference", "vocabulary_version", "vocabulary_concept_id"])
    for (const v of [...vocabularies, HCC_AXIS_VOCABULARY, HCC_FACT_VOCABULARY].sort()) vocabularyRow([v, `${v}: the service's own codes`, "hcc data export", info.get("axis_model") ?? "", 0])
    close(vocabulary, "vocabulary")
    const local = (kind: string, code: unknown) => localOf.get(`${kind}|${String(code)}`) ?? 0
    const standard = (kind: string, code: unknown) => standardOf.get(`${kind}|${String(code)}`) ?? 0
    return { adherenceConcept, adverseConcept, axisConcept, local, ongoingConcept, standard }
  })
}

/**
 * LOCATION (one per region), CARE_SITE and PROVIDER (one per device study), then PERSON, DEATH and
 * OBSERVATION_PERIOD (each person's, from the dataset's first day to as_of or death). Gives each
 * study's provider id.
 */
const writePlacesAndPersons = (open: OpenTable, close: CloseTable, asOf: string, firstDay: string, next: () => Effect.Effect<void>) =>
  Effect.gen(function*() {
    // Where: a location per region, a care site and a provider per device study.
    const locations = new Map<string, number>()
    const locationOf = (region: unknown) => {
      let id = locations.get(String(region))
      if (id === undefined) locations.set(String(region), id = locations.size + 1)
      return id
    }
    const careSite = open("care_site")
    const careSiteRow = careSite.with(["care_site_id", "care_site_name", "location_id", "care_site_source_value"])
    const provider = open("provider")
    const providerRow = provider.with(["provider_id", "provider_name", "care_site_id", "provider_source_value"])
    const providerOf = new Map<string, number>()
    yield* forEachPage(tableSpec("device_studies"), (rows) =>
      Effect.sync(() => {
        for (const [id, device, region] of rows) {
          const n = providerOf.size + 1
          providerOf.set(String(id), n)
          careSiteRow([n, `${String(id)} (${String(device)} study)`, locationOf(region), `${HCC_STUDY_PREFIX}${String(id)}`])
          providerRow([n, `${String(id)} (${String(device)} study)`, n, `${HCC_STUDY_PREFIX}${String(id)}`])
        }
      }))
    close(careSite, "care_site")
    close(provider, "provider")
    yield* next()

    // Persons, their deaths and observation periods.
    const person = open("person")
    const personRow = person.with(["person_id", "gender_concept_id", "year_of_birth", "race_concept_id", "ethnicity_concept_id", "location_id", "gender_source_value"])
    const death = open("death")
    const deathRow = death.with(["person_id", "death_date", "death_type_concept_id"])
    const period = open("observation_period")
    const periodRow = period.with(["observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date", "period_type_concept_id"])
    yield* forEachPage(tableSpec("patients"), (rows) =>
      Effect.sync(() => {
        for (const [id, birthYear, sex, region, died] of rows) {
          personRow([id as number, GENDER[String(sex)]![0], birthYear as number, 0, 0, locationOf(region), String(sex)])
          if (died !== null) deathRow([id as number, String(died), EHR])
          const end = died !== null && String(died) < asOf ? String(died) : asOf
          periodRow([id as number, id as number, firstDay < end ? firstDay : end, end, EHR])
        }
      }))
    close(person, "person")
    close(death, "death")
    close(period, "observation_period")
    const location = open("location")
    const locationRow = location.with(["location_id", "location_source_value"])
    for (const [region, id] of locations) locationRow([id, `${HCC_REGION_PREFIX}${region}`])
    close(location, "location")
    return providerOf
  })

/** MEASUREMENT: each implant's outcomes (on its procedure), and the monthly axis scores. */
const writeMeasurements = (
  open: OpenTable,
  close: CloseTable,
  implants: ReadonlyMap<number, readonly [number, string]>,
  local: (kind: string, code: unknown) => number,
  axisConcept: ReadonlyMap<string, number>,
  asOfDay: number,
  within: (share: number) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    const measurement = open("measurement")
    const measurementRow = measurement.with(["measurement_id", "person_id", "measurement_concept_id", "measurement_date", "measurement_type_concept_id", "value_as_number", "measurement_source_value", "measurement_event_id", "meas_event_field_concept_id"])
    let measurementId = 0
    yield* forEachPage(tableSpec("device_outcomes"), (rows) =>
      Effect.sync(() => {
        for (const [implant, metric, value] of rows) {
          const [patient, date] = implants.get(implant as number)!
          measurementRow([++measurementId, patient, local("device_metric", metric), date, EHR, Number(value), String(metric), implant as number, FIELD_CONCEPT.procedure_occurrence_id])
        }
      }))
    // Monthly scores dated the month's last day (as_of in as_of's month, so as_of stays the latest date).
    yield* forEachPage(tableSpec("axis_scores"), (rows) =>
      Effect.sync(() => {
        for (const row of rows) {
          const date = formatDate(Math.min(lastDayOfMonth(parseMonth(String(row[1]))), asOfDay))
          AXES.forEach((axis, a) => {
            const v = row[a + 2]
            if (v !== null && v !== undefined) measurementRow([++measurementId, row[0] as number, axisConcept.get(axis)!, date, EHR, Number(v), axis, null, null])
          })
        }
      }), within)
    close(measurement, "measurement")
  })

/** Writes the dataset as an OMOP CDM 5.4 folder; returns the rows written by table. */
export const exportOmop = (options: OmopExportOptions) => {
  const parquet = options.parquet === true
  const folder = options.folder
  // Parquet is converted from CSV written to a scratch folder inside the target, removed whatever happens.
  const csvFolder = parquet ? join(folder, ".hcc-omop-csv") : folder
  return Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const progress = options.onProgress ?? (() => Effect.void)
    yield* Effect.try(() => mkdirSync(csvFolder, { recursive: true }))
    const info = new Map((yield* sql`SELECT key, value FROM dataset_info`.values).map((r) => [String(r[0]), String(r[1])]))
    const asOf = info.get("as_of") ?? ""
    const asOfDay = parseDate(asOf)
    if (Number.isNaN(asOfDay)) return yield* Effect.fail(new Error("the database holds no complete dataset (dataset_info has no as_of)"))
    // The observation period of everyone: from the dataset's earliest date to as_of (or death).
    const [earliest] = yield* sql`SELECT MIN(d) AS d FROM (
      SELECT MIN(start_date) AS d FROM encounters UNION ALL SELECT MIN(start_date) FROM drug_exposures
      UNION ALL SELECT MIN(date) FROM adverse_events UNION ALL SELECT MIN(implant_date) FROM device_implants
      UNION ALL SELECT MIN(month) || '-01' FROM axis_scores) AS dates`.values
    const firstDay = earliest?.[0] === null || earliest?.[0] === undefined ? asOf : String(earliest[0])

    const written: Partial<Record<CdmTable, number>> = {}
    const open = (table: CdmTable) => csvTable(csvFolder, table)
    const close = (t: ReturnType<typeof open>, table: CdmTable) => {
      t.close()
      written[table] = t.rows()
    }
    const steps = 10 + (parquet ? 4 : 0)
    let step = 0
    const next = () => progress(++step / steps)
    /** Within the step under way, page by page (forEachPage's share): the largest tables are most of an export's time. */
    const within = (share: number) => progress((step + share) / steps)

    // The vocabulary: the entries (source concepts), their standard concepts, the service's own concepts.
    const { adherenceConcept, adverseConcept, axisConcept, local, ongoingConcept, standard } = yield* writeVocabulary(open, close, info)
    yield* next()

    // Where, and who: a location per region, a care site and a provider per device study; persons.
    const providerOf = yield* writePlacesAndPersons(open, close, asOf, firstDay, next)
    yield* next()

    const visit = open("visit_occurrence")
    const visitRow = visit.with(["visit_occurrence_id", "person_id", "visit_concept_id", "visit_start_date", "visit_end_date", "visit_type_concept_id", "visit_source_value"])
    yield* forEachPage(tableSpec("encounters"), (rows) =>
      Effect.sync(() => {
        for (const [id, patient, kind, start, end] of rows) visitRow([id as number, patient as number, VISIT[String(kind)]![0], String(start), String(end), EHR, String(kind)])
      }), within)
    close(visit, "visit_occurrence")
    yield* next()

    // Conditions carry no date in the dataset: each is dated at the start of the observation period.
    const condition = open("condition_occurrence")
    const conditionRow = condition.with(["condition_occurrence_id", "person_id", "condition_concept_id", "condition_start_date", "condition_type_concept_id", "condition_source_value", "condition_source_concept_id"])
    let conditionId = 0
    yield* forEachPage(tableSpec("patient_conditions"), (rows) =>
      Effect.sync(() => {
        for (const [patient, code] of rows) conditionRow([++conditionId, patient as number, standard("condition", code), firstDay, EHR, String(code), local("condition", code)])
      }))
    close(condition, "condition_occurrence")
    yield* next()

    // Drug exposures as EHR prescriptions (the CDM requires an end date: an ongoing course ends at
    // as_of, and an `ongoing` observation says so), with their adherence beside.
    const observation = open("observation")
    const observationRow = observation.with(["observation_id", "person_id", "observation_concept_id", "observation_date", "observation_type_concept_id", "value_as_number", "value_as_concept_id", "qualifier_concept_id", "observation_source_value", "observation_event_id", "obs_event_field_concept_id"])
    let observationId = 0
    const drug = open("drug_exposure")
    const drugRow = drug.with(["drug_exposure_id", "person_id", "drug_concept_id", "drug_exposure_start_date", "drug_exposure_end_date", "verbatim_end_date", "drug_type_concept_id", "drug_source_value", "drug_source_concept_id"])
    yield* forEachPage(tableSpec("drug_exposures"), (rows) =>
      Effect.sync(() => {
        for (const [id, patient, code, start, end, adherence] of rows) {
          drugRow([id as number, patient as number, standard("drug", code), String(start), end === null ? asOf : String(end), end === null ? null : String(end), EHR_PRESCRIPTION, String(code), local("drug", code)])
          if (adherence !== null) observationRow([++observationId, patient as number, adherenceConcept, String(start), EHR, Number(adherence), null, null, "adherence", id as number, FIELD_CONCEPT.drug_exposure_id])
          if (end === null) observationRow([++observationId, patient as number, ongoingConcept, String(start), EHR, null, null, null, "ongoing", id as number, FIELD_CONCEPT.drug_exposure_id])
        }
      }), within)
    close(drug, "drug_exposure")
    yield* next()

    // Adverse reactions: the drug the observation's value, the reaction its qualifier.
    yield* forEachPage(tableSpec("adverse_events"), (rows) =>
      Effect.sync(() => {
        for (const [, patient, code, event, date] of rows) {
          const drugConcept = standard("drug", code) || local("drug", code)
          const eventConcept = standard("adverse_event", event) || local("adverse_event", event)
          observationRow([++observationId, patient as number, adverseConcept, String(date), EHR, null, drugConcept, eventConcept, null, null, null])
        }
      }))
    close(observation, "observation")
    yield* next()

    // Implants, by the study's provider; their outcomes and the monthly axis scores as MEASUREMENT.
    const procedure = open("procedure_occurrence")
    const procedureRow = procedure.with(["procedure_occurrence_id", "person_id", "procedure_concept_id", "procedure_date", "procedure_type_concept_id", "provider_id", "procedure_source_value", "procedure_source_concept_id"])
    const implants = new Map<number, readonly [number, string]>()
    yield* forEachPage(tableSpec("device_implants"), (rows) =>
      Effect.sync(() => {
        for (const [id, patient, device, study, date] of rows) {
          implants.set(id as number, [patient as number, String(date)])
          procedureRow([id as number, patient as number, standard("device", device), String(date), EHR, providerOf.get(String(study)) ?? null, String(device), local("device", device)])
        }
      }))
    close(procedure, "procedure_occurrence")
    yield* next()
    yield* writeMeasurements(open, close, implants, local, axisConcept, asOfDay, within)
    yield* next()

    const source = open("cdm_source")
    source.with(["cdm_source_name", "cdm_source_abbreviation", "cdm_holder", "source_description", "source_release_date", "cdm_release_date", "cdm_version", "cdm_version_concept_id", "vocabulary_version"])([
      `HCC dataset (${info.get("source") ?? "generated"})`, "HCC", "hcc data export", "The service's health dataset as of its as_of date", asOf, asOf, "5.4", CDM_V54, info.get("axis_model") ?? "hcc"
    ])
    close(source, "cdm_source")
    for (const table of ["animal_surveillance", "human_surveillance"] as const) yield* writeTable(folder, tableSpec(table))
    yield* next()
    if (parquet) yield* toParquet(csvFolder, folder, options.scratchDir, next)
    return written
  }).pipe(Effect.ensuring(Effect.sync(() => parquet && rmSync(csvFolder, { recursive: true, force: true }))))
}

/** Each CSV table of `from` → `<table>.parquet` in `to`, with the CDM's column types, through DuckDB. */
const toParquet = (from: string, to: string, scratchDir: string, next: () => Effect.Effect<void>) =>
  Effect.acquireUseRelease(
    // Named like an import's spill folder, so that a killed export's is removed too.
    Effect.sync(() => new Engine(join(scratchDir, `import-${randomUUID()}.spill`))),
    (engine) =>
      Effect.gen(function*() {
        const tables = Object.keys(CDM54) as Array<CdmTable>
        for (const [i, table] of tables.entries()) {
          const columns = CDM54[table].map(([name, type]) => `${literal(name)}: ${literal(DUCKDB_TYPE[type])}`).join(", ")
          yield* engine.run(`${table}.parquet`, `COPY (SELECT * FROM read_csv(${literal(join(from, `${table}.csv`))}, header = true, columns = {${columns}}, quote = '"', escape = '"', dateformat = '%Y-%m-%d'))
            TO ${literal(join(to, `${table}.parquet`))} (FORMAT parquet)`)
          if ((i + 1) % 4 === 0) yield* next()
        }
      }),
    (engine) => Effect.sync(() => engine.dispose())
  )
