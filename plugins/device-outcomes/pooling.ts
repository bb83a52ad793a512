/**
 * Per-study estimates of a device metric and their random-effects pooling: proportions by the
 * binomial-normal model (binomialNormal.ts), mean scores by DerSimonian–Laird (DerSimonian & Laird,
 * Controlled Clinical Trials 1986;7:177). Formulas in docs/analytics.md.
 */
import * as Effect from "effect/Effect"
import { firstDayOfMonth, metaAnalysis, monthOfDay } from "../../src/plugin/Plugin.ts"
import { type Dataset, type KernelsService } from "../../src/plugin/experimental.ts"
import { binomialNormal, fitBinomialNormal } from "./binomialNormal.ts"

/** One study's estimate of one metric. */
export interface StudyEstimate {
  readonly study: string
  readonly n: number
  /** The study's implants with the event (proportions only). */
  readonly events: number
  readonly estimate: number
  readonly variance: number
}

/** The pooled result. */
export interface Pooled {
  readonly estimate: number
  readonly se: number
  readonly ciLow: number
  readonly ciHigh: number
  /** Between-study variance. */
  readonly tau2: number
  /** Cochran's Q and the number of studies pooled. */
  readonly q: number
  readonly k: number
}

/** DerSimonian–Laird random-effects pooling of k ≥ 1 estimates with positive variances. */
export const derSimonianLaird = (studies: ReadonlyArray<Pick<StudyEstimate, "estimate" | "variance">>): Pooled => {
  const m = metaAnalysis(studies)
  return { ...m.dl, q: m.q, k: m.k }
}

/** A `*_rate` metric is a proportion of implants with the event (0/1 outcomes). */
export const isProportion = (metric: string): boolean => metric.endsWith("_rate")

/** A metric pooled across studies, with its 95 % interval. */
export interface PooledMetric {
  readonly estimate: number
  readonly ciLow: number
  readonly ciHigh: number
  readonly k: number
}

/**
 * Pools one metric: a proportion by the binomial-normal model (binomialNormal.ts), a mean score by
 * DerSimonian–Laird. `withInterval: false` skips the proportion's profile-likelihood interval (the
 * response reports only the pooled value); its ends are then NaN.
 */
export const poolMetric = (metric: string, studies: ReadonlyArray<StudyEstimate>, withInterval = true): PooledMetric => {
  if (!isProportion(metric)) return derSimonianLaird(studies)
  const counts = studies.map((s) => ({ events: s.events, n: s.n }))
  return withInterval ? binomialNormal(counts) : { ...fitBinomialNormal(counts), ciLow: Number.NaN, ciHigh: Number.NaN }
}

/** Columns of the implant outcomes, one per metric, built once per dataset and kept resident. */
interface Prepared {
  readonly implantDevice: { readonly data: Int32Array; readonly ptr: number }
  readonly implantDay: { readonly data: Float64Array; readonly ptr: number }
  readonly implantStudy: { readonly data: Int32Array; readonly ptr: number }
  /** Per metric code: value per implant (NaN when not recorded), and its square. */
  readonly metric: ReadonlyMap<string, { readonly value: { readonly data: Float64Array; readonly ptr: number }; readonly square: { readonly data: Float64Array; readonly ptr: number } }>
}

const prepared = new WeakMap<Dataset, Prepared>()

const prepare = (kernels: KernelsService, data: Dataset) =>
  Effect.gen(function*() {
    const cached = prepared.get(data)
    if (cached !== undefined) return cached
    const { implants, outcomes } = data.devices
    const n = implants.device.length
    const metric = new Map<string, { value: { data: Float64Array; ptr: number }; square: { data: Float64Array; ptr: number } }>()
    for (const [m, code] of data.vocabulary.device_metric.entries()) {
      const value = new Float64Array(n).fill(Number.NaN)
      for (let i = 0; i < outcomes.metric.length; i++) if (outcomes.metric[i] === m) value[outcomes.implant[i]!] = outcomes.value[i]!
      metric.set(code, { value: yield* kernels.columnF64(value), square: yield* kernels.columnF64(value.map((v) => v * v)) })
    }
    const result: Prepared = {
      implantDevice: yield* kernels.columnI32(implants.device),
      implantDay: yield* kernels.columnF64(Float64Array.from(implants.day)),
      implantStudy: yield* kernels.columnI32(implants.study),
      metric
    }
    prepared.set(data, result)
    return result
  })

/** First day of the last `months` calendar months up to as_of. */
export const periodStart = (data: Dataset, months: number): number => firstDayOfMonth(monthOfDay(data.asOfDay) - months + 1)

/** The implants of a device placed in the period, and the studies they belong to. */
export const implantsInPeriod = (kernels: KernelsService, data: Dataset, device: number, months: number) =>
  Effect.gen(function*() {
    const p = yield* prepare(kernels, data)
    const n = p.implantDevice.data.length
    const deviceSet = new Uint8Array(data.vocabulary.device.length)
    deviceSet[device] = 1
    const byDevice = yield* kernels.maskInSet(p.implantDevice, deviceSet, new Uint8Array(n).fill(1))
    const mask = yield* kernels.maskRange(p.implantDay, periodStart(data, months), data.asOfDay, byDevice)
    // Implants per study: the count of the grouped statistics (every implant has a day).
    const perStudy = yield* kernels.groupStats(p.implantStudy, p.implantDay, mask, data.devices.studies.ids.length)
    const byStudy = data.devices.studies.ids.flatMap((study, s) => (perStudy.count[s]! > 0 ? [{ study, implants: perStudy.count[s]! }] : []))
    return { prepared: p, mask, size: yield* kernels.maskCount(mask), studies: byStudy.length, byStudy }
  })

/** A study's values of a metric over the selected implants: how many, their sum and sum of squares. */
export interface StudySums {
  readonly study: string
  readonly n: number
  readonly sum: number
  readonly squares: number
}

/** Each study's sums of a metric over the selected implants (studies with at least one value). */
export const studySums = (kernels: KernelsService, data: Dataset, p: Prepared, mask: Uint8Array, metric: string) =>
  Effect.gen(function*() {
    const cols = p.metric.get(metric)!
    const k = data.devices.studies.ids.length
    const first = yield* kernels.groupStats(p.implantStudy, cols.value, mask, k)
    const second = yield* kernels.groupStats(p.implantStudy, cols.square, mask, k)
    const out: Array<StudySums> = []
    for (let s = 0; s < k; s++) if (first.count[s]! >= 1) out.push({ study: data.devices.studies.ids[s]!, n: first.count[s]!, sum: first.sum[s]!, squares: second.sum[s]! })
    return out
  })

/**
 * Each study's estimate of a metric from its sums: a proportion x/n with its event count (pooled by
 * the binomial-normal model, which needs no variance: `variance` is the binomial p̂(1 − p̂)/n for
 * the record), or a mean with variance s²/n (studies with fewer than 2 values left out). The mean
 * is sum ÷ n, as the core's grouped statistics give it.
 */
export const estimatesOf = (metric: string, sums: ReadonlyArray<StudySums>): Array<StudyEstimate> =>
  sums.flatMap(({ n, squares, study, sum }) => {
    const mean = sum / n
    if (isProportion(metric)) return [{ study, n, events: sum, estimate: mean, variance: (mean * (1 - mean)) / n }]
    if (n < 2) return []
    const s2 = Math.max((squares - n * mean * mean) / (n - 1), 1e-12)
    return [{ study, n, events: Number.NaN, estimate: mean, variance: s2 / n }]
  })

/** Each study's estimate of a metric over the selected implants (estimatesOf their sums). */
export const studyEstimates = (kernels: KernelsService, data: Dataset, p: Prepared, mask: Uint8Array, metric: string) =>
  Effect.map(studySums(kernels, data, p, mask, metric), (sums) => estimatesOf(metric, sums))
