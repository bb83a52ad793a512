/** The drug-outcomes domain: what happens to patients on a drug, against comparable patients not on it. */
import * as Effect from "effect/Effect"
import { AXES, definePlugin } from "../../src/plugin/Plugin.ts"
import { type Dataset, Kernels } from "../../src/plugin/experimental.ts"
import { analyzeDrug } from "./analysis.ts"
import { contract } from "./contract.ts"
import { drugOutcomes } from "./handler.ts"
import { poolDrugOutcomes } from "./network.ts"
import { perDataset, prepareDrugOutcomes } from "./perDataset.ts"

/**
 * The per-dataset statistics, then one analysis of the drug with the most courses (efficacy, every
 * axis), thrown away. A question's loops run once each, so V8 would start them in its interpreter
 * and compile them while they run: the first person to ask about any drug would wait for that. Run
 * once at load, on every thread that answers, they are compiled before anyone asks. Nothing of the
 * analysis is kept, and a failure here is left for the questions to meet.
 */
const prepare = (data: Dataset) =>
  Effect.gen(function*() {
    yield* prepareDrugOutcomes(data)
    const kernels = yield* Kernels
    const { coursesOf } = yield* perDataset(kernels, data)
    let busiest = 0
    for (let drug = 1; drug < coursesOf.length; drug++) if (coursesOf[drug]!.length > coursesOf[busiest]!.length) busiest = drug
    if (coursesOf.length > 0 && coursesOf[busiest]!.length > 0) yield* Effect.exit(analyzeDrug(kernels, data, busiest, "efficacy", AXES))
  })

export default definePlugin({ ...contract, prepare, handler: drugOutcomes, pool: poolDrugOutcomes })
