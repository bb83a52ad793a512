/** POST /v1/one-health: lagged cross-correlation of the animal and human series, alert, risk and a recommendation from those facts. */
import * as Effect from "effect/Effect"
import { closest, Disclosure, fail, formatDate, resolveCode, ViewWanted } from "../../src/plugin/Plugin.ts"
import { datasetCache, HealthData, Kernels } from "../../src/plugin/experimental.ts"
import { alertLevel, analyzeLead, correlationByLag, MAX_LAG_WEEKS, PERMUTATIONS, potentialOf, RECENT_WEEKS, seriesOf, zoonoticRisk } from "./analysis.ts"
import type { OneHealthRequest, OneHealthResponse, OneHealthViewData } from "./schema.ts"

/** A permutation p-value: a multiple of 1/1000, so the smallest reads "p ≤ 0.001". */
const fmtP = (p: number) => (p <= 1 / (PERMUTATIONS + 1) ? "permutation p ≤ 0.001" : `permutation p = ${p.toFixed(3)}`)

/** Answers kept per dataset, keyed by the decoded request: the analysis is deterministic (seeded permutations). */
const answers = datasetCache<typeof OneHealthResponse.Type & { readonly view_data?: typeof OneHealthViewData.Type }>(256)

/** Answers one request (a repeated one from the cache). */
export const oneHealth = (request: typeof OneHealthRequest.Type) =>
  Effect.gen(function*() {
    const data = yield* (yield* HealthData).dataset
    const view = yield* ViewWanted
    return yield* answers(data, `${view ? "view " : ""}${JSON.stringify(request)}`, compute(request, view))
  })

const finiteOrNull = (x: number) => (Number.isNaN(x) ? null : x)
const round3 = (x: number) => (Number.isNaN(x) ? null : Math.round(x * 1000) / 1000)

/** Computes one answer (with the weekly series and the correlation by lag when `view`). */
const compute = (request: typeof OneHealthRequest.Type, view: boolean) =>
  Effect.gen(function*() {
    const kernels = yield* Kernels
    const data = yield* (yield* HealthData).dataset
    const { animal_species: species, geographic_scope: region } = request
    const condition = resolveCode(data, "zoonotic_condition", request.human_condition) ?? request.human_condition
    for (const [kind, code, known] of [
      ["species", species, data.vocabulary.species],
      ["condition", condition, data.vocabulary.zoonotic_condition],
      ["region", region, data.vocabulary.region]
    ] as const) {
      if (!known.includes(code)) return yield* fail(`unknown_${kind}`, `No ${kind} named '${code}' in the dataset.`, { suggestions: closest(code, known) })
    }
    const series = seriesOf(data, species, condition, region)
    if (series.animal === undefined || series.human === undefined) {
      return yield* fail("series_not_found", series.human === undefined
        ? `The dataset has no human ${condition} series for ${region}.`
        : `The dataset has no ${species} ${condition} series for ${region}; species with one there: ${series.carriers.join(", ") || "none"}.`, {
        suggestions: series.carriers
      })
    }
    // Every figure of the answer is about the human cases (weeks without a row are NaN): too few of them and nothing is published.
    yield* (yield* Disclosure).cohort(series.human.reduce((s, x) => (Number.isNaN(x) ? s : s + x), 0), `The human ${condition} cases in ${region}`)
    const a = yield* Effect.orDie(analyzeLead(kernels, series.animal, series.human))
    const lagDays = Math.max(0, a.lagWeeks) * 7
    const hostPotential = potentialOf(species, condition)
    const alert = alertLevel(a)
    const risk = zoonoticRisk(a.found, hostPotential)
    const recent = `the last ${RECENT_WEEKS} weeks averaged ${a.recentMean.toFixed(1)} ${species} cases (75th percentile of ${a.weeks} weeks: ${a.q75.toFixed(1)}, 95th: ${a.q95.toFixed(1)})`
    const evidence = a.found
      ? `${species} ${condition} cases in ${region} lead human cases by ${lagDays} days (prewhitened log-scale r = ${a.r.toFixed(2)}, ${fmtP(a.p)}, ${a.pairs} weeks)`
      : `no lead of ${species} over human ${condition} cases in ${region} within 0–${MAX_LAG_WEEKS * 7} days (best prewhitened log-scale r = ${Number.isNaN(a.r) ? "n/a" : a.r.toFixed(2)}, ${Number.isNaN(a.p) ? "no test" : fmtP(a.p)})`
    const action = alert === "critical" || alert === "high"
      ? `raise human ${condition} surveillance and clinician alerts in ${region} for the next ${lagDays} days`
      : alert === "moderate"
      ? a.found
        ? `watch ${species} ${condition} reports in ${region} as an early warning of human cases ${lagDays} days later`
        : `investigate the rise in ${species} ${condition} cases in ${region}; it does not yet predict human cases`
      : `keep routine surveillance`
    const animal = series.animal
    const viewData: typeof OneHealthViewData.Type | undefined = view
      ? {
        lag_weeks: a.lagWeeks < 0 ? null : a.lagWeeks,
        weeks: Array.from(series.human, (human, i) => ({
          week: formatDate(data.surveillance.firstWeek + 7 * i),
          animal: finiteOrNull(animal[i]!),
          human: finiteOrNull(human)
        })),
        correlation: (yield* Effect.orDie(correlationByLag(kernels, a.x, a.y))).map((c) => ({ lag_days: c.lag * 7, r: round3(c.r), pairs: c.pairs })),
        threshold: round3(a.threshold)
      }
      : undefined
    const response: typeof OneHealthResponse.Type & { view_data?: typeof OneHealthViewData.Type } = {
      correlation_found: a.found,
      correlation_strength: Number.isNaN(a.r) ? 0 : Math.round(a.r * 1000) / 1000,
      temporal_lag: `${lagDays}_days`,
      alert_level: alert,
      zoonotic_risk: risk,
      recommendation: `${evidence[0]!.toUpperCase()}${evidence.slice(1)}; ${recent}; ${species} are a ${hostPotential}-potential source of human ${condition}. Alert ${alert}, zoonotic risk ${risk}: ${action}.`,
      ...(viewData === undefined ? {} : { view_data: viewData })
    }
    return response
  })
