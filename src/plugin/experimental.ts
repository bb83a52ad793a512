/**
 * The plugin contract's experimental entry (`hcc-medical-intelligence/plugin/experimental`): the
 * dataset as the platform holds it, the compute core, per-dataset caches and the loop warm-up the
 * built-in plugins use. Made for the built-in plugins' speed, not for stability: a minor version of
 * the plugin API may change any of it (docs/plugins.md, "The experimental entry"). A plugin that
 * imports nothing from here is held to the stable entry (`./plugin`) alone.
 *
 * `Dataset`'s columns are typed arrays over the compute core's memory: read them during the call
 * that got the dataset, never keep them past it.
 */
export { Kernels } from "../kernels/service.ts"
export type { GlmFamily, GlmResult, KernelsService, Panel, PanelPeriodsResult } from "../kernels/types.ts"
export { MISSING_TENTH, scoreReader, TENTH_SCORES } from "../kernels/tenths.ts"
export { type Cohort, type Dataset, HealthData, type HealthDataService } from "../health/HealthData.ts"
export { membersOf } from "../health/cohorts.ts"
export { datasetCache, preparedPerDataset, type PreparedOptions } from "./cache.ts"
export { primed } from "./hotLoops.ts"
