/** The drug-outcomes domain: what happens to patients on a drug, against comparable patients not on it. */
import { definePlugin } from "../../src/plugin/Plugin.ts"
import { contract } from "./contract.ts"
import { drugOutcomes } from "./handler.ts"
import { prepareDrugOutcomes } from "./perDataset.ts"

export default definePlugin({ ...contract, prepare: prepareDrugOutcomes, handler: drugOutcomes })
