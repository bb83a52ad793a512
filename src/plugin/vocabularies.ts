/** Service-wide vocabularies (listed in the catalog), part of the plugin contract. */
import * as Schema from "effect/Schema"

/** Query types (clinical `response_format` accepts each, with a distinct documented answer). */
export const QUERY_TYPES = ["structured", "natural_language", "sql_like"] as const
/** Supported time ranges. */
export const TIME_RANGES = ["30_days", "90_days", "6_months", "1_year", "all"] as const

/** Sex as recorded (FHIR R4 AdministrativeGender), in the order of their codes in the loaded columns. */
export const SEXES = ["female", "male", "other", "unknown"] as const
/** One sex value. */
export type Sex = (typeof SEXES)[number]

/** A query type in a request. */
export const QueryType = Schema.Literals(QUERY_TYPES)
/** A time range in a request. */
export const TimeRange = Schema.Literals(TIME_RANGES)
