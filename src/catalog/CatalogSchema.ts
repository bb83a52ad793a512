/** Response schemas of the platform's own endpoints: the catalog (decisions §6) and usage. */
import { Schema } from "effect"

const NameList = Schema.Array(Schema.String)

/** GET /v1/catalog. */
export const CatalogResponse = Schema.Struct({
  axes: NameList.annotate({ description: "The eight axis codes in canonical order" }),
  domains: NameList.annotate({ description: "Names of the loaded plugins (built-in and third-party)" }),
  query_types: NameList,
  supported_time_ranges: NameList,
  version: Schema.String.annotate({ description: "Service version (semver)" }),
  axis_details: Schema.Array(Schema.Struct({ code: Schema.String, name: Schema.String })),
  axis_score_range: Schema.Tuple([Schema.Number, Schema.Number]),
  endpoints: Schema.Array(Schema.Struct({
    domain: Schema.String,
    method: Schema.String,
    path: Schema.String,
    hcc_cost: Schema.Number,
    summary: Schema.String,
    experimental: Schema.Boolean
  })),
  vocabularies: Schema.Record(Schema.String, NameList).annotate({
    description: "Every closed vocabulary a request accepts, by field name"
  }),
  tiers: Schema.Array(Schema.Struct({
    name: Schema.String,
    daily_limit: Schema.NullOr(Schema.Int),
    burst_per_minute: Schema.Int
  })),
  hcc_cost: Schema.Literal(0)
})

const LimitUsage = Schema.Struct({
  limit: Schema.Int,
  used: Schema.Int,
  remaining: Schema.Int,
  window_seconds: Schema.Int,
  reset_seconds: Schema.Int.annotate({ description: "Seconds until the window frees capacity" })
})

/** GET /v1/usage. */
export const UsageResponse = Schema.Struct({
  account_id: Schema.String,
  tier: Schema.String,
  day: Schema.String.annotate({ description: "The UTC day the daily counts belong to (YYYY-MM-DD)" }),
  limits: Schema.Struct({
    burst: LimitUsage,
    daily: Schema.NullOr(LimitUsage).annotate({ description: "null for tiers without a daily cap" })
  }),
  queries_today: Schema.Int.annotate({ description: "Charged queries today" }),
  hcc_cost_today: Schema.Number.annotate({ description: "HCC credits charged today" }),
  hcc_cost: Schema.Literal(0)
})

/** GET /healthz and /readyz. */
export const HealthResponse = Schema.Struct({
  status: Schema.Literals(["ok", "ready"]),
  checks: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
  hcc_cost: Schema.Literal(0)
})
