/** The risk-model domain: a patient's probability of hospitalization, readmission or health decline. */
import { definePlugin } from "../../src/plugin/Plugin.ts"
import { contract } from "./contract.ts"
import { riskModel, prepareRiskModels } from "./handler.ts"

export default definePlugin({ ...contract, prepare: prepareRiskModels, handler: riskModel })
