/**
 * The staging file's tables (Staging.ts) and where a staged row came from. Phase two's tables lead
 * each row with its record's origin (f, l: file and line), so the facts of a record superseded by
 * a later version (Versions.ts) can be taken out. And what the staged facts are, read-only, once staged.
 */
import type { DatabaseSync } from "node:sqlite"
import type { MapKind } from "../health/ConceptMaps.ts"
import { AXES } from "../plugin/axes.ts"
import type { Concept } from "./facts.ts"
import type { Place, Report } from "./Report.ts"

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

/** The tables of phase two's facts (after f, l): table → columns. */
export const PHASE_TWO_TABLES: ReadonlyArray<readonly [string, string]> = [
  ["condition", "patient INTEGER, concept INTEGER"],
  ["device_event", "patient INTEGER, metric TEXT, devices TEXT, day INTEGER"],
  ["encounter", "src TEXT, type TEXT, patient INTEGER, kind TEXT, cls TEXT, start INTEGER, finish INTEGER, org TEXT"],
  ["course", "src TEXT, type TEXT, patient INTEGER, concept INTEGER, start INTEGER, finish INTEGER, adherence REAL"],
  ["course_detail", "course TEXT, adherence REAL, ongoing INTEGER"],
  ["dispense", "src TEXT, patient INTEGER, concept INTEGER, day INTEGER, days INTEGER, finish INTEGER"],
  ["adverse", "src TEXT, type TEXT, patient INTEGER, drug INTEGER, event INTEGER, day INTEGER"],
  ["procedure", "src TEXT, type TEXT, patient INTEGER, device TEXT, devices TEXT, day INTEGER, org TEXT, encounter TEXT"],
  ["device", "src TEXT, patient INTEGER, device TEXT"],
  ["scores", `patient INTEGER, month INTEGER, direct INTEGER, age_from INTEGER, age_below INTEGER, ${AXES.map((_, a) => `s${a} REAL, n${a} INTEGER`).join(", ")}`],
  ["outcome", "implant TEXT, metric TEXT, value REAL"],
  ["observed", "patient INTEGER, start INTEGER, finish INTEGER"],
  ["source_era", "tbl TEXT, patient INTEGER, concept INTEGER, start INTEGER, finish INTEGER"]
]

/** Every table of the staging file. */
export const STAGING_TABLES = `CREATE TABLE patient (idx INTEGER PRIMARY KEY, src TEXT, birth_year INTEGER, sex TEXT, region TEXT, death INTEGER);
      CREATE TABLE patient_identifier (key TEXT, idx INTEGER);
      ${PHASE_TWO_TABLES.map(([table, columns]) => `CREATE TABLE ${table} (f INTEGER, l INTEGER, ${columns});`).join("\n      ")}
      CREATE TABLE record (key TEXT, updated INTEGER, f INTEGER, l INTEGER, day INTEGER);
      CREATE TABLE superseded (f INTEGER, l INTEGER, PRIMARY KEY (f, l)) WITHOUT ROWID;`

/** The indexes of phase two's tables, made once the writes end, for the reads of StagedDataset.ts. */
export const PHASE_TWO_INDEXES = `CREATE INDEX encounter_src ON encounter (src);
      CREATE INDEX course_detail_course ON course_detail (course);
      CREATE INDEX device_event_patient ON device_event (patient, day);
      CREATE INDEX outcome_implant ON outcome (implant);
      CREATE INDEX observed_patient ON observed (patient, finish);
      CREATE INDEX source_era_patient ON source_era (tbl, patient)`

/** The staged facts, read-only, as StagedDataset.ts turns them into tables. */
export interface StagedFacts {
  readonly db: DatabaseSync
  readonly report: Report
  readonly format: "fhir" | "omop"
  readonly patients: number
  readonly latestDay: number | undefined
  readonly seeds: ReadonlyMap<string, { readonly label: string; readonly system: string | null; readonly standard: string | null }>
  readonly concepts: ReadonlyArray<{ readonly kind: MapKind; readonly concept: Concept }>
  /** Concepts only a source's derived tables name: they make no vocabulary entry. */
  readonly comparedOnly: ReadonlySet<number>
  readonly organizations: ReadonlyMap<string, { readonly name: string; readonly region: string }>
  readonly organizationOf: (ref: string | null) => string | null
}
