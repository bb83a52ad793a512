/**
 * Why a plugin was refused at start-up. Each rule has a stable code, listed (with its meaning) in
 * docs/plugins.md; a test keeps that table and `PLUGIN_RULES` in step.
 */
import * as Schema from "effect/Schema"

/** Every rule a plugin must satisfy, by code. */
export const PLUGIN_RULES = {
  module_load_failed: "the module could not be imported (missing file, syntax error, throwing top level)",
  export_missing: "the module has no default export (or `plugin` export) that is a plugin object",
  name_invalid: "`name` must be kebab-case: lowercase letters and digits in dash-separated words",
  name_duplicate: "`name` is already used by another loaded plugin",
  version_invalid: "`version` must be a semver version such as 1.0.0",
  engine_unsupported: "`engine` must be a semver range that includes this service's PLUGIN_API_VERSION",
  path_invalid: "`path` must be /v1/ followed by one or more lowercase kebab-case segments",
  path_duplicate: "`path` is already served by the platform or another plugin",
  summary_missing: "`summary` must be a non-empty string",
  cost_invalid: "`hcc_cost` must be a finite number ≥ 0",
  schema_missing: "`request` and `response` must be effect Schemas",
  response_not_struct: "`response` must be a Schema.Struct (the platform adds `hcc_cost` to its fields)",
  response_declares_cost: "`response` must not declare `hcc_cost`: the platform adds it from the plugin's `hcc_cost`",
  handler_missing: "`handler` must be a function",
  error_invalid: "each entry of `errors` needs a snake_case `code`, a status of 400, 422 or 503 and a description, and must not reuse a platform code",
  example_invalid: "each example's `request` must decode with the plugin's `request` schema",
  disclosure_invalid: "`disclosure` must name response fields by JSON pointer (`*` for any key or index): `cohort` an integer field, each of `counts` and `statistics` a field that allows null",
  view_invalid: "`view` must be a view of version 1 whose tables point at request or response fields of their kind and whose Vega-Lite specification compiles and names only fields its tables have",
  partial_invalid: "`partial` (the partial representation's member, pooled by a network coordinator) must be an effect Schema"
} as const

/** A rule code. */
export type PluginRule = keyof typeof PLUGIN_RULES

/** A plugin broke a rule; start-up stops with this message and a non-zero exit code. */
export class PluginRejected extends Schema.TaggedError<PluginRejected>()("PluginRejected", {
  plugin: Schema.String,
  source: Schema.String,
  rule: Schema.String,
  reason: Schema.String
}) {
  override get message(): string {
    return `plugin "${this.plugin}" (from ${this.source}) rejected by rule ${this.rule}: ${this.reason}`
  }
}
