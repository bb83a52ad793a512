/**
 * The plugin contract's contract-only entry (`hcc-medical-intelligence/plugin/contract`): what a
 * plugin's contract (`defineContract`) and its request and response schemas are made of — the
 * axes, the shared request shapes and vocabularies, the names of the kernels' rules and models —
 * and nothing that holds or computes data. A module built from contracts alone (a typed client,
 * src/client) loads only this, the schemas and effect. Every name here is also in the stable entry
 * (Plugin.ts), under the same versioning.
 */
export { AXES, AXIS_NAMES, AXIS_SCORE_RANGE, type Axis, AxisCode, AxisScore, canonicalOrder, pairKey } from "./axes.ts"
export { MODEL_NAMES, RULE_NAMES } from "./names.ts"
export { AGE_LIMITS, AgeRange, Code, Days, distinctNonEmpty, Minimum, Months, parseAgeRange, parseDays, parseMinimum, parseMonths } from "./shapes.ts"
export { defineContract, type DomainErrorSpec, type PluginContract, type PluginExample, withAnswers } from "./spec.ts"
export { QUERY_TYPES, QueryType, SEXES, type Sex, TIME_RANGES, TimeRange } from "./vocabularies.ts"
export { type PluginView, tableRows, VIEW_MEDIA_TYPE, VIEW_VERSION, type ViewRows, type ViewTable, viewSpec } from "./view.ts"
