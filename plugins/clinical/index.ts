/** The clinical domain: a free-text clinical question answered from the population and an interaction knowledge base. */
import { definePlugin } from "../../src/plugin/Plugin.ts"
import { contract } from "./contract.ts"
import { clinical, prepareClinical } from "./handler.ts"

export default definePlugin({ ...contract, prepare: prepareClinical, handler: clinical })
