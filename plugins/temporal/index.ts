/** The temporal domain: decay of health behaviour over time and predicted trajectories (28 rules). */
import { definePlugin } from "../../src/plugin/Plugin.ts"
import { contract } from "./contract.ts"
import { temporal } from "./handler.ts"

export default definePlugin({ ...contract, handler: temporal })
