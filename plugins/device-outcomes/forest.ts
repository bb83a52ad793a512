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
 *   scale with 0.5 added to each cell (so a study with 0 or n events has a finite variance).
 */
import { roundTo } from "../../src/plugin/Plugin.ts"
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

/** A metric's pooled row: the pooled estimate and interval, τ², I² from Cochran's Q, k studies. */
const pooledRow = (metric: string, studies: ReadonlyArray<StudyEstimate>, p: { readonly estimate: number; readonly ciLow: number; readonly ciHigh: number; readonly tau2: number; readonly q: number }): Row => ({
  metric,
  kind: "pooled",
  label: "pooled",
  n: studies.reduce((a, s) => a + s.n, 0),
  estimate: roundTo(p.estimate, 4),
  ci_low: roundTo(p.ciLow, 4),
  ci_high: roundTo(p.ciHigh, 4),
  tau2: roundTo(p.tau2, 4),
  i2: roundTo(iSquared(p.q, studies.length), 4),
  k: studies.length
})

/** A study's row: its estimate and interval (the tau2, i2 and k of pooled rows left empty). */
const studyRow = (metric: string, s: StudyEstimate, lo: number, hi: number): Row =>
  ({ metric, kind: "study", label: s.study, n: s.n, estimate: roundTo(s.estimate, 4), ci_low: roundTo(lo, 4), ci_high: roundTo(hi, 4), tau2: null, i2: null, k: null })

/** The forest rows of one metric: its studies, then its pooled estimate (the answer's value). */
export const forestRows = (metric: string, studies: ReadonlyArray<StudyEstimate>): Array<Row> => {
  if (isProportion(metric)) {
    const pooled = binomialNormal(studies.map((s) => ({ events: s.events, n: s.n })))
    const logits = studies.map((s) => ({
      estimate: Math.log((s.events + 0.5) / (s.n - s.events + 0.5)),
      variance: 1 / (s.events + 0.5) + 1 / (s.n - s.events + 0.5)
    }))
    return [
      ...studies.map((s) => studyRow(metric, s, ...wilson(s.events, s.n))),
      pooledRow(metric, studies, { ...pooled, tau2: pooled.tau * pooled.tau, q: derSimonianLaird(logits).q })
    ]
  }
  const half = (s: StudyEstimate) => Z95 * Math.sqrt(s.variance)
  return [...studies.map((s) => studyRow(metric, s, s.estimate - half(s), s.estimate + half(s))), pooledRow(metric, studies, derSimonianLaird(studies))]
}
