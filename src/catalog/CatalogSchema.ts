/** Response schemas of the platform's own endpoints: the catalog and usage (docs/api.md, "Platform endpoints"). */
import * as Schema from "effect/Schema"

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
  standard_codes: Schema.Record(Schema.String, Schema.Record(Schema.String, Schema.String)).annotate({
    description: "Per vocabulary of the loaded dataset, code → its standard code in `system:code` notation (e.g. type_2_diabetes → snomed:44054006); " +
      "a request may name an entry either way. Codes without a standard code are left out; empty while the dataset loads"
  }),
  tiers: Schema.Array(Schema.Struct({
    name: Schema.String,
    daily_limit: Schema.NullOr(Schema.Int),
    burst_per_minute: Schema.Int
  })),
  dataset: Schema.NullOr(Schema.Struct({
    id: Schema.String.annotate({ description: "The dataset's id, renewed by every import or generation (the HCC-Dataset-Id header of every data answer)" }),
    as_of: Schema.String.annotate({ description: "The dataset's as_of date (YYYY-MM-DD): time ranges count back from it" }),
    source: Schema.Literals(["synthetic", "imported"]).annotate({ description: "synthetic: generated with planted truths (the default); imported: loaded with hcc data import" }),
    patients: Schema.Int,
    generator_version: Schema.NullOr(Schema.String).annotate({ description: "Version of the generator that made it (synthetic data)" }),
    format: Schema.NullOr(Schema.String).annotate({ description: "What an imported dataset was imported from: csv, fhir or omop (null for generated data)" }),
    axis_coverage: Schema.Record(Schema.String, Schema.Finite).annotate({
      description: "Per axis, the share of patients with at least one score (0–1, 3 decimals). 0: no data informs the axis (e.g. no instrument of the axis model in an imported dataset); answers then say so instead of inventing scores"
    })
  })).annotate({ description: "What the answers are based on; null while the dataset loads. Answers are not medical advice." }),
  disclosure: Schema.Struct({
    min_cell_size: Schema.Int.annotate({
      description: "No published count or statistic rests on fewer patients than this (HCC_MIN_CELL_SIZE; 1: the rule is off). Smaller counts read null or \"fewer than <n>\"; a cohort under it is 422 cohort_too_small"
    }),
    count_rounding: Schema.Int.annotate({ description: "Every published count is rounded to a multiple of this (HCC_COUNT_ROUNDING; 1: not rounded)" })
  }).annotate({ description: "The small-cell rule in force (docs/api.md, Small cells)" }),
  hcc_cost: Schema.Literal(0)
})

/** What the answer headers say of a dataset (every data answer names the dataset it came from). */
export const datasetHeaders = (id: string, info: Readonly<Record<string, string>>): { readonly id: string; readonly as_of: string; readonly source: "synthetic" | "imported" } => ({
  id,
  as_of: info["as_of"] ?? "",
  source: info["source"] === "generated" ? "synthetic" : "imported"
})

/** The catalog's description of a dataset, from its dataset_info and axis coverage. */
export const datasetMeta = (
  id: string,
  info: Readonly<Record<string, string>>,
  patients: number,
  axisCoverage: Readonly<Record<string, number>>
): NonNullable<(typeof CatalogResponse.Type)["dataset"]> => ({
  ...datasetHeaders(id, info),
  patients,
  generator_version: info["generator_version"] ?? null,
  format: info["format"] ?? (info["source"] === "generated" ? null : "csv"),
  axis_coverage: Object.fromEntries(Object.entries(axisCoverage).map(([axis, share]) => [axis, Math.round(share * 1000) / 1000]))
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
