/**
 * The OMOP CDM 5.4 tables `hcc data export --format omop` writes, every column in the order of the
 * CDM's DDL (OHDSI CommonDataModel, inst/ddl/5.4), with its type: `i` integer, `f` float, `d` date,
 * `t` datetime, `s` text. A column the export has no value for is written empty. The import reads a
 * CDM 5.4 file without a header row with the same columns (cdmLayouts.ts).
 */

/** A column's type. */
export type CdmType = "i" | "f" | "d" | "t" | "s"

/** A table's columns in DDL order, each with its type. */
export type CdmColumns = ReadonlyArray<readonly [string, CdmType]>

/** The columns of `name:type` words (whitespace between them), in their order. */
export const layout = (text: string): CdmColumns =>
  text.trim().split(/\s+/).map((c) => {
    const [name, type] = c.split(":") as [string, CdmType]
    return [name, type] as const
  })

/** The tables written, by their CDM name. */
export const CDM54 = {
  cdm_source: layout(`cdm_source_name:s cdm_source_abbreviation:s cdm_holder:s source_description:s source_documentation_reference:s
    cdm_etl_reference:s source_release_date:d cdm_release_date:d cdm_version:s cdm_version_concept_id:i vocabulary_version:s`),
  location: layout(`location_id:i address_1:s address_2:s city:s state:s zip:s county:s location_source_value:s country_concept_id:i
    country_source_value:s latitude:f longitude:f`),
  care_site: layout("care_site_id:i care_site_name:s place_of_service_concept_id:i location_id:i care_site_source_value:s place_of_service_source_value:s"),
  provider: layout(`provider_id:i provider_name:s npi:s dea:s specialty_concept_id:i care_site_id:i year_of_birth:i gender_concept_id:i
    provider_source_value:s specialty_source_value:s specialty_source_concept_id:i gender_source_value:s gender_source_concept_id:i`),
  person: layout(`person_id:i gender_concept_id:i year_of_birth:i month_of_birth:i day_of_birth:i birth_datetime:t race_concept_id:i
    ethnicity_concept_id:i location_id:i provider_id:i care_site_id:i person_source_value:s gender_source_value:s gender_source_concept_id:i
    race_source_value:s race_source_concept_id:i ethnicity_source_value:s ethnicity_source_concept_id:i`),
  death: layout("person_id:i death_date:d death_datetime:t death_type_concept_id:i cause_concept_id:i cause_source_value:s cause_source_concept_id:i"),
  observation_period: layout("observation_period_id:i person_id:i observation_period_start_date:d observation_period_end_date:d period_type_concept_id:i"),
  visit_occurrence: layout(`visit_occurrence_id:i person_id:i visit_concept_id:i visit_start_date:d visit_start_datetime:t visit_end_date:d
    visit_end_datetime:t visit_type_concept_id:i provider_id:i care_site_id:i visit_source_value:s visit_source_concept_id:i
    admitted_from_concept_id:i admitted_from_source_value:s discharged_to_concept_id:i discharged_to_source_value:s preceding_visit_occurrence_id:i`),
  condition_occurrence: layout(`condition_occurrence_id:i person_id:i condition_concept_id:i condition_start_date:d condition_start_datetime:t
    condition_end_date:d condition_end_datetime:t condition_type_concept_id:i condition_status_concept_id:i stop_reason:s provider_id:i
    visit_occurrence_id:i visit_detail_id:i condition_source_value:s condition_source_concept_id:i condition_status_source_value:s`),
  drug_exposure: layout(`drug_exposure_id:i person_id:i drug_concept_id:i drug_exposure_start_date:d drug_exposure_start_datetime:t
    drug_exposure_end_date:d drug_exposure_end_datetime:t verbatim_end_date:d drug_type_concept_id:i stop_reason:s refills:i quantity:f
    days_supply:i sig:s route_concept_id:i lot_number:s provider_id:i visit_occurrence_id:i visit_detail_id:i drug_source_value:s
    drug_source_concept_id:i route_source_value:s dose_unit_source_value:s`),
  procedure_occurrence: layout(`procedure_occurrence_id:i person_id:i procedure_concept_id:i procedure_date:d procedure_datetime:t
    procedure_end_date:d procedure_end_datetime:t procedure_type_concept_id:i modifier_concept_id:i quantity:i provider_id:i
    visit_occurrence_id:i visit_detail_id:i procedure_source_value:s procedure_source_concept_id:i modifier_source_value:s`),
  measurement: layout(`measurement_id:i person_id:i measurement_concept_id:i measurement_date:d measurement_datetime:t measurement_time:s
    measurement_type_concept_id:i operator_concept_id:i value_as_number:f value_as_concept_id:i unit_concept_id:i range_low:f range_high:f
    provider_id:i visit_occurrence_id:i visit_detail_id:i measurement_source_value:s measurement_source_concept_id:i unit_source_value:s
    unit_source_concept_id:i value_source_value:s measurement_event_id:i meas_event_field_concept_id:i`),
  observation: layout(`observation_id:i person_id:i observation_concept_id:i observation_date:d observation_datetime:t observation_type_concept_id:i
    value_as_number:f value_as_string:s value_as_concept_id:i qualifier_concept_id:i unit_concept_id:i provider_id:i visit_occurrence_id:i
    visit_detail_id:i observation_source_value:s observation_source_concept_id:i unit_source_value:s qualifier_source_value:s
    value_source_value:s observation_event_id:i obs_event_field_concept_id:i`),
  concept: layout(`concept_id:i concept_name:s domain_id:s vocabulary_id:s concept_class_id:s standard_concept:s concept_code:s
    valid_start_date:d valid_end_date:d invalid_reason:s`),
  concept_relationship: layout("concept_id_1:i concept_id_2:i relationship_id:s valid_start_date:d valid_end_date:d invalid_reason:s"),
  vocabulary: layout("vocabulary_id:s vocabulary_name:s vocabulary_reference:s vocabulary_version:s vocabulary_concept_id:i")
} as const

/** A table written. */
export type CdmTable = keyof typeof CDM54

/** DuckDB's type of a column type (Parquet's logical types follow). */
export const DUCKDB_TYPE: Readonly<Record<CdmType, string>> = { i: "BIGINT", f: "DOUBLE", d: "DATE", t: "TIMESTAMP", s: "VARCHAR" }

/**
 * Concept ids of the CDM's field concepts (vocabulary CDM, class Field), which name the table and
 * key an `*_event_id` column points to (CDM 5.4: MEASUREMENT.meas_event_field_concept_id,
 * OBSERVATION.obs_event_field_concept_id).
 */
export const FIELD_CONCEPT = {
  drug_exposure_id: 1147094,
  procedure_occurrence_id: 1147082
} as const
