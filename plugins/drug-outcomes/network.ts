/**
 * Drug outcomes across a network of sites (docs/network.md). What is a sum over patients is pooled
 * exactly — the cohort, the adverse-event rate, each axis's correlation (from its sums over the
 * pairs) and trend (the one-sample t-test of the pooled slope sums) are those of one service over
 * the union of the sites' patients. Cohen's d is not: each site stratifies its cohort against its
 * own comparable unexposed patients and scales by its own reference SD, so the sites' d are pooled
 * as a meta-analysis pools studies (src/plugin/metaAnalysis.ts): the answer's effect is the REML
 * random-effects estimate, its interval Hartung–Knapp's; the view lists each site's d and weight,
 * the fixed-effect and DerSimonian–Laird estimates, τ², I², Q and the prediction interval.
 */
import * as Effect from "effect/Effect"
import { AXES, type Axis, Disclosure, type DisclosureService, fail, metaAnalysis, Z95, oneSampleTP, roundTo, type SiteAnswer, ViewWanted } from "../../src/plugin/Plugin.ts"
import { type DrugAnalysis, trendClass } from "./analysis.ts"
import type { DrugOutcomesPartial, DrugOutcomesRequest } from "./schema.ts"

type PartialAxis = (typeof DrugOutcomesPartial.Type)["axes"][number]

/** A site's partial: its events and, per axis, d with its standard error and the sums pooled exactly; each resting on its patients. */
export const drugPartial = (a: DrugAnalysis, axes: ReadonlyArray<Axis>, disclosure: DisclosureService): typeof DrugOutcomesPartial.Type => ({
  events: a.events,
  axes: axes.map((axis, k) => {
    const e = a.axes.get(axis)!
    const at = `/partial/axes/${k}`
    for (const f of ["d", "se"]) disclosure.rests(`${at}/${f}`, e.exposedN, e.comparatorN)
    for (const f of ["sum_x", "sum_y", "sum_xx", "sum_yy", "sum_xy"]) disclosure.rests(`${at}/${f}`, e.correlationN)
    for (const f of ["slope_sum", "slope_squares"]) disclosure.rests(`${at}/${f}`, e.slopeN)
    const [sx, sy, sxx, syy, sxy] = e.correlationSums
    const finite = (x: number) => (Number.isFinite(x) ? x : null)
    return {
      axis, d: finite(e.standardized), se: finite(e.standardizedSe), exposed: e.exposedN, comparators: e.comparatorN,
      pairs: e.correlationN, sum_x: sx, sum_y: sy, sum_xx: sxx, sum_yy: syy, sum_xy: sxy,
      slopes: e.slopeN, slope_sum: e.slopeSum, slope_squares: e.slopeSquares
    }
  })
})

/** Pearson's r from the sums over n pairs (NaN under 3 pairs or without spread). */
const pearson = (n: number, sx: number, sy: number, sxx: number, syy: number, sxy: number): number => {
  const den = Math.sqrt((n * sxx - sx * sx) * (n * syy - sy * sy))
  return n >= 3 && den > 0 ? (n * sxy - sx * sy) / den : Number.NaN
}

/** The trend's class from the pooled slope sums, as analysis.ts classes one site's. */
const trendOf = (n: number, sum: number, squares: number) => trendClass(n, n > 0 ? sum / n : 0, oneSampleTP(n, sum, squares))

const FIELDS = ["exposed", "comparators", "pairs", "sum_x", "sum_y", "sum_xx", "sum_yy", "sum_xy", "slopes", "slope_sum", "slope_squares"] as const
const r3 = (x: number) => roundTo(x, 3)
const orNull = (x: number) => (Number.isFinite(x) ? x : null)

/** Pools the sites' partial answers (module comment). */
export const poolDrugOutcomes = (request: typeof DrugOutcomesRequest.Type, sites: ReadonlyArray<SiteAnswer>) =>
  Effect.gen(function*() {
    const disclosure = yield* Disclosure
    const axes = AXES.filter((a) => request.axes_filter.includes(a))
    const incomplete = new Set<string>()
    let cohort = 0
    let events = 0
    const totals = new Map(axes.map((a) => [a, Object.fromEntries(FIELDS.map((f) => [f, 0])) as Record<(typeof FIELDS)[number], number>]))
    const effects = new Map<Axis, Array<{ site: string; estimate: number; variance: number }>>(axes.map((a) => [a, []]))
    for (const { answer, name } of sites) {
      cohort += answer["cohort_size"] as number
      const partial = answer["partial"] as typeof DrugOutcomesPartial.Type
      if (partial.events === null) incomplete.add("/adverse_event_rate")
      else events += partial.events
      for (const row of partial.axes as ReadonlyArray<PartialAxis>) {
        const total = totals.get(row.axis as Axis)
        if (total === undefined) continue
        for (const f of FIELDS) {
          if (row[f] === null) incomplete.add(`/axis_breakdown/${row.axis}`)
          else total[f] += row[f]
        }
        if (row.d !== null && row.se !== null && row.se > 0) effects.get(row.axis as Axis)!.push({ site: name, estimate: row.d, variance: row.se * row.se })
        else if (row.exposed !== 0) incomplete.add("/efficacy_score")
      }
    }
    yield* disclosure.cohort(cohort, `The network's patients on ${request.drug} (${request.outcome_type})`)
    const pooled = axes.flatMap((axis) => {
      const studies = effects.get(axis)!
      return studies.length === 0 ? [] : [{ axis, studies, meta: metaAnalysis(studies) }]
    })
    if (pooled.length === 0) return yield* fail("cohort_too_small", "No site has comparable unexposed patients with scores of the target axes.")
    disclosure.rests("/efficacy_score", ...pooled.flatMap((p) => [totals.get(p.axis)!.exposed, totals.get(p.axis)!.comparators]))
    disclosure.rests("/adverse_event_rate", cohort, events)
    const breakdown = Object.fromEntries(axes.map((axis) => {
      const t = totals.get(axis)!
      disclosure.rests(`/axis_breakdown/${axis}/correlation`, t.pairs)
      disclosure.rests(`/axis_breakdown/${axis}/trend`, t.slopes)
      return [axis, { correlation: orNull(r3(pearson(t.pairs, t.sum_x, t.sum_y, t.sum_xx, t.sum_yy, t.sum_xy))), trend: trendOf(t.slopes, t.slope_sum, t.slope_squares) }]
    }))
    const view = (yield* ViewWanted) ? networkView(pooled, totals, disclosure) : undefined
    return {
      drug: request.drug,
      outcome_type: request.outcome_type,
      cohort_size: cohort,
      efficacy_score: r3(pooled.reduce((s, p) => s + p.meta.reml.estimate, 0) / pooled.length),
      adverse_event_rate: roundTo(cohort > 0 ? events / cohort : 0, 4),
      axis_breakdown: breakdown,
      incomplete: [...incomplete],
      ...(view === undefined ? {} : { view_data: view })
    }
  })

/** The network answer's view data: the pooled effect per axis (REML, Hartung–Knapp interval) and each axis's forest. */
const networkView = (
  pooled: ReadonlyArray<{ axis: Axis; studies: ReadonlyArray<{ site: string; estimate: number; variance: number }>; meta: ReturnType<typeof metaAnalysis> }>,
  totals: Map<Axis, Record<string, number>>,
  disclosure: DisclosureService
) => ({
  effects: pooled.map(({ axis, meta }, i) => {
    for (const f of ["d", "ci_low", "ci_high"]) disclosure.rests(`/view_data/effects/${i}/${f}`, totals.get(axis)!["exposed"]!, totals.get(axis)!["comparators"]!)
    const hk = meta.remlHartungKnapp
    return { axis, d: r3(meta.reml.estimate), ci_low: orNull(r3(hk.ciLow)) ?? r3(meta.reml.ciLow), ci_high: orNull(r3(hk.ciHigh)) ?? r3(meta.reml.ciHigh), exposed: totals.get(axis)!["exposed"]!, comparators: totals.get(axis)!["comparators"]! }
  }),
  sites: pooled.flatMap(({ axis, meta, studies }) => {
    const hk = Number.isFinite(meta.remlHartungKnapp.ciLow) ? meta.remlHartungKnapp : meta.reml
    return [
      ...studies.map((s, j) => ({ axis, site: s.site, d: r3(s.estimate), ci_low: r3(s.estimate - Z95 * Math.sqrt(s.variance)), ci_high: r3(s.estimate + Z95 * Math.sqrt(s.variance)), weight: roundTo(meta.weights[j]!, 4) })),
      { axis, site: "pooled", d: r3(meta.reml.estimate), ci_low: r3(hk.ciLow), ci_high: r3(hk.ciHigh), weight: null }
    ]
  }),
  network: pooled.map(({ axis, meta, studies }) => {
    const row = (p: { estimate: number; ciLow: number; ciHigh: number }) => ({ d: r3(p.estimate), ci_low: r3(p.ciLow), ci_high: r3(p.ciHigh) })
    const hk = meta.remlHartungKnapp
    return {
      axis,
      sites: studies.map((s, j) => ({ site: s.site, d: r3(s.estimate), ci_low: r3(s.estimate - Z95 * Math.sqrt(s.variance)), ci_high: r3(s.estimate + Z95 * Math.sqrt(s.variance)), weight: roundTo(meta.weights[j]!, 4) })),
      fixed: row(meta.fixed),
      dersimonian_laird: row(meta.dl),
      reml_hartung_knapp: Number.isFinite(hk.ciLow) ? row(hk) : row(meta.reml),
      tau2_dl: roundTo(meta.dl.tau2, 6),
      tau2_reml: roundTo(meta.reml.tau2, 6),
      i2: roundTo(meta.i2, 4),
      q: roundTo(meta.q, 4),
      q_p: orNull(roundTo(meta.qP, 4)),
      prediction_low: orNull(r3(meta.prediction[0])),
      prediction_high: orNull(r3(meta.prediction[1]))
    }
  })
})
