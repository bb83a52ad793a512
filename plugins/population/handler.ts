/**
 * POST /v1/population: select the cohort (WASM cohort scans), then one WASM pass over the axis panel
 * gives each period's sums (panelSums); each patient's least-squares slope per axis over the whole
 * data window is computed once per dataset (the plugin's `prepare`, panelWindows) and the cohort's
 * are summed per request. Averages are period means of the recorded scores; the significance is the
 * t-test of the mean per-patient slope (summary-measures analysis, Matthews et al., BMJ 1990),
 * Bonferroni-adjusted over the axes.
 */
import { Effect } from "effect"
import { AXES, type Axis, canonicalOrder, type CohortCriteria, type Dataset, datasetCache, fail, formatMonth, HealthData, Kernels, oneSampleTP, parseAgeRange, preparedPerDataset, quarterLabel, roundTo } from "../../src/plugin/Plugin.ts"
import { GRANULARITY_KEYS, type PopulationRequest, type PopulationResponse } from "./schema.ts"

/** Smallest cohort reported (CMS cell-size suppression policy: no cell of 1–10 beneficiaries). */
export const MIN_COHORT = 11

/** Label of the period a month (y × 12 + m − 1) falls in. */
export const periodLabel = (granularity: keyof typeof GRANULARITY_KEYS, month: number): string =>
  granularity === "monthly" ? formatMonth(month) : granularity === "quarterly" ? quarterLabel(month) : String(Math.floor(month / 12))

/** The cohort criteria of a request. */
export const criteriaOf = (def: (typeof PopulationRequest.Type)["cohort_definition"]): CohortCriteria => ({
  ...(def.age_range === undefined ? {} : { ageRange: parseAgeRange(def.age_range)! }),
  ...(def.sex === undefined ? {} : { sex: [def.sex] }),
  ...(def.regions === undefined ? {} : { regions: def.regions }),
  ...(def.conditions === undefined ? {} : { conditions: def.conditions }),
  ...(def.drugs === undefined ? {} : { drugs: def.drugs }),
  ...(def.axes_threshold === undefined ? {} : { axes: def.axes_threshold })
})

/**
 * Every patient's least-squares slope per axis over the whole data window (8 × patients, AXES
 * order; NaN with fewer than 3 scores or a single month): the same numbers panelTrend computes per
 * request, bit for bit (its sums of scores and months are exact), so a request only sums its cohort's.
 */
const slopes = preparedPerDataset<Float64Array>("population per-patient slopes", { shared: true })

/** The plugin's `prepare`: the per-patient slopes. */
export const preparePopulation = (data: Dataset) =>
  slopes.store(
    data,
    Effect.gen(function*() {
      const kernels = yield* Kernels
      const n = data.patients.count
      const whole = yield* kernels.panelWindows(data.panel, Int32Array.from(AXES, (_, i) => i), new Int32Array(n), new Int32Array(n).fill(data.months), new Uint8Array(n).fill(1))
      // In shared memory: the compute threads that adopt it share these bytes rather than copy them (64 MB at 1 M patients).
      const kept = new Float64Array(new SharedArrayBuffer(whole.slope.byteLength))
      kept.set(whole.slope)
      return kept
    })
  )

/** Answers kept per dataset, keyed by the decoded request (defaults applied). */
const answers = datasetCache<typeof PopulationResponse.Type>(256)

/** Answers one request (a repeated one from the cache). */
export const population = (request: typeof PopulationRequest.Type) =>
  Effect.gen(function*() {
    const data = yield* (yield* HealthData).dataset
    return yield* answers(data, JSON.stringify(request), compute(request))
  })

/** Computes one answer. */
const compute = (request: typeof PopulationRequest.Type) =>
  Effect.gen(function*() {
    const health = yield* HealthData
    const kernels = yield* Kernels
    const data = yield* health.dataset
    const cohort = yield* health.select(criteriaOf(request.cohort_definition))
    if (cohort.size < MIN_COHORT) {
      return yield* fail("cohort_too_small", `The cohort has ${cohort.size} patients; at least ${MIN_COHORT} are needed to report it.`, {
        context: { cohort_size: cohort.size, required: MIN_COHORT }
      })
    }
    const axes: ReadonlyArray<Axis> = canonicalOrder(request.axes ?? AXES)

    // Period of every panel month.
    const labels: Array<string> = []
    const monthGroup = new Int32Array(data.months)
    for (let m = 0; m < data.months; m++) {
      const label = periodLabel(request.granularity, data.firstMonth + m)
      if (labels[labels.length - 1] !== label) labels.push(label)
      monthGroup[m] = labels.length - 1
    }
    const nGroups = labels.length
    const result = yield* Effect.orDie(
      kernels.panelSums(data.panel, Int32Array.from(axes, (a) => AXES.indexOf(a)), 0, data.months, monthGroup, nGroups, cohort.mask)
    )
    // The cohort's slopes per axis: count, Σ, Σ², in patient order.
    const perPatient = yield* slopes.get(data)
    const n = data.patients.count
    const mask = cohort.mask
    const slopeSums = new Float64Array(axes.length * 3)
    axes.forEach((axis, k) => {
      const column = perPatient.subarray(AXES.indexOf(axis) * n, (AXES.indexOf(axis) + 1) * n)
      let count = 0
      let sum = 0
      let squares = 0
      for (let p = 0; p < n; p++) {
        const slope = column[p]!
        if (mask[p] === 0 || slope !== slope) continue // not in the cohort, or no slope (NaN)
        count += 1
        sum += slope
        squares += slope * slope
      }
      slopeSums[k * 3] = count
      slopeSums[k * 3 + 1] = sum
      slopeSums[k * 3 + 2] = squares
    })

    const key = GRANULARITY_KEYS[request.granularity]
    const periods: Array<typeof PopulationResponse.Type["periods"][number]> = []
    for (let g = 0; g < nGroups; g++) {
      let any = false
      const period: Record<string, string | number | null> = { [key]: labels[g]! }
      axes.forEach((axis, k) => {
        const count = result.count[k * nGroups + g]!
        any ||= count > 0
        period[`avg_${axis}`] = count > 0 ? roundTo(result.sum[k * nGroups + g]! / count, 3) : null
      })
      if (any) periods.push(period)
    }

    let minP = 1
    axes.forEach((_, k) => {
      const p = oneSampleTP(slopeSums[k * 3]!, slopeSums[k * 3 + 1]!, slopeSums[k * 3 + 2]!)
      if (p < minP) minP = p
    })
    return {
      cohort_size: cohort.size,
      analysis_type: request.analysis_type,
      periods,
      statistical_significance: Number(Math.min(1, minP * axes.length).toPrecision(6))
    }
  })
