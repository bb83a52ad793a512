/**
 * Does an animal series lead a human one? Both weekly series are prewhitened with the animal
 * series' AR(1) filter (Box & Jenkins): counts that drift slowly are autocorrelated, and two such
 * series correlate by chance far more often than independent data would; filtering both with the
 * same AR(1) removes that and keeps a true lead. The lagged cross-correlation runs in the WASM core.
 */
import { Effect } from "effect"
import type { Dataset, KernelsService } from "../../src/plugin/Plugin.ts"
import potential from "./zoonotic-potential.json" with { type: "json" }

/** Lags tried: 0 to 8 weeks (0–56 days) of the animal series leading the human one. */
export const MAX_LAG_WEEKS = 8
/** Significance level of correlation_found (after Bonferroni over the 9 lags). */
export const ALPHA = 0.05
/** Weeks of "recent" animal activity the alert level looks at. */
export const RECENT_WEEKS = 4

/** The zoonotic potential of a host for a condition (zoonotic-potential.json), `low` when not listed. */
export const potentialOf = (species: string, condition: string): "high" | "moderate" | "low" =>
  (potential.entries.find((e) => e.species === species && e.condition === condition)?.potential as "high" | "moderate" | "low" | undefined) ?? "low"

/** Lag-1 autocorrelation of the present consecutive pairs, clamped to ±0.99 (0 with fewer than 3 pairs). */
export const ar1 = (x: Float64Array): number => {
  let n = 0
  let sx = 0
  for (const v of x) if (!Number.isNaN(v)) {
    n++
    sx += v
  }
  if (n < 3) return 0
  const mean = sx / n
  let num = 0
  let den = 0
  for (let t = 0; t < x.length; t++) {
    const d = x[t]! - mean
    if (Number.isNaN(d)) continue
    den += d * d
    if (t > 0 && !Number.isNaN(x[t - 1]!)) num += d * (x[t - 1]! - mean)
  }
  return den > 0 ? Math.max(-0.99, Math.min(0.99, num / den)) : 0
}

/** v_t − φ·v_{t−1} for t ≥ 1 (NaN where either is missing). */
export const prewhiten = (v: Float64Array, phi: number): Float64Array => Float64Array.from({ length: Math.max(0, v.length - 1) }, (_, i) => v[i + 1]! - phi * v[i]!)

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
  readonly phi: number
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
    const phi = ar1(animal)
    const x = prewhiten(animal, phi)
    const y = prewhiten(human, phi)
    const res = yield* kernels.laggedXcorr(x, y, 1, x.length, MAX_LAG_WEEKS)
    const lagWeeks = res.lag[0]!
    const r = res.r[0]!
    const p = res.p[0]!
    const recent = Array.from(animal.subarray(Math.max(0, animal.length - RECENT_WEEKS))).filter((v) => !Number.isNaN(v))
    const analysis: LeadAnalysis = {
      phi,
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
