/**
 * The OMOP CDM tables the importer reads, the CDM versions a file may follow, and what a table's file
 * is: the names every other OMOP module shares (tables.ts finds and reads the files).
 */

/** A CDM version a file's columns may follow. */
export type CdmVersion = "5.2" | "5.3" | "5.4"

/** The versions, oldest first. */
export const CDM_VERSIONS: ReadonlyArray<CdmVersion> = ["5.2", "5.3", "5.4"]

/** The CDM tables the importer reads, in the order it reads them (vocabulary and references first). */
export const OMOP_TABLES = [
  "concept",
  "concept_relationship",
  "concept_ancestor",
  "cdm_source",
  "location",
  "care_site",
  "provider",
  "death",
  "person",
  "observation_period",
  "visit_occurrence",
  "condition_occurrence",
  "drug_exposure",
  "procedure_occurrence",
  "device_exposure",
  "measurement",
  "observation",
  "drug_era",
  "condition_era"
] as const
/** One table the importer reads. */
export type OmopTable = (typeof OMOP_TABLES)[number]

/** One table's file. */
export interface OmopFile {
  readonly table: OmopTable
  readonly path: string
  /** Its path in the folder imported, for messages. */
  readonly name: string
  readonly format: "csv" | "parquet"
  readonly gzip: boolean
  readonly bytes: number
  /** A CSV or TSV file without a header row: the CDM version whose DDL order its fields follow, and their columns (textLayout.ts). */
  readonly headerless?: { readonly version: CdmVersion; readonly columns: ReadonlyArray<string> }
  /** Why the file cannot be read at all, when it cannot (one problem of the import). */
  readonly unreadable?: string
}
