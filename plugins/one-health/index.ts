/** The one-health domain: do animal cases lead human cases of a zoonotic condition in a region? */
import { definePlugin } from "../../src/plugin/Plugin.ts"
import { contract } from "./contract.ts"
import { oneHealth } from "./handler.ts"

export default definePlugin({ ...contract, handler: oneHealth })
