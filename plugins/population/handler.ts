/**
 * POST /v1/population: select the cohort (WASM cohort scans), then one WASM pass over the axis panel
 * gives each period's sums (panelSums); each patient's least-squares slope per axis over the whole
 * data window is computed once per dataset (the plugin's `prepare`, panelWindows) and the cohort's
 * are summed per request. Averages are period means of the recorded scores; the significance is the
 * t-test of the mean per-patient slope (summary-measures analysis, Matthews et al., BMJ 1990),
 * Bonferroni-adjusted over the axes.
 */
import * as Effect from "effect/Effect"
import { AXES, type Axis, canonicalOrder, type CohortCriteria, Disclosure, fail, formatMonth, oneSampleTP, parseAgeRange, PartialWanted, quarterLabel, roundTo, ViewWanted } from "../../src/plugin/Plugin.ts"
import { type Dataset, datasetCache, HealthData, Kernels, membersOf, preparedPerDataset, primed, scoreReader } from "../../src/plugin/experimental.ts"
import { addCell, type Extra } from "./intervals.ts"
import { GRANULARITY_KEYS, MIN_COHORT, type PopulationPartial, type PopulationRequest, type PopulationResponse, type PopulationViewData } from "./schema.ts"


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

/** What population keeps per dataset (its `prepare`). */
interface PerDataset {
  /**
   * Every patient's least-squares slope per axis over the whole data window (8 × patients, AXES
   * order; NaN with fewer than 3 scores or a single month): the numbers panelTrend computes per
   * request, bit for bit (its sums of scores and months are exact), so a request only sums its
   * cohort's. Over a SharedArrayBuffer: compute threads that adopt it share these bytes (64 MB at 1 M).
   */
  readonly slopes: Float64Array
  /**
   * Everyone's present scores per axis and month (8 × months, AXES order): count and sum — what a
   * cohort over a wide panel is taken from (over a tenths panel, the call that sums them also makes
   * the kernels' histograms of everyone on the preparing thread).
   */
  readonly monthCount: Float64Array
  readonly monthSum: Float64Array
}

const perDataset = preparedPerDataset<PerDataset>("population per-patient slopes and month totals", { shared: true })

/**
 * Up to this many patients every month's sum of scores is exact in f64 (one-decimal scores ≤ 10
 * stored as f32 are multiples of 2^-27, and a month's sum stays under 10 × patients < 2^26, so
 * fewer than 53 bits), so a cohort's month sums over a wide panel may be computed as everyone's
 * less everyone else's — the same bits as summing the cohort.
 */
export const EXACT_SUMS_MAX_PATIENTS = 6_000_000

/** Everyone's per-patient slopes and month totals (computed on one compute thread, shared with the others). */
const slopesAndTotals = (data: Dataset, axes: Int32Array, everyone: Uint8Array) =>
  Effect.gen(function*() {
    const kernels = yield* Kernels
    const n = data.patients.count
    const whole = yield* kernels.panelWindows(data.panel, axes, new Int32Array(n), new Int32Array(n).fill(data.months), everyone, { outputs: ["slope"], shared: true })
    const totals = yield* kernels.panelSums(data.panel, axes, 0, data.months, Int32Array.from({ length: data.months }, (_, m) => m), data.months, everyone)
    return { slopes: whole.slope, monthCount: totals.count, monthSum: totals.sum }
  })

/**
 * The plugin's `prepare`: the per-patient slopes and everyone's month totals; then, on every
 * thread, over a tenths panel, the compute core's histograms of everyone — which its first
 * panelSums over more than half of the patients makes on each thread (a pass over the whole panel,
 * seconds at ten million patients) and keeps: made here, no question waits for them.
 */
export const preparePopulation = (data: Dataset) =>
  Effect.gen(function*() {
    const kernels = yield* Kernels
    const everyone = new Uint8Array(data.patients.count).fill(1)
    const axes = Int32Array.from(AXES, (_, i) => i)
    yield* perDataset.store(data, slopesAndTotals(data, axes, everyone))
    if (data.panel.data instanceof Uint8Array) yield* kernels.panelSums(data.panel, axes, 0, 0, new Int32Array(data.months), 1, everyone)
  })

/** 1 where mask is 0 and 0 where it is not, into `out` (a plain function ending with its loop: see hotLoops.ts). */
const invertInto = (mask: Uint8Array, out: Uint8Array): Uint8Array => {
  for (let p = 0; p < mask.length; p++) out[p] = mask[p] === 0 ? 1 : 0
  return out
}

/**
 * The members' present slopes in `column`: their count, Σ and Σ² into `out` from `at`, in patient
 * order — over the members only, so a small cohort of a large dataset reads a few of its slopes,
 * not all. Primed: its results are stored after its loop (hotLoops.ts). Without a branch on who
 * has a slope: a missing one (NaN) adds +0 to each sum, which leaves it as it was, bit for bit.
 */
const slopeMoments = primed((column: Float64Array, members: Int32Array, out: Float64Array, at: number): void => {
  let count = 0
  let sum = 0
  let squares = 0
  for (let j = 0; j < members.length; j++) {
    const slope = column[members[j]!]!
    const counted = slope === slope // a slope (not NaN)
    const x = counted ? slope : 0
    count += counted ? 1 : 0
    sum += x
    squares += x * x
  }
  out[at] = count
  out[at + 1] = sum
  out[at + 2] = squares
}, Float64Array.of(0.5, Number.NaN), Int32Array.of(0, 1), new Float64Array(3), 0)

/**
 * Each month's count and sum of a cohort's present scores per axis (axes × months, like panelSums
 * with one group per month): from a scan of the cohort, or — over a wide panel, when scanning
 * everyone else costs less (see below) — of everyone else, taken from everyone's totals (exact:
 * the same bits as scanning the cohort). Over a tenths panel panelSums itself counts a cohort of
 * more than half as everyone less the others, exactly at any size (docs/core.md).
 */
export const cohortMonthSums = (data: Dataset, mask: Uint8Array, size: number, axisIndex: Int32Array) =>
  Effect.gen(function*() {
    const kernels = yield* Kernels
    const prepared = yield* perDataset.get(data)
    const n = data.patients.count
    const months = data.months
    // Which side to scan. Over a wide panel a scan of at least a seventh reads every row whatever
    // is selected, so everyone else is scanned only when under a seventh.
    const complement = !(data.panel.data instanceof Uint8Array) && n <= EXACT_SUMS_MAX_PATIENTS && (n - size) * 7 < n
    const scanned = complement ? invertInto(mask, new Uint8Array(n)) : mask
    const sums = yield* Effect.orDie(kernels.panelSums(data.panel, axisIndex, 0, months, Int32Array.from({ length: months }, (_, m) => m), months, scanned))
    if (!complement) return sums
    for (let k = 0; k < axisIndex.length; k++) {
      for (let m = 0; m < months; m++) {
        const at = k * months + m
        const total = axisIndex[k]! * months + m
        sums.count[at] = prepared.monthCount[total]! - sums.count[at]!
        sums.sum[at] = prepared.monthSum[total]! - sums.sum[at]!
      }
    }
    return sums
  })

/** How many of the masked patients have a score of `axis` in panel months [from, to). */
export const scoredPatients = (data: Dataset, mask: Uint8Array, axis: number, from: number, to: number): number => {
  const { nMonths, nPatients } = data.panel
  const score = scoreReader(data.panel.data)
  let patients = 0
  for (let p = 0; p < nPatients; p++) {
    if (mask[p] === 0) continue
    const base = (axis * nPatients + p) * nMonths
    for (let m = from; m < to; m++) {
      const x = score(base + m)
      if (x === x) {
        patients++
        break
      }
    }
  }
  return patients
}

/** An answer, with its view data or its partial aggregates when their representation was asked for. */
type Answer = typeof PopulationResponse.Type & { view_data?: typeof PopulationViewData.Type; partial?: typeof PopulationPartial.Type }

/**
 * The partial's slope sums per axis: the patients with a slope (a count), Σ slope and Σ slope²
 * (resting on them) — what the network's trend test pools.
 */
const partialSlopes = (axes: ReadonlyArray<Axis>, slopeSums: Float64Array, disclosure: Disclosure["Service"]) =>
  axes.map((axis, k) => {
    for (const field of ["sum", "sum_squares"]) disclosure.rests(`/partial/slopes/${k}/${field}`, slopeSums[k * 3]!)
    return { axis, n: slopeSums[k * 3]!, sum: slopeSums[k * 3 + 1]!, sum_squares: slopeSums[k * 3 + 2]! }
  })

/** Answers kept per dataset, keyed by the decoded request (defaults applied) and the representation. */
const answers = datasetCache<Answer>(256)

/** Answers one request (a repeated one from the cache). */
export const population = (request: typeof PopulationRequest.Type) =>
  Effect.gen(function*() {
    const data = yield* (yield* HealthData).dataset
    const extra: Extra | undefined = (yield* ViewWanted) ? "view" : (yield* PartialWanted) ? "partial" : undefined
    return yield* answers(data, JSON.stringify([request, extra ?? "answer"]), compute(request, extra))
  })

/** Computes one answer. */
const compute = (request: typeof PopulationRequest.Type, extra: Extra | undefined) =>
  Effect.gen(function*() {
    const health = yield* HealthData
    const kernels = yield* Kernels
    const data = yield* health.dataset
    const cohort = yield* health.select(criteriaOf(request.cohort_definition))
    const disclosure = yield* Disclosure
    yield* disclosure.cohort(cohort.size, "The cohort")
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
    const prepared = yield* perDataset.get(data)
    const n = data.patients.count
    const mask = cohort.mask
    const months = data.months
    const axisIndex = Int32Array.from(axes, (a) => AXES.indexOf(a))

    const perMonth = yield* cohortMonthSums(data, mask, cohort.size, axisIndex)
    const result = { count: new Float64Array(axes.length * nGroups), sum: new Float64Array(axes.length * nGroups) }
    for (let k = 0; k < axes.length; k++) {
      for (let m = 0; m < months; m++) {
        const g = k * nGroups + monthGroup[m]!
        result.count[g] = result.count[g]! + perMonth.count[k * months + m]!
        result.sum[g] = result.sum[g]! + perMonth.sum[k * months + m]!
      }
    }

    // The cohort's slopes per axis: count, Σ, Σ², in patient order.
    const perPatient = prepared.slopes
    const slopeSums = new Float64Array(axes.length * 3)
    const members = membersOf(mask, cohort.size)
    axes.forEach((axis, k) => slopeMoments(perPatient.subarray(AXES.indexOf(axis) * n, (AXES.indexOf(axis) + 1) * n), members, slopeSums, k * 3))

    // The view's or the partial's per-period patients and moments (intervals.ts); the patients also
    // settle what each mean rests on.
    const moments = extra === undefined ? undefined : yield* Effect.orDie(kernels.panelPeriods(data.panel, axisIndex, 0, months, monthGroup, nGroups, mask))
    const rows: Array<{ period: string; [field: string]: string | number | null }> = []
    const member = extra === "view" ? "view_data" : "partial"

    const key = GRANULARITY_KEYS[request.granularity]
    const periods: Array<typeof PopulationResponse.Type["periods"][number]> = []
    for (let g = 0; g < nGroups; g++) {
      let any = false
      const period: Record<string, string | number | null> = { [key]: labels[g]! }
      const row: { period: string; [field: string]: string | number | null } = { period: labels[g]! }
      axes.forEach((axis, k) => {
        const count = result.count[k * nGroups + g]!
        any ||= count > 0
        period[`avg_${axis}`] = count > 0 ? roundTo(result.sum[k * nGroups + g]! / count, 3) : null
        // An average rests on the patients scored in the period: as many as scores when a period is
        // one month (one score per patient and month), else counted when the scores do not settle it.
        if (count === 0) return
        const from = monthGroup.indexOf(g)
        const to = monthGroup.lastIndexOf(g) + 1
        const at = k * nGroups + g
        const patients = moments !== undefined
          ? moments.patients[at]!
          : count >= disclosure.minimum * (to - from) ? count : scoredPatients(data, mask, AXES.indexOf(axis), from, to)
        disclosure.rests(`/periods/${periods.length}/avg_${axis}`, patients)
        if (extra !== undefined) addCell(extra, row, `/${member}/periods/${rows.length}`, disclosure, axis, patients, count, result.sum[at]!, moments!, at)
      })
      if (!any) continue
      periods.push(period)
      if (extra !== undefined) rows.push(row)
    }
    // The significance rests on every reported axis's patients with a slope.
    disclosure.rests("/statistical_significance", ...axes.map((_, k) => slopeSums[k * 3]!))

    let minP = 1
    axes.forEach((_, k) => {
      const p = oneSampleTP(slopeSums[k * 3]!, slopeSums[k * 3 + 1]!, slopeSums[k * 3 + 2]!)
      if (p < minP) minP = p
    })
    return {
      cohort_size: cohort.size,
      analysis_type: request.analysis_type,
      periods,
      statistical_significance: Number(Math.min(1, minP * axes.length).toPrecision(6)),
      ...(extra === "view" ? { view_data: { periods: rows } as typeof PopulationViewData.Type } : {}),
      ...(extra === "partial" ? { partial: { periods: rows, slopes: partialSlopes(axes, slopeSums, disclosure) } as typeof PopulationPartial.Type } : {})
    }
  })
