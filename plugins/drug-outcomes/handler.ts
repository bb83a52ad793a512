/** POST /v1/drug-outcomes: the drug's cohort, its comparison with comparable unexposed patients, adverse events, per-axis breakdown. */
import { Effect } from "effect"
import { AXES, canonicalOrder, closest, datasetCache, fail, HealthData, Kernels, parseMinimum, resolveCode, roundTo } from "../../src/plugin/Plugin.ts"
import { analyzeDrug, type DrugAnalysis } from "./analysis.ts"
import type { DrugOutcomesRequest, DrugOutcomesResponse } from "./schema.ts"

/**
 * Analyses by drug and outcome type, for all 8 axes (each axis is computed on its own, so a
 * request's axes_filter just picks from them), kept while the dataset is served.
 */
const analyses = datasetCache<DrugAnalysis>(256)

/** Answers one request. */
export const drugOutcomes = (request: typeof DrugOutcomesRequest.Type) =>
  Effect.gen(function*() {
    const kernels = yield* Kernels
    const data = yield* (yield* HealthData).dataset
    const code = resolveCode(data, "drug", request.drug)
    const drug = code === undefined ? -1 : data.vocabulary.drug.indexOf(code)
    if (drug < 0) {
      return yield* fail("unknown_drug", `No drug named '${request.drug}' in the dataset.`, { suggestions: closest(request.drug, data.vocabulary.drug) })
    }
    const axes = canonicalOrder(request.axes_filter)
    const required = parseMinimum(request.population_size)!
    const a = yield* analyses(data, `${drug}/${request.outcome_type}`, Effect.orDie(analyzeDrug(kernels, data, drug, request.outcome_type, AXES)))
    if (request.outcome_type === "adherence" && a.adherenceKnown === 0) {
      return yield* fail("adherence_unknown", `No course of ${request.drug} in the data window has a known adherence (the dataset has no dispensing records for it), so no cohort of adherent patients can be formed.`)
    }
    if (a.cohortSize < required) {
      return yield* fail("cohort_too_small", `${a.cohortSize} patients match ${request.drug} (${request.outcome_type}); the request asks for at least ${required}.`, {
        context: { cohort_size: a.cohortSize, required }
      })
    }
    const standardized = axes.map((axis) => a.axes.get(axis)!.standardized).filter((x) => Number.isFinite(x))
    if (standardized.length === 0) {
      return yield* fail("cohort_too_small", `No comparable unexposed patients (same indication, age band and sex) have ${axes.join(", ")} scores.`, {
        context: { cohort_size: a.comparators, required: 2 }
      })
    }
    const response: typeof DrugOutcomesResponse.Type = {
      drug: request.drug,
      outcome_type: request.outcome_type,
      cohort_size: a.cohortSize,
      efficacy_score: roundTo(standardized.reduce((s, x) => s + x, 0) / standardized.length, 3),
      adverse_event_rate: roundTo(a.eventRate, 4),
      axis_breakdown: Object.fromEntries(axes.map((axis) => {
        const e = a.axes.get(axis)!
        return [axis, { correlation: Number.isNaN(e.correlation) ? null : roundTo(e.correlation, 3), trend: e.trend }]
      }))
    }
    return response
  })
