/** POST /v1/drug-outcomes: the drug's cohort, its comparison with comparable unexposed patients, adverse events, per-axis breakdown. */
import * as Effect from "effect/Effect"
import { canonicalOrder, closest, Disclosure, fail, parseMinimum, PartialWanted, resolveCode, roundTo, ViewWanted, Z95 } from "../../src/plugin/Plugin.ts"
import { datasetCache, HealthData, Kernels } from "../../src/plugin/experimental.ts"
import { analyzeDrug, type DrugAnalysis } from "./analysis.ts"
import { drugPartial } from "./network.ts"
import type { DrugOutcomesPartial, DrugOutcomesRequest, DrugOutcomesResponse, DrugOutcomesViewData } from "./schema.ts"

/**
 * Analyses by drug, outcome type and target axes, kept while the dataset is served. Only the axes
 * asked for are computed: each axis's figures are computed on their own (its own sums, in patient
 * order), so they are the same whichever other axes a question names.
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
    const disclosure = yield* Disclosure
    // A population_size under the minimum cell size is raised to it.
    const required = Math.max(parseMinimum(request.population_size)!, disclosure.minimum)
    const a = yield* analyses(data, `${drug}/${request.outcome_type}/${axes.join(",")}`, Effect.orDie(analyzeDrug(kernels, data, drug, request.outcome_type, axes)))
    if (request.outcome_type === "adherence" && a.adherenceKnown === 0) {
      return yield* fail("adherence_unknown", `No course of ${request.drug} in the data window has a known adherence (the dataset has no dispensing records for it), so no cohort of adherent patients can be formed.`)
    }
    yield* disclosure.cohort(a.cohortSize, `The patients on ${request.drug} (${request.outcome_type})`)
    if (a.cohortSize < required) {
      return yield* fail("cohort_too_small", `${disclosure.text(a.cohortSize)} patients match ${request.drug} (${request.outcome_type}); the request asks for at least ${required}.`, {
        context: { cohort_size: disclosure.count(a.cohortSize) ?? 0, required, minimum: disclosure.minimum }
      })
    }
    const used = axes.map((axis) => a.axes.get(axis)!).filter((e) => Number.isFinite(e.standardized))
    if (used.length === 0) {
      return yield* fail("cohort_too_small", `No comparable unexposed patients (same indication, age band and sex) have ${axes.join(", ")} scores.`, {
        context: { minimum: disclosure.minimum }
      })
    }
    // What each figure rests on: the standardized differences on their exposed and comparator
    // patients, the event rate on the cohort and its events, each axis's correlation and trend on their patients.
    disclosure.rests("/efficacy_score", ...used.flatMap((e) => [e.exposedN, e.comparatorN]))
    disclosure.rests("/adverse_event_rate", a.cohortSize, a.events)
    for (const axis of axes) {
      const e = a.axes.get(axis)!
      disclosure.rests(`/axis_breakdown/${axis}/correlation`, e.correlationN)
      disclosure.rests(`/axis_breakdown/${axis}/trend`, e.slopeN)
    }
    const viewData: typeof DrugOutcomesViewData.Type | undefined = (yield* ViewWanted)
      ? {
        effects: axes.filter((axis) => Number.isFinite(a.axes.get(axis)!.standardized)).map((axis, i) => {
          const e = a.axes.get(axis)!
          // Each axis's effect rests on its own exposed and comparator patients.
          for (const field of ["d", "ci_low", "ci_high"]) disclosure.rests(`/view_data/effects/${i}/${field}`, e.exposedN, e.comparatorN)
          const half = Z95 * e.standardizedSe
          return { axis, d: roundTo(e.standardized, 3), ci_low: roundTo(e.standardized - half, 3), ci_high: roundTo(e.standardized + half, 3), exposed: e.exposedN, comparators: e.comparatorN }
        })
      }
      : undefined
    const response: typeof DrugOutcomesResponse.Type & { view_data?: typeof DrugOutcomesViewData.Type; partial?: typeof DrugOutcomesPartial.Type } = {
      drug: request.drug,
      outcome_type: request.outcome_type,
      cohort_size: a.cohortSize,
      efficacy_score: roundTo(used.reduce((s, e) => s + e.standardized, 0) / used.length, 3),
      adverse_event_rate: roundTo(a.eventRate, 4),
      axis_breakdown: Object.fromEntries(axes.map((axis) => {
        const e = a.axes.get(axis)!
        return [axis, { correlation: Number.isNaN(e.correlation) ? null : roundTo(e.correlation, 3), trend: e.trend }]
      })),
      ...(viewData === undefined ? {} : { view_data: viewData }),
      ...((yield* PartialWanted) ? { partial: drugPartial(a, axes, disclosure) } : {})
    }
    return response
  })
