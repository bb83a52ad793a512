/**
 * The service's own terms in an OMOP folder, for what the CDM has no column for: written by
 * `hcc data export --format omop`, read first by the OMOP import (docs/data.md, "Exporting OMOP CDM").
 */

/** The first concept id of the site-local range (OMOP reserves ids above 2,000,000,000 for local concepts). */
export const LOCAL_CONCEPT_BASE = 2_000_000_000
/** LOCATION.location_source_value `urn:hcc:region:<code>`: the region itself. */
export const HCC_REGION_PREFIX = "urn:hcc:region:"
/** CARE_SITE.care_site_source_value `urn:hcc:device-study:<id>`: the device study `<id>`. */
export const HCC_STUDY_PREFIX = "urn:hcc:device-study:"
/** The vocabulary of the service's own facts about a drug exposure (concept codes `adherence`, `ongoing`). */
export const HCC_FACT_VOCABULARY = "HCC"
/** The vocabulary of direct axis scores (concept code: the axis). */
export const HCC_AXIS_VOCABULARY = "HCC axis"
/** The vocabulary of a vocabulary kind's entries (`HCC condition`, `HCC device_metric`, …). */
export const hccVocabularyOf = (kind: string): string => `HCC ${kind}`
