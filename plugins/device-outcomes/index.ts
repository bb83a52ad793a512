/** The device-outcomes domain: pooled outcomes of implanted devices across studies. */
import { definePlugin } from "../../src/plugin/Plugin.ts"
import { contract } from "./contract.ts"
import { deviceOutcomes } from "./handler.ts"
import { poolDeviceOutcomes } from "./network.ts"

export default definePlugin({ ...contract, handler: deviceOutcomes, pool: poolDeviceOutcomes })
