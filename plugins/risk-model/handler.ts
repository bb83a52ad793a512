/** POST /v1/risk-model: the profile scored by the risk type's model, fitted once per dataset at load. */
import * as Effect from "effect/Effect"
import { closest, Disclosure, fail, parseAgeRange, parseDays, resolveCode, roundTo, ViewWanted } from "../../src/plugin/Plugin.ts"
import { HealthData, Kernels, preparedPerDataset, type Dataset } from "../../src/plugin/experimental.ts"
import { recommendedInterventions } from "./interventions.ts"
import { contributions, fitRiskModels, probabilityInterval, probabilityWithin, profileVector, type RiskModels } from "./model.ts"
import type { RiskModelRequest, RiskModelResponse, RiskModelViewData } from "./schema.ts"

/** At most this many contributing factors are returned. */
export const MAX_FACTORS = 5

/** Fitted once per dataset; with compute threads on one of them, the others getting a copy. */
const models = preparedPerDataset<RiskModels>("risk models", { shared: true })

/** Fits the models of a freshly loaded dataset and logs their held-out performance. */
export const prepareRiskModels = (dataset: Dataset) =>
  models.store(dataset, Effect.gen(function*() {
    const fitted = yield* fitRiskModels(yield* Kernels, dataset)
    for (const m of fitted.values()) {
      yield* Effect.logInfo("risk model fitted").pipe(Effect.annotateLogs({
        risk_type: m.riskType,
        rows: m.rows,
        events: m.events,
        features: m.features.length,
        held_out_auc: roundTo(m.validation.auc, 3),
        calibration_slope: roundTo(m.validation.calibrationSlope, 3),
        brier: roundTo(m.validation.brier, 4)
      }))
    }
    return fitted
  }))

/** The fitted models of the dataset being served (tests and the evaluation script read them). */
export const riskModelsOf = (dataset: Dataset) => models.get(dataset)

/** Answers one request. */
export const riskModel = (request: typeof RiskModelRequest.Type) =>
  Effect.gen(function*() {
    const data = yield* (yield* HealthData).dataset
    const model = (yield* models.get(data)).get(request.risk_type)
    if (model === undefined) {
      return yield* fail("model_unavailable", `This dataset cannot support a ${request.risk_type} model (it needs at least 12 months of axis scores).`)
    }
    const profile = request.patient_profile
    const conditions = new Set<string>()
    for (const text of profile.conditions) {
      const code = resolveCode(data, "condition", text)
      if (code === undefined) {
        return yield* fail("unknown_condition", `No condition named '${text}' in the dataset.`, { suggestions: closest(text, data.vocabulary.condition) })
      }
      conditions.add(code)
    }
    const ages = profile.age_range === undefined ? undefined : parseAgeRange(profile.age_range)
    const x = profileVector(model, {
      age: ages === undefined ? undefined : (ages[0] + ages[1]) / 2,
      conditions,
      axes: profile.axes_snapshot
    })
    const horizonDays = parseDays(request.horizon)!
    const probability = probabilityWithin(model, x, horizonDays)
    const parts = contributions(model, x)
    const factors = parts
      .map(({ factor, weight }) => ({ factor, weight: roundTo(weight, 3) }))
      .filter((f) => f.weight !== 0)
      .sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight) || a.factor.localeCompare(b.factor))
      .slice(0, MAX_FACTORS)
    // A condition's coefficient rests on the model's patients with the condition, with and without
    // the outcome: the probability of a profile naming it, and its weight, rest on them too.
    const disclosure = yield* Disclosure
    for (const code of conditions) {
      const cells = model.conditionPatients.get(code)
      if (cells === undefined) continue
      disclosure.rests("/probability", ...cells)
      disclosure.rests("/view_data/probability_low", ...cells)
      disclosure.rests("/view_data/probability_high", ...cells)
      const at = factors.findIndex((f) => f.factor === code)
      if (at >= 0) disclosure.rests(`/contributing_factors/${at}/weight`, ...cells)
    }
    const interval = (yield* ViewWanted) ? probabilityInterval(model, x, horizonDays) : undefined
    const response: typeof RiskModelResponse.Type & { view_data?: typeof RiskModelViewData.Type } = {
      risk_type: request.risk_type,
      probability: roundTo(probability, 4),
      contributing_factors: factors,
      recommended_interventions: recommendedInterventions(request.risk_type, probability, parts).length,
      ...(interval === undefined ? {} : {
        view_data: { probability_low: roundTo(interval[0], 4), probability_high: roundTo(interval[1], 4), scale: model.family === "poisson" ? "log rate" : "log odds" }
      })
    }
    return response
  })
