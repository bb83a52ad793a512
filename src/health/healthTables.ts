/**
 * The layout of the health dataset: every table, its columns and the rules each value obeys. One
 * description serves the generator's writer, `hcc data import` (every value checked against it),
 * `hcc data export` (same files, same columns) and docs/data.md (a test keeps the three in step
 * with the SQL schema of migration 2).
 */
import { SNAKE_CASE, STANDARD_SYSTEM_NAMES } from "../plugin/codeSystems.ts"
import { SEXES } from "../plugin/vocabularies.ts"
import { VOCABULARY_KINDS, type VocabularyKind } from "./vocabulary.ts"

/** How a value is written in SQL and CSV. */
export type ColumnType = "int" | "real" | "text" | "date" | "month"

/** One column and the rules its values obey. */
export interface ColumnSpec {
  readonly name: string
  readonly type: ColumnType
  /** Empty in CSV / NULL in SQL is allowed. */
  readonly nullable?: boolean
  /** A CSV file may leave the column out of its header (every value is then empty): columns added after the first layout. */
  readonly optional?: boolean
  /** Inclusive bounds of a number. */
  readonly range?: readonly [number, number]
  /** The closed list of values of a text column. */
  readonly oneOf?: ReadonlyArray<string>
  /** A pattern every value of a text column matches (with a name for the reason). */
  readonly pattern?: { readonly regex: RegExp; readonly name: string }
  /** The value must be a code of this vocabulary kind (as listed in the dataset's vocabulary). */
  readonly vocabulary?: VocabularyKind
  /** The value must be the key of a row of this table (its first column). */
  readonly references?: HealthTableName
  /** For people reading docs/data.md. */
  readonly doc: string
}

/** One table: its columns in order and the columns that identify a row. */
export interface TableSpec {
  readonly name: HealthTableName
  readonly doc: string
  readonly columns: ReadonlyArray<ColumnSpec>
  readonly key: ReadonlyArray<string>
}

/** The tables in dependency order (a table only references tables before it). */
export const HEALTH_TABLE_NAMES = [
  "vocabulary",
  "dataset_info",
  "patients",
  "patient_conditions",
  "axis_scores",
  "encounters",
  "drug_exposures",
  "adverse_events",
  "device_studies",
  "device_implants",
  "device_outcomes",
  "animal_surveillance",
  "human_surveillance",
  "source_ids"
] as const
/** A table of the health dataset. */
export type HealthTableName = (typeof HEALTH_TABLE_NAMES)[number]

/** A row as SQL takes it: values in the table's column order. */
export type Row = Array<string | number | null>
/** Rows per table. */
export type Rows = Partial<Record<HealthTableName, Array<Row>>>

const SCORE = { type: "real", nullable: true, range: [0, 10] } as const
const axis = (code: string, name: string): ColumnSpec => ({ name: code.toLowerCase(), ...SCORE, doc: `${code} (${name}) score, 0–10; empty when not measured` })
const patient = { name: "patient_id", type: "int", references: "patients", doc: "patients.id" } as const
const week = { name: "week", type: "date", doc: "Monday that starts the ISO week" } as const
const cases = { name: "cases", type: "int", range: [0, 1_000_000], doc: "Confirmed cases reported that week" } as const

/** Every table of the health dataset. */
export const HEALTH_TABLES: ReadonlyArray<TableSpec> = [
  {
    name: "vocabulary",
    doc: "The codes every other table may use, by kind (listed in the catalog)",
    key: ["kind", "code"],
    columns: [
      { name: "kind", type: "text", oneOf: VOCABULARY_KINDS, doc: "Vocabulary kind" },
      { name: "code", type: "text", pattern: SNAKE_CASE, doc: "snake_case code (a–z, 0–9, _; starts with a letter; at most 64), unique within its kind" },
      { name: "label", type: "text", doc: "Human-readable name" },
      { name: "system", type: "text", nullable: true, optional: true, oneOf: STANDARD_SYSTEM_NAMES, doc: "Code system of the entry's standard code (`snomed`, `icd10cm`, `rxnorm`, `loinc`, …; docs/data.md \"Standard codes\"); empty when it has none" },
      { name: "standard_code", type: "text", nullable: true, optional: true, doc: "The entry's code in that system (e.g. 44054006); empty when it has none" }
    ]
  },
  {
    name: "dataset_info",
    doc: "Facts about the dataset as a whole; `as_of` (YYYY-MM-DD) is required: time ranges count back from it",
    key: ["key"],
    columns: [
      { name: "key", type: "text", doc: "as_of, source, seed, generator_version, …" },
      { name: "value", type: "text", doc: "Its value" }
    ]
  },
  {
    name: "patients",
    doc: "One row per patient",
    key: ["id"],
    columns: [
      { name: "id", type: "int", range: [1, 2_147_483_647], doc: "Patient id (no meaning outside the dataset)" },
      { name: "birth_year", type: "int", range: [1000, 9999], doc: "Year of birth (four digits: a de-identified dataset's dates may lie centuries ahead); age = as_of year − birth_year" },
      { name: "sex", type: "text", oneOf: SEXES, doc: "Sex recorded at registration (FHIR AdministrativeGender)" },
      { name: "region", type: "text", vocabulary: "region", doc: "Region of residence" },
      { name: "death_date", type: "date", nullable: true, optional: true, doc: "Day of death; empty while alive (or not known)" }
    ]
  },
  {
    name: "patient_conditions",
    doc: "Conditions a patient has been diagnosed with, before or during the data window: a flag per patient and condition, not a period. The generated dataset holds chronic conditions only; an import holds every diagnosis its source records (acute and resolved ones too, mapped or not; see Importing FHIR and OMOP)",
    key: ["patient_id", "condition"],
    columns: [patient, { name: "condition", type: "text", vocabulary: "condition", doc: "Condition code" }]
  },
  {
    name: "axis_scores",
    doc: "Monthly axis scores; a missing month or an empty score is a gap",
    key: ["patient_id", "month"],
    columns: [
      patient,
      { name: "month", type: "month", doc: "Calendar month, YYYY-MM" },
      axis("PO", "Physical & Outdoor"),
      axis("NM", "Nutritional & Metabolic"),
      axis("ER", "Emotional & Relational"),
      axis("SC", "Social & Communal"),
      axis("RS", "Religious & Spiritual"),
      axis("ES", "Environmental & Stewardship"),
      axis("TA", "Technological & Adaptive"),
      axis("PV", "Provisional & Vocational")
    ]
  },
  {
    name: "encounters",
    doc: "Contacts with care; admissions are inpatient encounters, a readmission is an admission within 30 days of a discharge",
    key: ["id"],
    columns: [
      { name: "id", type: "int", range: [1, 2_147_483_647], doc: "Encounter id" },
      patient,
      { name: "kind", type: "text", oneOf: ["outpatient", "emergency", "inpatient"], doc: "Setting of care" },
      { name: "start_date", type: "date", doc: "Day of the visit or admission" },
      { name: "end_date", type: "date", doc: "Day of discharge (= start_date except for inpatient stays)" }
    ]
  },
  {
    name: "drug_exposures",
    doc: "Courses of a drug: the generated population's courses; an import's exposure eras (one per person and ingredient, OHDSI's 30-day persistence window: \"Drug exposure: eras, fills and adherence\")",
    key: ["id"],
    columns: [
      { name: "id", type: "int", range: [1, 2_147_483_647], doc: "Exposure id" },
      patient,
      { name: "drug", type: "text", vocabulary: "drug", doc: "Drug code" },
      { name: "start_date", type: "date", doc: "First day supplied (may precede the data window)" },
      { name: "end_date", type: "date", nullable: true, doc: "Last day supplied; empty when ongoing at as_of" },
      { name: "adherence", type: "real", nullable: true, range: [0, 1], doc: "Proportion of days covered (PDC) over the exposure; empty when unknown (an imported era with fewer than two fills)" }
    ]
  },
  {
    name: "adverse_events",
    doc: "Adverse drug events recorded during an exposure",
    key: ["id"],
    columns: [
      { name: "id", type: "int", range: [1, 2_147_483_647], doc: "Event id" },
      patient,
      { name: "drug", type: "text", vocabulary: "drug", doc: "Suspected drug" },
      { name: "event_type", type: "text", vocabulary: "adverse_event", doc: "Kind of event" },
      { name: "date", type: "date", doc: "Day of onset" }
    ]
  },
  {
    name: "device_studies",
    doc: "Studies or registry sites that follow implanted devices",
    key: ["id"],
    columns: [
      { name: "id", type: "text", doc: "Study code" },
      { name: "device", type: "text", vocabulary: "device", doc: "Device category the study follows" },
      { name: "region", type: "text", vocabulary: "region", doc: "Where the study runs" }
    ]
  },
  {
    name: "device_implants",
    doc: "One row per implanted device",
    key: ["id"],
    columns: [
      { name: "id", type: "int", range: [1, 2_147_483_647], doc: "Implant id" },
      patient,
      { name: "device", type: "text", vocabulary: "device", doc: "Device category" },
      { name: "study_id", type: "text", references: "device_studies", doc: "device_studies.id" },
      { name: "implant_date", type: "date", doc: "Day of implantation" }
    ]
  },
  {
    name: "device_outcomes",
    doc: "Per-implant outcome for each device metric: 0/1 for the *_rate metrics (event within follow-up), a score for the others",
    key: ["implant_id", "metric"],
    columns: [
      { name: "implant_id", type: "int", references: "device_implants", doc: "device_implants.id" },
      { name: "metric", type: "text", vocabulary: "device_metric", doc: "Device metric code" },
      { name: "value", type: "real", range: [0, 10], doc: "0 or 1 for *_rate metrics; 0–10 for satisfaction and pain reduction; 0–1 for quality_of_life" }
    ]
  },
  {
    name: "animal_surveillance",
    doc: "Weekly confirmed animal cases by species, condition and region",
    key: ["species", "condition", "region", "week"],
    columns: [
      { name: "species", type: "text", vocabulary: "species", doc: "Animal species" },
      { name: "condition", type: "text", vocabulary: "zoonotic_condition", doc: "Zoonotic condition" },
      { name: "region", type: "text", vocabulary: "region", doc: "Region" },
      week,
      cases
    ]
  },
  {
    name: "human_surveillance",
    doc: "Weekly confirmed human cases by condition and region",
    key: ["condition", "region", "week"],
    columns: [
      { name: "condition", type: "text", vocabulary: "zoonotic_condition", doc: "Zoonotic condition" },
      { name: "region", type: "text", vocabulary: "region", doc: "Region" },
      week,
      cases
    ]
  },
  {
    name: "source_ids",
    doc: "Where an imported row came from: its id in the source (a FHIR `Type/id`, an OMOP `table/id`, e.g. `person/1`, `care_site/10`), so every row traces back",
    key: ["table_name", "id"],
    columns: [
      { name: "table_name", type: "text", oneOf: ["patients", "encounters", "drug_exposures", "adverse_events", "device_studies", "device_implants"], doc: "The table of the row" },
      { name: "id", type: "text", doc: "The row's id in that table" },
      { name: "source_id", type: "text", doc: "Its id in the source" }
    ]
  }
]

/** The description of one table. */
export const tableSpec = (name: HealthTableName): TableSpec => HEALTH_TABLES.find((t) => t.name === name)!
