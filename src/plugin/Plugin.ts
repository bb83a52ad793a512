/**
 * The plugin contract: the one module a third party imports to add a domain to the service.
 *
 * A plugin is a plain value made by {@link definePlugin}. The platform validates it when it loads,
 * decodes each request with `request` (unknown fields rejected) before calling `handler`, encodes
 * the handler's value with `response`, adds `hcc_cost`, meters the call and writes the ledger.
 * The handler never sees raw input, HTTP, tokens or accounts.
 *
 * Versioned apart from the service (`PLUGIN_API_VERSION`, semver): new capabilities arrive as
 * optional fields with defaults, so plugins written against 2.x keep working in every 2.y. The
 * names a contract and its schemas are made of are also in the contract-only entry (./contract.ts),
 * for modules built from contracts alone. The dataset as the platform holds it, the compute core
 * and the caches are in the experimental entry (./experimental.ts), outside that promise.
 * test/plugin/surface.test.ts pins the three entries.
 */
export {
  defineContract,
  definePlugin,
  DOMAIN_ERROR_STATUSES,
  type DomainErrorSpec,
  type Plugin,
  PLUGIN_API_VERSION,
  type PluginContract,
  type PluginExample,
  type PluginServices,
  type PluginSpec,
  type SiteAnswer,
  type TypedPlugin,
  withAnswers
} from "./spec.ts"
export { type ContextValue, DomainError, fail } from "./errors.ts"
export { type PluginView, tableRows, VIEW_MEDIA_TYPE, VIEW_VERSION, type ViewRows, type ViewTable, viewSpec } from "./view.ts"
export { PARTIAL_MEDIA_TYPE, PartialWanted, ViewWanted, wantsView } from "./viewData.ts"

export { type Basis, Disclosure, type DisclosureService, type DisclosureSpec } from "./disclosure.ts"

export { ADHERENCE_THRESHOLD, type CohortCriteria, ENCOUNTER_KINDS, type VocabularyDetail } from "../health/HealthData.ts"
export {
  type AxisSeries,
  type CohortView,
  type CountBy,
  type DatasetSummary,
  type MonthWindow,
  PatientData,
  type PatientDataService,
  type WindowSummary
} from "../health/PatientData.ts"
/** A request's name for a vocabulary entry (the dataset's code, or a standard code such as `snomed:44054006`) → the dataset's code. */
export { resolveCode } from "../health/codes.ts"
export { closest, editDistance, editDistanceWithin } from "./suggest.ts"
/** The dataset's calendar: days since 1970-01-01 (UTC) and months since year 0 (`year × 12 + month − 1`), as the Dataset's columns count them. */
export {
  firstDayOfMonth,
  formatDate,
  formatMonth,
  lastDayOfMonth,
  mondayOnOrBefore,
  monthOfDay,
  parseDate,
  parseMonth,
  quarterLabel,
  yearOfDay
} from "../health/calendar.ts"
/** The names of the decay rules (`Kernels.evaluateRules`' axis-mask bits) and of the trajectory models (`Kernels.fitTrajectories`' model index), in kernel order. */
export { MODEL_NAMES, RULE_NAMES } from "./names.ts"

export { AXES, AXIS_NAMES, AXIS_SCORE_RANGE, type Axis, AxisCode, AxisScore, canonicalOrder, pairKey } from "./axes.ts"
export { QUERY_TYPES, QueryType, SEXES, type Sex, TIME_RANGES, TimeRange } from "./vocabularies.ts"
export { AGE_LIMITS, AgeRange, Code, Days, distinctNonEmpty, Minimum, Months, parseAgeRange, parseDays, parseMinimum, parseMonths } from "./shapes.ts"
export { chiSquareUpperP, incompleteBeta, oneSampleTP, roundTo, studentTQuantile, studentTwoSidedP } from "./stats.ts"
export { type EffectEstimate, type MetaAnalysis, metaAnalysis, type PooledEffect, tau2DerSimonianLaird, tau2Reml, Z95 } from "./metaAnalysis.ts"
export { above, atLeast, atMost, below, SCORE_TOLERANCE } from "../kernels/thresholds.ts"
