/** The population domain: how a cohort's axis scores move over time. */
import { definePlugin } from "../../src/plugin/Plugin.ts"
import { contract } from "./contract.ts"
import { population, preparePopulation } from "./handler.ts"
import { poolPopulation } from "./network.ts"

export default definePlugin({ ...contract, prepare: preparePopulation, handler: population, pool: poolPopulation })
