/**
 * What the device-outcomes view draws beyond the answer (src/plugin/viewData.ts): a forest plot —
 * per metric, each study's estimate with its 95 % interval and size, then the pooled estimate
 * (the answer's) with its interval and the heterogeneity between studies.
 *
 * - A study's rate: x/n with the Wilson score interval (Wilson 1927; inside [0, 1], sensible at 0
 *   or n events). A study's mean score: ± 1.96 standard errors (s/√n).
 * - The pooled rate's interval is the binomial-normal model's profile-likelihood interval, its τ²
 *   the model's between-study variance on the logit scale; a pooled score's interval and τ² are
 *   DerSimonian–Laird's.
 * - I² (Higgins & Thompson 2002): max(0, (Q − (k − 1)) / Q), the share of the variation across
 *   studies beyond chance, from Cochran's Q with inverse-variance weights — for rates on the logit
 *   scale with 0.5 added to each cell (so a study with 0 or n events has a finite variance) — and
 *   Q's p-value from χ² with k − 1 degrees of freedom.
 * - A study's weight: its share of the random-effects weights 1/(vᵢ + τ²), with vᵢ its variance on
 *   the scale pooled (a rate's on the logit scale as above) and τ² the model's (for a rate, the
 *   binomial-normal model's, whose pooling has no weights of its own: this is the inverse-variance
 *   approximation to it that a forest plot shows, as metafor's for a GLMM).
 * - The 95 % prediction interval of a new study's true value (Higgins, Thompson & Spiegelhalter,
 *   JRSS A 2009;172:137) where k ≥ 3: μ ± t(k − 2)·√(τ² + SE(μ)²); for a rate on the logit scale
 *   with SE(μ) from the width of the profile interval (its half-width over 1.96), back-transformed.
 */
import { chiSquareUpperP, roundTo, studentTQuantile } from "../../src/plugin/Plugin.ts"
import { binomialNormal } from "./binomialNormal.ts"
import { derSimonianLaird, isProportion, type StudyEstimate } from "./pooling.ts"
import type { ForestRow } from "./schema.ts"

const Z95 = 1.959963984540054

/** The Wilson score interval of x/n at 95 %. */
export const wilson = (x: number, n: number): readonly [number, number] => {
  const p = x / n
  const z2 = Z95 * Z95
  const d = 1 + z2 / n
  const centre = (p + z2 / (2 * n)) / d
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / d
  return [Math.max(0, centre - half), Math.min(1, centre + half)]
}

/** I² from Cochran's Q over k studies (0 when Q ≤ k − 1 or k < 2). */
const iSquared = (q: number, k: number) => (k > 1 && q > k - 1 ? (q - (k - 1)) / q : 0)

type Row = typeof ForestRow.Type

const logit = (p: number) => Math.log(p / (1 - p))
const expit = (x: number) => 1 / (1 + Math.exp(-x))

/** The pooled values a metric's rows need: estimate and interval, τ² and Cochran's Q, the prediction interval, each study's variance on the pooled scale. */
interface PooledForRows {
  readonly estimate: number
  readonly ciLow: number
  readonly ciHigh: number
  readonly tau2: number
  readonly q: number
  readonly piLow: number | null
  readonly piHigh: number | null
  readonly variances: ReadonlyArray<number>
}

/** A metric's pooled row: the pooled estimate and interval, τ², I² and Q with its p-value, the prediction interval, k studies, weight 1. */
const pooledRow = (metric: string, studies: ReadonlyArray<StudyEstimate>, p: PooledForRows): Row => ({
  metric,
  kind: "pooled",
  label: "pooled",
  n: studies.reduce((a, s) => a + s.n, 0),
  estimate: roundTo(p.estimate, 4),
  ci_low: roundTo(p.ciLow, 4),
  ci_high: roundTo(p.ciHigh, 4),
  tau2: roundTo(p.tau2, 4),
  i2: roundTo(iSquared(p.q, studies.length), 4),
  q: roundTo(p.q, 4),
  q_p: studies.length > 1 ? roundTo(chiSquareUpperP(p.q, studies.length - 1), 4) : null,
  pi_low: p.piLow === null ? null : roundTo(p.piLow, 4),
  pi_high: p.piHigh === null ? null : roundTo(p.piHigh, 4),
  weight: 1,
  k: studies.length
})

/** A study's row: its estimate, interval and weight (the pooled rows' fields left empty). */
const studyRow = (metric: string, s: StudyEstimate, lo: number, hi: number, weight: number): Row => ({
  metric,
  kind: "study",
  label: s.study,
  n: s.n,
  estimate: roundTo(s.estimate, 4),
  ci_low: roundTo(lo, 4),
  ci_high: roundTo(hi, 4),
  tau2: null,
  i2: null,
  q: null,
  q_p: null,
  pi_low: null,
  pi_high: null,
  weight: roundTo(weight, 4),
  k: null
})

/** The half-width multiplier of the prediction interval: t(k − 2) at 97.5 %, defined from k = 3. */
const piMultiplier = (k: number): number | undefined => (k >= 3 ? studentTQuantile(0.05, k - 2) : undefined)

/** The rows of a metric from its pooled values. */
const rowsOf = (metric: string, studies: ReadonlyArray<StudyEstimate>, intervals: ReadonlyArray<readonly [number, number]>, p: PooledForRows): Array<Row> => {
  const w = p.variances.map((v) => 1 / (v + p.tau2))
  const total = w.reduce((a, b) => a + b, 0)
  return [...studies.map((s, i) => studyRow(metric, s, intervals[i]![0], intervals[i]![1], w[i]! / total)), pooledRow(metric, studies, p)]
}

/** The forest rows of one metric: its studies, then its pooled estimate (the answer's value). */
export const forestRows = (metric: string, studies: ReadonlyArray<StudyEstimate>): Array<Row> => {
  const t = piMultiplier(studies.length)
  if (isProportion(metric)) {
    const pooled = binomialNormal(studies.map((s) => ({ events: s.events, n: s.n })))
    const logits = studies.map((s) => ({
      estimate: Math.log((s.events + 0.5) / (s.n - s.events + 0.5)),
      variance: 1 / (s.events + 0.5) + 1 / (s.n - s.events + 0.5)
    }))
    const tau2 = pooled.tau * pooled.tau
    const se = (logit(pooled.ciHigh) - logit(pooled.ciLow)) / (2 * Z95)
    const half = t === undefined || !Number.isFinite(pooled.mu) || !Number.isFinite(se) ? undefined : t * Math.sqrt(tau2 + se * se)
    return rowsOf(metric, studies, studies.map((s) => wilson(s.events, s.n)), {
      ...pooled,
      tau2,
      q: derSimonianLaird(logits).q,
      piLow: half === undefined ? null : expit(pooled.mu - half),
      piHigh: half === undefined ? null : expit(pooled.mu + half),
      variances: logits.map((l) => l.variance)
    })
  }
  const dl = derSimonianLaird(studies)
  const half = t === undefined ? undefined : t * Math.sqrt(dl.tau2 + dl.se * dl.se)
  return rowsOf(metric, studies, studies.map((s) => [s.estimate - Z95 * Math.sqrt(s.variance), s.estimate + Z95 * Math.sqrt(s.variance)] as const), {
    ...dl,
    piLow: half === undefined ? null : dl.estimate - half,
    piHigh: half === undefined ? null : dl.estimate + half,
    variances: studies.map((s) => s.variance)
  })
}
