/**
 * POST /v1/temporal: one WASM batch per request for the fits (one series per axis) and one for the
 * rules (one patient, all axes), then the urgency level from what fired and what is predicted.
 * docs/temporal.md documents every rule, model and level.
 */
import * as Effect from "effect/Effect"
import { AXES, below, MODEL_NAMES, roundTo, RULE_NAMES, ViewWanted } from "../../src/plugin/Plugin.ts"
import { Kernels } from "../../src/plugin/experimental.ts"
import { INTERVAL_DAYS, type TemporalRequest, type TemporalResponse, type TemporalViewData, URGENCY_LEVELS } from "./schema.ts"

/** Below this an axis score is critical (rule 03's threshold). */
export const CRITICAL = 3
/** Rules that on their own signal a serious, fast or broad decline. */
export const SEVERE_RULES: ReadonlyArray<number> = [2, 5, 11, 12, 15, 18, 23, 28]
/** Rules that signal decline (the rest: 08 volatility, 10 rebound, 19 oscillation, are not by themselves). */
export const DECLINE_RULES: ReadonlyArray<number> = [1, 4, 6, 7, 9, 13, 14, 16, 17, 21, 22, 24, 25, 26, 27]
/** A predicted crossing below CRITICAL within this many days makes urgency high. */
export const HIGH_WITHIN_DAYS = 90

const round3 = (x: number) => roundTo(x, 3)

/**
 * The urgency level:
 * - critical: an axis is below 3 now (rule 03) or at the floor (rule 20), or a prediction ends below 2;
 * - high: a predicted value falls below 3 within 90 days, or two or more severe rules fired;
 * - moderate: one severe rule, any decline rule, or a lower prediction bound below 3 within the horizon;
 * - low: otherwise.
 */
export const urgencyOf = (
  fired: ReadonlySet<number>,
  predictions: ReadonlyArray<{ readonly pred: ArrayLike<number>; readonly lo: ArrayLike<number> }>,
  intervalDays: number
): (typeof URGENCY_LEVELS)[number] => {
  const endsBelow2 = predictions.some((p) => below(p.pred[p.pred.length - 1]!, 2))
  if (fired.has(3) || fired.has(20) || endsBelow2) return "critical"
  const withinSteps = Math.max(1, Math.floor(HIGH_WITHIN_DAYS / intervalDays))
  const crossesSoon = predictions.some((p) => Array.from(p.pred).slice(0, withinSteps).some((v) => below(v, CRITICAL)))
  const severe = SEVERE_RULES.filter((r) => fired.has(r)).length
  if (crossesSoon || severe >= 2) return "high"
  const loCrosses = predictions.some((p) => Array.from(p.lo).some((v) => below(v, CRITICAL)))
  if (severe === 1 || DECLINE_RULES.some((r) => fired.has(r)) || loCrosses) return "moderate"
  return "low"
}

/** The handler. */
export const temporal = (request: typeof TemporalRequest.Type) =>
  Effect.gen(function*() {
    const kernels = yield* Kernels
    const axes = AXES.filter((a) => request.patient_axes[a] !== undefined)
    const series = axes.map((a) => request.patient_axes[a]!)
    // Align every axis on its most recent value: pad shorter series with gaps at the start.
    const n = Math.max(...series.map((s) => s.length))
    const data = new Float64Array(axes.length * n).fill(NaN)
    series.forEach((s, i) => data.set(s, i * n + n - s.length))
    const h = request.predict_ahead
    const fits = yield* Effect.orDie(kernels.fitTrajectories(data, axes.length, n, h))
    const rules = yield* Effect.orDie(kernels.evaluateRules(data, 1, axes.length, n, Int32Array.from(axes.map((a) => AXES.indexOf(a)))))

    const fired = new Set<number>()
    RULE_NAMES.forEach((_, bit) => {
      if ((rules.mask[0]! & (1 << bit)) !== 0) fired.add(bit + 1)
    })
    const predictions = axes.map((_, i) => ({ pred: fits.pred.subarray(i * h, (i + 1) * h), lo: fits.lo.subarray(i * h, (i + 1) * h) }))

    // The reported model: the one selected for most axes; a tie goes to the model of the axis
    // whose prediction ends lowest (the most concerning one).
    const votes = new Map<number, number>()
    for (let i = 0; i < axes.length; i++) votes.set(fits.model[i]!, (votes.get(fits.model[i]!) ?? 0) + 1)
    const top = Math.max(...votes.values())
    let chosen = -1
    let lowestEnd = Infinity
    for (let i = 0; i < axes.length; i++) {
      const end = predictions[i]!.pred[h - 1]!
      if (votes.get(fits.model[i]!) === top && end < lowestEnd) {
        lowestEnd = end
        chosen = fits.model[i]!
      }
    }

    const band = (yield* ViewWanted)
      ? axes.flatMap((axis, i) => Array.from({ length: h }, (_, index) => ({ axis, index, lo: round3(fits.lo[i * h + index]!), hi: round3(fits.hi[i * h + index]!) })))
      : undefined
    const response: typeof TemporalResponse.Type & { view_data?: typeof TemporalViewData.Type } = {
      decay_model: MODEL_NAMES[chosen]!,
      predicted_trajectory: Object.fromEntries(axes.map((a, i) => [a, Array.from(predictions[i]!.pred, round3)])),
      intervention_urgency: urgencyOf(fired, predictions, INTERVAL_DAYS[request.interval]),
      decay_rules_triggered: [...fired].sort((x, y) => x - y).map((r) => RULE_NAMES[r - 1]!),
      ...(band === undefined ? {} : { view_data: { band } })
    }
    return response
  })
