/**
 * Does an animal series lead a human one? Weekly counts are heavy-tailed and drift slowly, so
 * (1) both series are put on the log scale, log(1 + count), which steadies their variance;
 * (2) both are prewhitened with the animal series' AR(p) filter (Box & Jenkins; p ≤ 6 by AIC,
 *     Yule–Walker), so the animal side is white noise and chance correlation with a drifting human
 *     series no longer looks like a lead;
 * (3) the largest lagged correlation (lags 0–8 weeks, WASM) is tested against the same statistic
 *     over 999 random permutations of the prewhitened animal series (a max-statistic permutation
 *     test: the lag search is accounted for and no normality is assumed).
 * Details and the measured false-alarm rate in docs/analytics.md.
 */
import * as Effect from "effect/Effect"
import type { Dataset, KernelsService } from "../../src/plugin/experimental.ts"
import potential from "./zoonotic-potential.json" with { type: "json" }

/** Lags tried: 0 to 8 weeks (0–56 days) of the animal series leading the human one. */
export const MAX_LAG_WEEKS = 8
/** Significance level of correlation_found (one-sided, the lag search included). */
export const ALPHA = 0.05
/** Weeks of "recent" animal activity the alert level looks at. */
export const RECENT_WEEKS = 4
/** Highest AR order tried when prewhitening. */
export const MAX_AR_ORDER = 6
/** Permutations of the permutation test: p is a multiple of 1/1000, at least 0.001. */
export const PERMUTATIONS = 999
/** Seed of the permutations: fixed, so the same question always gets the same answer. */
const PERMUTATION_SEED = 0x0de1_a7ed

/** The zoonotic potential of a host for a condition (zoonotic-potential.json), `low` when not listed. */
export const potentialOf = (species: string, condition: string): "high" | "moderate" | "low" =>
  (potential.entries.find((e) => e.species === species && e.condition === condition)?.potential as "high" | "moderate" | "low" | undefined) ?? "low"

/** log(1 + count): the variance-stabilised scale the test runs on (NaN stays NaN). */
export const logScale = (counts: Float64Array): Float64Array => counts.map((c) => Math.log1p(c))

/** Autocovariances at lags 0..maxLag over the present pairs (divisor: the number of present values). */
const autocovariances = (x: Float64Array, maxLag: number): Array<number> => {
  let n = 0
  let sum = 0
  for (const v of x) if (!Number.isNaN(v)) {
    n++
    sum += v
  }
  const mean = n > 0 ? sum / n : 0
  return Array.from({ length: maxLag + 1 }, (_, k) => {
    let s = 0
    for (let t = k; t < x.length; t++) {
      const d = (x[t]! - mean) * (x[t - k]! - mean)
      if (!Number.isNaN(d)) s += d
    }
    return n > 0 ? s / n : 0
  })
}

/**
 * The AR(p) coefficients a_1..a_p of a series (Yule–Walker by Levinson–Durbin), p ∈ 0..maxOrder by
 * AIC = m·log σ²_p + 2p (m present values); [] for white noise or too short a series.
 */
export const arFilter = (x: Float64Array, maxOrder = MAX_AR_ORDER): Array<number> => {
  const m = x.reduce((a, v) => a + (Number.isNaN(v) ? 0 : 1), 0)
  const order = Math.min(maxOrder, Math.floor(m / 4))
  const g = autocovariances(x, order)
  if (order < 1 || !(g[0]! > 0)) return []
  let coefficients: Array<number> = []
  let variance = g[0]!
  let best = { aic: m * Math.log(variance), coefficients }
  for (let p = 1; p <= order; p++) {
    let k = g[p]!
    for (let j = 0; j < p - 1; j++) k -= coefficients[j]! * g[p - 1 - j]!
    k /= variance
    if (!(Math.abs(k) < 1)) break
    coefficients = [...coefficients.map((c, j) => c - k * coefficients[p - 2 - j]!), k]
    variance *= 1 - k * k
    const aic = m * Math.log(variance) + 2 * p
    if (aic < best.aic) best = { aic, coefficients }
  }
  return best.coefficients
}

/** v_t − Σ a_j v_{t−j} for t ≥ p (NaN where any term is missing): the series with the AR filter applied. */
export const prewhiten = (v: Float64Array, a: ReadonlyArray<number>): Float64Array =>
  Float64Array.from({ length: Math.max(0, v.length - a.length) }, (_, i) => {
    const t = i + a.length
    let s = v[t]!
    for (let j = 0; j < a.length; j++) s -= a[j]! * v[t - 1 - j]!
    return s
  })

/** A small seeded generator for the permutations (mulberry32): uniform in [0, 1). */
const uniforms = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b_79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

/**
 * The permutation p-value of the largest lagged correlation `observed`: the share of the 999
 * permutations of x (plus the data itself) whose largest correlation with y over the lags is at
 * least as large. All permutations run in one batch of the WASM lagged-correlation kernel.
 */
const permutationP = (kernels: KernelsService, x: Float64Array, y: Float64Array, observed: number) =>
  Effect.gen(function*() {
    const n = x.length
    const xs = new Float64Array(PERMUTATIONS * n)
    const ys = new Float64Array(PERMUTATIONS * n)
    const next = uniforms(PERMUTATION_SEED)
    const shuffled = Float64Array.from(x)
    for (let b = 0; b < PERMUTATIONS; b++) {
      for (let i = n - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1))
        const t = shuffled[i]!
        shuffled[i] = shuffled[j]!
        shuffled[j] = t
      }
      xs.set(shuffled, b * n)
      ys.set(y, b * n)
    }
    const res = yield* kernels.laggedXcorr(xs, ys, PERMUTATIONS, n, MAX_LAG_WEEKS)
    let atLeast = 0
    for (let b = 0; b < PERMUTATIONS; b++) if (res.r[b]! >= observed) atLeast++
    // The smallest r the test calls a lead: p < α needs fewer than α(B + 1) − 1 permutation maxima
    // at or above it, so a maximum above the (α(B + 1) − 1)-th largest one (the 49th of 999) is one.
    const maxima = Array.from(res.r.subarray(0, PERMUTATIONS)).filter((r) => !Number.isNaN(r)).sort((a, b) => b - a)
    const rank = Math.round(ALPHA * (PERMUTATIONS + 1)) - 1
    return { p: (atLeast + 1) / (PERMUTATIONS + 1), threshold: maxima[rank - 1] ?? Number.NaN }
  })

/**
 * The correlation at each lag 0…MAX_LAG_WEEKS of x leading y — the values whose largest is the
 * lead found — each from the same kernel and pairs (both weeks present) as the search: lag L as
 * lag 0 of x[0, n − L) against y[L, n).
 */
export const correlationByLag = (kernels: KernelsService, x: Float64Array, y: Float64Array) =>
  Effect.gen(function*() {
    const n = x.length
    const lags = MAX_LAG_WEEKS + 1
    const xs = new Float64Array(lags * n).fill(Number.NaN)
    const ys = new Float64Array(lags * n).fill(Number.NaN)
    for (let lag = 0; lag < lags && lag < n; lag++) {
      xs.set(x.subarray(0, n - lag), lag * n)
      ys.set(y.subarray(lag), lag * n)
    }
    const res = yield* kernels.laggedXcorr(xs, ys, lags, n, 0)
    return Array.from({ length: lags }, (_, lag) => ({ lag, r: res.r[lag]!, pairs: res.n[lag]! }))
  })

/** Type-7 quantile of the present values. */
const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const s = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b)
  if (s.length === 0) return Number.NaN
  const h = (s.length - 1) * q
  const lo = Math.floor(h)
  return s[lo]! + (h - lo) * ((s[Math.min(lo + 1, s.length - 1)] ?? s[lo]!) - s[lo]!)
}

/** Everything the answer is built from. */
export interface LeadAnalysis {
  /** The AR filter of the animal series (its order is the length). */
  readonly ar: ReadonlyArray<number>
  /** The prewhitened log-scale animal and human series the lead is searched on. */
  readonly x: Float64Array
  readonly y: Float64Array
  /** The smallest largest-correlation the permutation test calls a lead (NaN when untested). */
  readonly threshold: number
  readonly lagWeeks: number
  readonly r: number
  readonly p: number
  readonly pairs: number
  readonly found: boolean
  readonly recentMean: number
  readonly q75: number
  readonly q95: number
  readonly weeks: number
}

/** Analyses one animal series against one human series (same weekly grid). */
export const analyzeLead = (kernels: KernelsService, animal: Float64Array, human: Float64Array) =>
  Effect.gen(function*() {
    const logAnimal = logScale(animal)
    const ar = arFilter(logAnimal)
    const x = prewhiten(logAnimal, ar)
    const y = prewhiten(logScale(human), ar)
    const res = yield* kernels.laggedXcorr(x, y, 1, x.length, MAX_LAG_WEEKS)
    const lagWeeks = res.lag[0]!
    const r = res.r[0]!
    const test = lagWeeks < 0 || Number.isNaN(r) ? { p: Number.NaN, threshold: Number.NaN } : yield* permutationP(kernels, x, y, r)
    const p = test.p
    const recent = Array.from(animal.subarray(Math.max(0, animal.length - RECENT_WEEKS))).filter((v) => !Number.isNaN(v))
    const analysis: LeadAnalysis = {
      ar,
      x,
      y,
      threshold: test.threshold,
      lagWeeks,
      r,
      p,
      pairs: res.n[0]!,
      found: lagWeeks >= 0 && r > 0 && p < ALPHA,
      recentMean: recent.length === 0 ? Number.NaN : recent.reduce((a, b) => a + b, 0) / recent.length,
      q75: quantile(Array.from(animal), 0.75),
      q95: quantile(Array.from(animal), 0.95),
      weeks: animal.length
    }
    return analysis
  })

/**
 * Alert level: critical = a lead found and recent animal cases above the series' 95th percentile;
 * high = a lead found and recent cases above the 75th; moderate = a lead found, or recent cases
 * above the 95th percentile without one; low otherwise.
 */
export const alertLevel = (a: LeadAnalysis): "low" | "moderate" | "high" | "critical" => {
  if (a.found && a.recentMean > a.q95) return "critical"
  if (a.found && a.recentMean > a.q75) return "high"
  if (a.found || a.recentMean > a.q95) return "moderate"
  return "low"
}

/** Zoonotic risk: high = a lead found from a high-potential host; moderate = a lead found, or a high-potential host; low otherwise. */
export const zoonoticRisk = (found: boolean, hostPotential: "high" | "moderate" | "low"): "low" | "moderate" | "high" =>
  found && hostPotential === "high" ? "high" : found || hostPotential === "high" ? "moderate" : "low"

/** The series of a request, or the species that do have the condition in the region. */
export const seriesOf = (data: Dataset, species: string, condition: string, region: string) => ({
  animal: data.surveillance.animal.get(`${species}/${condition}/${region}`),
  human: data.surveillance.human.get(`${condition}/${region}`),
  carriers: [...data.surveillance.animal.keys()].filter((k) => k.endsWith(`/${condition}/${region}`)).map((k) => k.split("/")[0]!)
})
