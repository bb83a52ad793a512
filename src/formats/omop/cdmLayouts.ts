/**
 * The columns of every table the OMOP import reads, in the order of the DDL of CDM 5.2, 5.3 and
 * 5.4, with their types (cdm54.ts's letters): what the fields of a text file without a header row
 * are (textLayout.ts). Sources, OHDSI CommonDataModel:
 *
 * - CDM 5.2: `Documentation/CommonDataModel_Csv_Files/OMOP_CDM_v5_2.csv`. 5.2 has DEATH and no
 *   VISIT_DETAIL, so no `visit_detail_id` anywhere; MEASUREMENT has no `measurement_time`;
 *   PROCEDURE_OCCURRENCE ends with `qualifier_source_value`.
 * - CDM 5.3: the v5.3.1 release, `OMOP_CDM_v5_3_1.csv`, as ETL-CMS and ETL-Synthea's v5.3.1
 *   scripts write it: CONDITION_OCCURRENCE ends with `condition_status_concept_id`. (The DDL the
 *   CommonDataModel R package later generated for 5.3, `inst/ddl/5.3`, has it ninth, after
 *   `condition_type_concept_id`: that is 5.4's order, so such a file reads as 5.4's.)
 * - CDM 5.4: `inst/ddl/5.4`: the export's tables (cdm54.ts), and CONCEPT_ANCESTOR and
 *   DEVICE_EXPOSURE, which the export does not write.
 */
import { CDM54, type CdmColumns, layout } from "./cdm54.ts"
import { CDM_VERSIONS, type CdmVersion, type OmopTable } from "./cdmTables.ts"

export { CDM_VERSIONS, type CdmVersion }

type Layouts = Readonly<Record<OmopTable, CdmColumns>>

const V54: Layouts = {
  concept: CDM54.concept,
  concept_relationship: CDM54.concept_relationship,
  concept_ancestor: layout("ancestor_concept_id:i descendant_concept_id:i min_levels_of_separation:i max_levels_of_separation:i"),
  cdm_source: CDM54.cdm_source,
  location: CDM54.location,
  care_site: CDM54.care_site,
  provider: CDM54.provider,
  death: CDM54.death,
  person: CDM54.person,
  observation_period: CDM54.observation_period,
  visit_occurrence: CDM54.visit_occurrence,
  condition_occurrence: CDM54.condition_occurrence,
  drug_exposure: CDM54.drug_exposure,
  procedure_occurrence: CDM54.procedure_occurrence,
  device_exposure: layout(`device_exposure_id:i person_id:i device_concept_id:i device_exposure_start_date:d device_exposure_start_datetime:t
    device_exposure_end_date:d device_exposure_end_datetime:t device_type_concept_id:i unique_device_id:s production_id:s quantity:i provider_id:i
    visit_occurrence_id:i visit_detail_id:i device_source_value:s device_source_concept_id:i unit_concept_id:i unit_source_value:s unit_source_concept_id:i`),
  measurement: CDM54.measurement,
  observation: CDM54.observation,
  // The derived tables an import compares its own eras with (5.2 and 5.3 type their dates DATETIME; the order is the same).
  drug_era: layout("drug_era_id:i person_id:i drug_concept_id:i drug_era_start_date:d drug_era_end_date:d drug_exposure_count:i gap_days:i"),
  condition_era: layout("condition_era_id:i person_id:i condition_concept_id:i condition_era_start_date:d condition_era_end_date:d condition_occurrence_count:i")
}

/** 5.3 (v5.3.1): the vocabulary, PERSON, DEATH, CARE_SITE, PROVIDER, OBSERVATION_PERIOD and DRUG_EXPOSURE as in 5.4. */
const V53: Layouts = {
  ...V54,
  cdm_source: layout(`cdm_source_name:s cdm_source_abbreviation:s cdm_holder:s source_description:s source_documentation_reference:s
    cdm_etl_reference:s source_release_date:d cdm_release_date:d cdm_version:s vocabulary_version:s`),
  location: layout("location_id:i address_1:s address_2:s city:s state:s zip:s county:s location_source_value:s"),
  visit_occurrence: layout(`visit_occurrence_id:i person_id:i visit_concept_id:i visit_start_date:d visit_start_datetime:t visit_end_date:d
    visit_end_datetime:t visit_type_concept_id:i provider_id:i care_site_id:i visit_source_value:s visit_source_concept_id:i
    admitting_source_concept_id:i admitting_source_value:s discharge_to_concept_id:i discharge_to_source_value:s preceding_visit_occurrence_id:i`),
  condition_occurrence: layout(`condition_occurrence_id:i person_id:i condition_concept_id:i condition_start_date:d condition_start_datetime:t
    condition_end_date:d condition_end_datetime:t condition_type_concept_id:i stop_reason:s provider_id:i visit_occurrence_id:i visit_detail_id:i
    condition_source_value:s condition_source_concept_id:i condition_status_source_value:s condition_status_concept_id:i`),
  procedure_occurrence: layout(`procedure_occurrence_id:i person_id:i procedure_concept_id:i procedure_date:d procedure_datetime:t
    procedure_type_concept_id:i modifier_concept_id:i quantity:i provider_id:i visit_occurrence_id:i visit_detail_id:i procedure_source_value:s
    procedure_source_concept_id:i modifier_source_value:s`),
  device_exposure: layout(`device_exposure_id:i person_id:i device_concept_id:i device_exposure_start_date:d device_exposure_start_datetime:t
    device_exposure_end_date:d device_exposure_end_datetime:t device_type_concept_id:i unique_device_id:s quantity:i provider_id:i
    visit_occurrence_id:i visit_detail_id:i device_source_value:s device_source_concept_id:i`),
  measurement: layout(`measurement_id:i person_id:i measurement_concept_id:i measurement_date:d measurement_datetime:t measurement_time:s
    measurement_type_concept_id:i operator_concept_id:i value_as_number:f value_as_concept_id:i unit_concept_id:i range_low:f range_high:f
    provider_id:i visit_occurrence_id:i visit_detail_id:i measurement_source_value:s measurement_source_concept_id:i unit_source_value:s
    value_source_value:s`),
  observation: layout(`observation_id:i person_id:i observation_concept_id:i observation_date:d observation_datetime:t observation_type_concept_id:i
    value_as_number:f value_as_string:s value_as_concept_id:i qualifier_concept_id:i unit_concept_id:i provider_id:i visit_occurrence_id:i
    visit_detail_id:i observation_source_value:s observation_source_concept_id:i unit_source_value:s qualifier_source_value:s`)
}

/** 5.2: 5.3 without `visit_detail_id` (and MEASUREMENT without `measurement_time`). */
const V52: Layouts = {
  ...V53,
  condition_occurrence: layout(`condition_occurrence_id:i person_id:i condition_concept_id:i condition_start_date:d condition_start_datetime:t
    condition_end_date:d condition_end_datetime:t condition_type_concept_id:i stop_reason:s provider_id:i visit_occurrence_id:i
    condition_source_value:s condition_source_concept_id:i condition_status_source_value:s condition_status_concept_id:i`),
  drug_exposure: layout(`drug_exposure_id:i person_id:i drug_concept_id:i drug_exposure_start_date:d drug_exposure_start_datetime:t
    drug_exposure_end_date:d drug_exposure_end_datetime:t verbatim_end_date:d drug_type_concept_id:i stop_reason:s refills:i quantity:f
    days_supply:i sig:s route_concept_id:i lot_number:s provider_id:i visit_occurrence_id:i drug_source_value:s drug_source_concept_id:i
    route_source_value:s dose_unit_source_value:s`),
  procedure_occurrence: layout(`procedure_occurrence_id:i person_id:i procedure_concept_id:i procedure_date:d procedure_datetime:t
    procedure_type_concept_id:i modifier_concept_id:i quantity:i provider_id:i visit_occurrence_id:i procedure_source_value:s
    procedure_source_concept_id:i qualifier_source_value:s`),
  device_exposure: layout(`device_exposure_id:i person_id:i device_concept_id:i device_exposure_start_date:d device_exposure_start_datetime:t
    device_exposure_end_date:d device_exposure_end_datetime:t device_type_concept_id:i unique_device_id:s quantity:i provider_id:i
    visit_occurrence_id:i device_source_value:s device_source_concept_id:i`),
  measurement: layout(`measurement_id:i person_id:i measurement_concept_id:i measurement_date:d measurement_datetime:t
    measurement_type_concept_id:i operator_concept_id:i value_as_number:f value_as_concept_id:i unit_concept_id:i range_low:f range_high:f
    provider_id:i visit_occurrence_id:i measurement_source_value:s measurement_source_concept_id:i unit_source_value:s value_source_value:s`),
  observation: layout(`observation_id:i person_id:i observation_concept_id:i observation_date:d observation_datetime:t observation_type_concept_id:i
    value_as_number:f value_as_string:s value_as_concept_id:i qualifier_concept_id:i unit_concept_id:i provider_id:i visit_occurrence_id:i
    observation_source_value:s observation_source_concept_id:i unit_source_value:s qualifier_source_value:s`)
}

/** Each version's columns of each table read, in DDL order. */
export const CDM_LAYOUTS: Readonly<Record<CdmVersion, Layouts>> = { "5.2": V52, "5.3": V53, "5.4": V54 }

/** The columns of a table that some CDM version declares a number (integer or float). */
export const numericColumnsOf = (table: OmopTable): ReadonlySet<string> =>
  new Set(CDM_VERSIONS.flatMap((v) => CDM_LAYOUTS[v][table].flatMap(([c, type]) => (type === "i" || type === "f" ? [c] : []))))
