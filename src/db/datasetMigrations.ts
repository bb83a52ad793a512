/**
 * The migrations that made the health dataset hold real data and two sets of tables: codes and
 * source ids for imported data, and the A/B table sets a new dataset is written into beside the
 * served one (docs/data.md). Applied in order by migrations.ts.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"

/**
 * Real data (docs/data.md, "Importing FHIR and OMOP"): sex may be `other` or `unknown` (FHIR
 * AdministrativeGender, OMOP gender concepts), a patient may have died (`death_date`), a drug
 * course's adherence may be unknown (no dispensing records: NULL, never assumed), a vocabulary
 * entry carries its standard code (`system`, `standard_code`), and every imported row keeps the id
 * it had in the source (`source_ids`).
 *
 * SQLite cannot alter a CHECK or NOT NULL in place, and its documented way of rebuilding a table
 * (foreign keys off) is not available inside the migration's transaction: so `patients` and every
 * table whose foreign key leads to it are rebuilt together. Renamed away first (SQLite rewrites
 * the children's references to the renamed parents), made anew, filled in parent-to-child order
 * and the old ones dropped child-first, every foreign key holds at every step.
 */
export const realData = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function*() {
        yield* sql`ALTER TABLE patients DROP CONSTRAINT patients_sex_check`
        yield* sql`ALTER TABLE patients ADD CONSTRAINT patients_sex_check CHECK (sex IN ('female', 'male', 'other', 'unknown'))`
        yield* sql`ALTER TABLE patients ADD COLUMN death_date TEXT`
        yield* sql`ALTER TABLE drug_exposures ALTER COLUMN adherence DROP NOT NULL`
      }),
    orElse: () =>
      Effect.gen(function*() {
        for (const index of ["encounters_patient", "drug_exposures_patient_drug", "adverse_events_patient"]) yield* sql.unsafe(`DROP INDEX ${index}`)
        for (const table of REBUILT) yield* sql.unsafe(`ALTER TABLE ${table} RENAME TO ${table}_v7`)
        yield* sql`CREATE TABLE patients (
          id INTEGER PRIMARY KEY,
          birth_year INTEGER NOT NULL,
          sex TEXT NOT NULL CHECK (sex IN ('female', 'male', 'other', 'unknown')),
          region TEXT NOT NULL,
          death_date TEXT
        )`
        yield* sql`CREATE TABLE patient_conditions (
          patient_id INTEGER NOT NULL REFERENCES patients (id),
          condition TEXT NOT NULL,
          PRIMARY KEY (patient_id, condition)
        )`
        yield* sql`CREATE TABLE axis_scores (
          patient_id INTEGER NOT NULL REFERENCES patients (id),
          month TEXT NOT NULL,
          po DOUBLE PRECISION, nm DOUBLE PRECISION, er DOUBLE PRECISION, sc DOUBLE PRECISION, rs DOUBLE PRECISION, es DOUBLE PRECISION, ta DOUBLE PRECISION, pv DOUBLE PRECISION,
          PRIMARY KEY (patient_id, month)
        )`
        yield* sql`CREATE TABLE encounters (
          id INTEGER PRIMARY KEY,
          patient_id INTEGER NOT NULL REFERENCES patients (id),
          kind TEXT NOT NULL CHECK (kind IN ('outpatient', 'emergency', 'inpatient')),
          start_date TEXT NOT NULL,
          end_date TEXT NOT NULL
        )`
        yield* sql`CREATE TABLE drug_exposures (
          id INTEGER PRIMARY KEY,
          patient_id INTEGER NOT NULL REFERENCES patients (id),
          drug TEXT NOT NULL,
          start_date TEXT NOT NULL,
          end_date TEXT,
          adherence DOUBLE PRECISION CHECK (adherence BETWEEN 0 AND 1)
        )`
        yield* sql`CREATE TABLE adverse_events (
          id INTEGER PRIMARY KEY,
          patient_id INTEGER NOT NULL REFERENCES patients (id),
          drug TEXT NOT NULL,
          event_type TEXT NOT NULL,
          date TEXT NOT NULL
        )`
        yield* sql`CREATE TABLE device_implants (
          id INTEGER PRIMARY KEY,
          patient_id INTEGER NOT NULL REFERENCES patients (id),
          device TEXT NOT NULL,
          study_id TEXT NOT NULL REFERENCES device_studies (id),
          implant_date TEXT NOT NULL
        )`
        yield* sql`CREATE TABLE device_outcomes (
          implant_id INTEGER NOT NULL REFERENCES device_implants (id),
          metric TEXT NOT NULL,
          value DOUBLE PRECISION NOT NULL,
          PRIMARY KEY (implant_id, metric)
        )`
        yield* sql`INSERT INTO patients (id, birth_year, sex, region) SELECT id, birth_year, sex, region FROM patients_v7`
        for (const table of REBUILT.slice(1)) yield* sql.unsafe(`INSERT INTO ${table} SELECT * FROM ${table}_v7`)
        for (const table of [...REBUILT].reverse()) yield* sql.unsafe(`DROP TABLE ${table}_v7`)
        yield* sql`CREATE INDEX encounters_patient ON encounters (patient_id)`
        yield* sql`CREATE INDEX drug_exposures_patient_drug ON drug_exposures (patient_id, drug)`
        yield* sql`CREATE INDEX adverse_events_patient ON adverse_events (patient_id)`
      })
  })
  yield* sql`ALTER TABLE vocabulary ADD COLUMN system TEXT`
  yield* sql`ALTER TABLE vocabulary ADD COLUMN standard_code TEXT`
  yield* sql`CREATE TABLE source_ids (
    table_name TEXT NOT NULL,
    id TEXT NOT NULL,
    source_id TEXT NOT NULL,
    PRIMARY KEY (table_name, id)
  )`
})

/** The tables SQLite rebuilds for {@link realData}: `patients`, then every table a foreign key leads from to it, parents first. */
const REBUILT = ["patients", "patient_conditions", "axis_scores", "encounters", "drug_exposures", "adverse_events", "device_implants", "device_outcomes"] as const

/** The health tables, parents before children (a table only references tables before it). */
const HEALTH = [
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

/**
 * Two sets of health tables, so a new dataset is written beside the one served (docs/data.md):
 * the tables become `<table>_a`, a copy of each is made as `<table>_b` (its foreign keys leading
 * within its set), and `<table>` is a view of the active set, which every reader reads. A writer
 * fills the other set in short transactions and then, in one, points the views at it
 * (DatasetWriter.ts). `dataset_set` names the active set. A later migration that changes a health
 * table changes both sets and makes its view again.
 */
export const datasetSets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const t of HEALTH) yield* sql.unsafe(`ALTER TABLE ${t} RENAME TO ${t}_a`)
  yield* sql.onDialectOrElse({
    pg: () =>
      Effect.gen(function*() {
        for (const t of HEALTH) yield* sql.unsafe(`CREATE TABLE ${t}_b (LIKE ${t}_a INCLUDING ALL)`)
        const keys = yield* sql<{ readonly table_name: string; readonly name: string; readonly definition: string }>`SELECT
            c.conrelid::regclass::text AS table_name, c.conname AS name, pg_get_constraintdef(c.oid) AS definition
          FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid::regclass::text IN ${sql.in(HEALTH.map((t) => `${t}_a`))}`
        for (const k of keys) {
          const definition = k.definition.replace(/REFERENCES ([a-z_]+)_a\b/, "REFERENCES $1_b")
          yield* sql.unsafe(`ALTER TABLE ${k.table_name.replace(/_a$/, "_b")} ADD CONSTRAINT ${k.name}_b ${definition}`)
        }
      }),
    orElse: () =>
      Effect.gen(function*() {
        // The set's DDL as SQLite keeps it (renamed references included), the names moved to set b.
        const rename = (text: string) => HEALTH.reduce((t, name) => t.replace(new RegExp(`"?\\b${name}_a\\b"?`, "g"), `${name}_b`), text)
        const schema = yield* sql<{ readonly type: string; readonly name: string; readonly sql: string }>`SELECT type, name, sql FROM sqlite_schema
          WHERE tbl_name IN ${sql.in(HEALTH.map((t) => `${t}_a`))} AND sql IS NOT NULL ORDER BY CASE type WHEN 'table' THEN 0 ELSE 1 END`
        const order = (name: string) => HEALTH.findIndex((t) => `${t}_a` === name)
        const tables = schema.filter((r) => r.type === "table").sort((a, b) => order(a.name) - order(b.name))
        for (const r of tables) yield* sql.unsafe(rename(r.sql))
        for (const r of schema.filter((x) => x.type === "index")) yield* sql.unsafe(rename(r.sql).replace(/^CREATE INDEX ([a-z_]+)/, "CREATE INDEX $1_b"))
      })
  })
  for (const t of HEALTH) yield* sql.unsafe(`CREATE VIEW ${t} AS SELECT * FROM ${t}_a`)
  yield* sql`CREATE TABLE dataset_set (active TEXT NOT NULL CHECK (active IN ('a', 'b')))`
  yield* sql`INSERT INTO dataset_set (active) VALUES ('a')`
})
