/** The built-in plugins, in catalog order. A test checks this list against the folders beside it. */
import type { Plugin } from "../src/plugin/Plugin.ts"
import clinical from "./clinical/index.ts"
import deviceOutcomes from "./device-outcomes/index.ts"
import drugOutcomes from "./drug-outcomes/index.ts"
import oneHealth from "./one-health/index.ts"
import population from "./population/index.ts"
import riskModel from "./risk-model/index.ts"
import temporal from "./temporal/index.ts"

const builtins: ReadonlyArray<Plugin> = [clinical, drugOutcomes, riskModel, deviceOutcomes, population, oneHealth, temporal]

export default builtins
