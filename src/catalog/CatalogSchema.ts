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
  dataset: Schema.NullOr(Schema.Struct({
    as_of: Schema.String.annotate({ description: "The dataset's as_of date (YYYY-MM-DD): time ranges count back from it" }),
    source: Schema.Literals(["synthetic", "imported"]).annotate({ description: "synthetic: generated with planted truths (the default); imported: loaded with hcc data import" }),
    patients: Schema.Int,
    generator_version: Schema.NullOr(Schema.String).annotate({ description: "Version of the generator that made it (synthetic data)" })
  })).annotate({ description: "What the answers are based on; null while the dataset loads. Answers are not medical advice." }),
  hcc_cost: Schema.Literal(0)
})

/** The catalog's description of a dataset, from its dataset_info. */
export const datasetMeta = (info: Readonly<Record<string, string>>, patients: number): NonNullable<(typeof CatalogResponse.Type)["dataset"]> => ({
  as_of: info["as_of"] ?? "",
  source: info["source"] === "generated" ? "synthetic" : "imported",
  patients,
  generator_version: info["generator_version"] ?? null
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

/** One readiness check's state (GET /readyz, in the 200 and in the 503). */
export const ReadinessCheckState = Schema.Struct({
  status: Schema.Literals(["ok", "loading", "failed"]).annotate({
    description: "ok: usable; loading: on its way (retry); failed: needs the operator (see the server log)"
  }),
  detail: Schema.String.annotate({ description: "What the check found, in words" }),
  progress: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 })).annotate({
    description: "Share done of the current step (0–1), while a long step runs (dataset generation, loading)"
  }))
})

/** GET /healthz and /readyz. */
export const HealthResponse = Schema.Struct({
  status: Schema.Literals(["ok", "ready"]),
  checks: Schema.optionalKey(Schema.Record(Schema.String, ReadinessCheckState)),
  hcc_cost: Schema.Literal(0)
})
