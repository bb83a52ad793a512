/**
 * Pooling k estimates with their variances, as a meta-analysis does (part of the plugin contract):
 * the inverse-variance fixed effect; random effects with τ² by DerSimonian–Laird (Controlled
 * Clinical Trials 1986;7:177) or by restricted maximum likelihood (Viechtbauer, J Educ Behav Stat
 * 2005;30:261: the Fisher-scoring fixed point, to 1e-12); the Hartung–Knapp(–Sidik–Jonkman)
 * interval (Hartung & Knapp, Stat Med 2001;20:3875; IntHout et al., BMC Med Res Methodol
 * 2014;14:25: t with k − 1 degrees of freedom, the adjustment not truncated); Cochran's Q with its
 * χ² p-value, I² (Higgins & Thompson, Stat Med 2002;21:1539) and the 95 % prediction interval
 * (Higgins, Thompson & Spiegelhalter, JRSS A 2009;172:137).
 */
import { chiSquareUpperP, studentTQuantile } from "./stats.ts"

/** One estimate and its (within-study) variance, > 0. */
export interface EffectEstimate {
  readonly estimate: number
  readonly variance: number
}

/** An interval's ends and the estimate's standard error behind it. */
export interface PooledEffect {
  readonly estimate: number
  readonly se: number
  readonly ciLow: number
  readonly ciHigh: number
}

/** Everything a forest plot states about pooled estimates. */
export interface MetaAnalysis {
  readonly k: number
  readonly fixed: PooledEffect
  /** Cochran's Q (on the fixed-effect weights), its χ²(k − 1) p-value (NaN for k = 1) and I² in [0, 1]. */
  readonly q: number
  readonly qP: number
  readonly i2: number
  readonly dl: PooledEffect & { readonly tau2: number }
  readonly reml: PooledEffect & { readonly tau2: number }
  /** Hartung–Knapp intervals around the DerSimonian–Laird and REML estimates (NaN ends for k = 1). */
  readonly dlHartungKnapp: PooledEffect
  readonly remlHartungKnapp: PooledEffect
  /** The REML fit's 95 % prediction interval of a new study's true effect (NaN ends for k < 3). */
  readonly prediction: readonly [number, number]
  /** Each estimate's share of the REML random-effects weights (summing to 1). */
  readonly weights: ReadonlyArray<number>
}

/** z of a two-sided 95 % interval. */
export const Z95 = 1.959963984540054

const sum = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0)

/** The weighted mean and its Wald interval under between-study variance τ². */
const underTau2 = (studies: ReadonlyArray<EffectEstimate>, tau2: number): PooledEffect & { readonly tau2: number; readonly w: ReadonlyArray<number> } => {
  const w = studies.map((s) => 1 / (s.variance + tau2))
  const sw = sum(w)
  const estimate = sum(studies.map((s, i) => w[i]! * s.estimate)) / sw
  const se = Math.sqrt(1 / sw)
  return { estimate, se, ciLow: estimate - Z95 * se, ciHigh: estimate + Z95 * se, tau2, w }
}

/** τ² by DerSimonian–Laird's method of moments. */
export const tau2DerSimonianLaird = (studies: ReadonlyArray<EffectEstimate>): number => {
  const k = studies.length
  const { estimate, w } = underTau2(studies, 0)
  const sw = sum(w)
  const q = sum(studies.map((s, i) => w[i]! * (s.estimate - estimate) ** 2))
  const c = sw - sum(w.map((x) => x * x)) / sw
  return k > 1 && c > 0 ? Math.max(0, (q - (k - 1)) / c) : 0
}

/** τ² by restricted maximum likelihood: Viechtbauer's fixed point from DerSimonian–Laird's, truncated at 0. */
export const tau2Reml = (studies: ReadonlyArray<EffectEstimate>): number => {
  if (studies.length < 2) return 0
  let tau2 = tau2DerSimonianLaird(studies)
  for (let i = 0; i < 1000; i++) {
    const { estimate, w } = underTau2(studies, tau2)
    const w2 = sum(w.map((x) => x * x))
    const next = Math.max(0, sum(studies.map((s, j) => w[j]! ** 2 * ((s.estimate - estimate) ** 2 - s.variance))) / w2 + 1 / sum(w))
    if (Math.abs(next - tau2) <= 1e-12 * Math.max(1, tau2)) return next
    tau2 = next
  }
  return tau2
}

/** The Hartung–Knapp interval around the estimate under τ². */
const hartungKnapp = (studies: ReadonlyArray<EffectEstimate>, fit: ReturnType<typeof underTau2>): PooledEffect => {
  const k = studies.length
  if (k < 2) return { estimate: fit.estimate, se: Number.NaN, ciLow: Number.NaN, ciHigh: Number.NaN }
  const se = Math.sqrt(sum(studies.map((s, i) => fit.w[i]! * (s.estimate - fit.estimate) ** 2)) / ((k - 1) * sum(fit.w)))
  const t = studentTQuantile(0.05, k - 1)
  return { estimate: fit.estimate, se, ciLow: fit.estimate - t * se, ciHigh: fit.estimate + t * se }
}

const effect = ({ ciHigh, ciLow, estimate, se }: PooledEffect): PooledEffect => ({ estimate, se, ciLow, ciHigh })

/** Pools k ≥ 1 estimates with positive variances (module comment). */
export const metaAnalysis = (studies: ReadonlyArray<EffectEstimate>): MetaAnalysis => {
  const k = studies.length
  const fixed = underTau2(studies, 0)
  const q = sum(studies.map((s, i) => fixed.w[i]! * (s.estimate - fixed.estimate) ** 2))
  const dl = underTau2(studies, tau2DerSimonianLaird(studies))
  const reml = underTau2(studies, tau2Reml(studies))
  const half = k >= 3 ? studentTQuantile(0.05, k - 2) * Math.sqrt(reml.tau2 + reml.se ** 2) : Number.NaN
  const sw = sum(reml.w)
  return {
    k,
    fixed: effect(fixed),
    q,
    qP: k > 1 ? chiSquareUpperP(q, k - 1) : Number.NaN,
    i2: k > 1 && q > 0 ? Math.max(0, (q - (k - 1)) / q) : 0,
    dl: { ...effect(dl), tau2: dl.tau2 },
    reml: { ...effect(reml), tau2: reml.tau2 },
    dlHartungKnapp: hartungKnapp(studies, dl),
    remlHartungKnapp: hartungKnapp(studies, reml),
    prediction: [reml.estimate - half, reml.estimate + half],
    weights: reml.w.map((x) => x / sw)
  }
}
