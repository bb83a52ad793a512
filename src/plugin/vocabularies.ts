/** Service-wide vocabularies (listed in the catalog), part of the plugin contract. */
import { Schema } from "effect"

/** Query types (clinical `response_format` accepts each, with a distinct documented answer). */
export const QUERY_TYPES = ["structured", "natural_language", "sql_like"] as const
/** Supported time ranges. */
export const TIME_RANGES = ["30_days", "90_days", "6_months", "1_year", "all"] as const

/** A query type in a request. */
export const QueryType = Schema.Literals(QUERY_TYPES)
/** A time range in a request. */
export const TimeRange = Schema.Literals(TIME_RANGES)
