/**
 * Twin of assembly/kernels/trajectory.ts. Fits five models to each series and selects one by AICc:
 *   0 stable               y = c                                 (1 parameter)
 *   1 linear               y = a + b·t                           (2)
 *   2 exponential_decay    y = A·e^(−k·t)                        (2)
 *   3 exponential_plateau  y = c + A·e^(−k·t)   (= c + (y0 − c)·e^(−k·t))   (3)
 *   4 logistic             y = d + B / (1 + e^(k·(t − t0)))      (4)
 * The exponential models are linear in their other parameters once k (and t0) are fixed, so each
 * is solved exactly by least squares for every k on a geometric grid, then k is refined by golden-
 * section search around the best grid point (logistic: grid over k and t0 only). The fits
 * themselves (each model's SSE, the refinements) are in trajectoryFits.ts, as the core's are.
 */
import { compact, expK } from "./common.ts"
import { decaySse, goldenMin, LOGISTIC_K_MAX, logisticRefine, logisticSse, plateauSse } from "./trajectoryFits.ts"

export { MODEL_NAMES } from "../../plugin/names.ts"

/** Parameters per model. */
export const MODEL_PARAMS = [1, 2, 2, 3, 4] as const

/** k grid: 48 geometric steps from 0.01 to 2 (ratio 200^(1/47), a literal so both twins agree bit for bit). */
export const K_GRID_START = 0.01
export const K_GRID_RATIO = 1.1193298485718235
export const K_GRID_N = 48
/** Logistic grid: k from 0.05 by ratio 60^(1/11) (12 values), t0 at 20 points across the span ± 25 %. */
export const LK_START = 0.05
export const LK_RATIO = 1.450942205090469
export const LK_N = 12
export const LT_N = 20
const GOLDEN_STEPS = 40
/** SSE floor per point: a residual SD of 1e-5 on the 0–10 scale counts as a perfect fit. */
const SSE_FLOOR = 1e-10

/** AICc; NaN when the model has too many parameters for m points (needs m ≥ p + 2). */
export const aicc = (sse: number, m: number, p: number): number => {
  if (m < p + 2 || !Number.isFinite(sse)) return NaN
  const s = sse > m * SSE_FLOOR ? sse : m * SSE_FLOOR
  return m * Math.log(s / m) + 2 * p + (2 * p * (p + 1)) / (m - p - 1)
}

/** Value of a model at t. */
export const modelAt = (model: number, p0: number, p1: number, p2: number, p3: number, t: number): number => {
  switch (model) {
    case 0:
      return p0
    case 1:
      return p0 + p1 * t
    case 2:
      return p0 * expK(-p1 * t)
    case 3:
      return p0 + p1 * expK(-p2 * t)
    default:
      return p0 + p1 / (1 + expK(p2 * (t - p3)))
  }
}

const clamp10 = (x: number): number => (x < 0 ? 0 : x > 10 ? 10 : x)

/**
 * The exponential decay (kind 2) or the plateau (kind 3): the rate k over a geometric grid, then
 * refined by golden-section search; writes the model's parameters and gives its SSE (Infinity when
 * none fits).
 */
const fitRate = (kind: number, v: Float64Array, t: Float64Array, m: number, basis: Float64Array, tmp: Float64Array, params: Float64Array): number => {
  let k = K_GRID_START
  let bestJ = 0
  let bestSse = Infinity
  let bestK = k
  for (let j = 0; j < K_GRID_N; j++) {
    const e = kind === 2 ? decaySse(v, t, m, k, tmp) : plateauSse(v, t, m, k, basis, tmp)
    if (e < bestSse) {
      bestSse = e
      bestJ = j
      bestK = k
    }
    k = k * K_GRID_RATIO
  }
  if (bestSse < Infinity) {
    const lo = bestJ === 0 ? bestK : bestK / K_GRID_RATIO
    const hi = bestJ === K_GRID_N - 1 ? bestK : bestK * K_GRID_RATIO
    const kr = goldenMin(kind, v, t, m, lo, hi, GOLDEN_STEPS, basis, tmp)
    const er = kind === 2 ? decaySse(v, t, m, kr, tmp) : plateauSse(v, t, m, kr, basis, tmp)
    const kBest = er < bestSse ? kr : bestK
    const eBest = kind === 2 ? decaySse(v, t, m, kBest, tmp) : plateauSse(v, t, m, kBest, basis, tmp)
    if (kind === 2) {
      params[8] = tmp[0]!
      params[9] = kBest
    } else {
      params[12] = tmp[0]!
      params[13] = tmp[1]!
      params[14] = kBest
    }
    return eBest
  }
  return Infinity
}

/** The logistic model: writes its parameters and gives its SSE (Infinity when none fits). */
const fitLogistic = (v: Float64Array, t: Float64Array, m: number, basis: Float64Array, tmp: Float64Array, found: Float64Array, params: Float64Array): number => {
  // logistic: grid over k and t0; then (as in the WASM kernel) Levenberg–Marquardt from the best
  // grid point of each k row, over 0 < k ≤ LOGISTIC_K_MAX and t0 within the span ± the span.
  const span = t[m - 1]! - t[0]!
  const t0Start = t[0]! - 0.25 * span
  const t0Step = (1.5 * span) / (LT_N - 1)
  let lk = LK_START
  let bestL = Infinity
  for (let j = 0; j < LK_N; j++) {
    let rowBest = Infinity
    let rowT0 = 0
    for (let q = 0; q < LT_N; q++) {
      const t0 = t0Start + q * t0Step
      const e = logisticSse(v, t, m, lk, t0, basis, tmp)
      if (e < rowBest) {
        rowBest = e
        rowT0 = t0
      }
    }
    if (rowBest < Infinity) {
      logisticRefine(v, t, m, lk, rowT0, t[0]! - span, t[m - 1]! + span, basis, tmp, found)
      if (found[2]! < bestL) {
        bestL = found[2]!
        params[18] = found[0]!
        params[19] = found[1]!
      }
    }
    lk = lk * LK_RATIO
  }
  // One more start: the best step between consecutive points (k = LOGISTIC_K_MAX, t0 midway), the
  // limit the least-squares logistic takes on a series that jumps between two levels.
  let stepBest = Infinity
  let stepT0 = 0
  for (let i = 0; i + 1 < m; i++) {
    const t0 = 0.5 * (t[i]! + t[i + 1]!)
    const e = logisticSse(v, t, m, LOGISTIC_K_MAX, t0, basis, tmp)
    if (e < stepBest) {
      stepBest = e
      stepT0 = t0
    }
  }
  if (stepBest < Infinity) {
    logisticRefine(v, t, m, LOGISTIC_K_MAX, stepT0, t[0]! - span, t[m - 1]! + span, basis, tmp, found)
    if (found[2]! < bestL) {
      bestL = found[2]!
      params[18] = found[0]!
      params[19] = found[1]!
    }
  }
  if (bestL < Infinity) {
    bestL = logisticSse(v, t, m, params[18]!, params[19]!, basis, tmp)
    params[16] = tmp[0]!
    params[17] = tmp[1]!
  }
  return bestL
}

/**
 * data: nSeries × nPoints (NaN = missing). For each series: outModel (code, −1 if no points),
 * outParams (4: see modelAt), outAicc (5, NaN where ineligible), and for h = 1..horizon at
 * t = nPoints − 1 + h: outPred, outLo, outHi (approximate 95 % prediction interval
 * ŷ ± 1.96·σ·√(1 + 1/m + (t − t̄)²/Sxx), σ² = SSE/(m − p)), all clamped to [0, 10].
 */
export const fitTrajectories = (
  data: Float64Array, nSeries: number, nPoints: number, horizon: number,
  outModel: Float64Array, outParams: Float64Array, outAicc: Float64Array,
  outPred: Float64Array, outLo: Float64Array, outHi: Float64Array
): void => {
  const v = new Float64Array(nPoints)
  const t = new Float64Array(nPoints)
  const basis = new Float64Array(nPoints)
  const tmp = new Float64Array(5)
  const found = new Float64Array(3)
  const params = new Float64Array(20)
  const sses = new Float64Array(5)
  for (let s = 0; s < nSeries; s++) {
    const m = compact(data.subarray(s * nPoints, (s + 1) * nPoints), v, t)
    for (let j = 0; j < 20; j++) params[j] = NaN
    if (m === 0) {
      outModel[s] = -1
      for (let j = 0; j < 4; j++) outParams[s * 4 + j] = NaN
      for (let j = 0; j < 5; j++) outAicc[s * 5 + j] = NaN
      for (let h = 0; h < horizon; h++) {
        outPred[s * horizon + h] = NaN
        outLo[s * horizon + h] = NaN
        outHi[s * horizon + h] = NaN
      }
      continue
    }
    // stable and linear
    let st = 0
    let sv = 0
    for (let i = 0; i < m; i++) {
      st += t[i]!
      sv += v[i]!
    }
    const tbar = st / m
    const vbar = sv / m
    let sxx = 0
    let sxy = 0
    let sst = 0
    for (let i = 0; i < m; i++) {
      const dt = t[i]! - tbar
      const dv = v[i]! - vbar
      sxx += dt * dt
      sxy += dt * dv
      sst += dv * dv
    }
    params[0] = vbar
    sses[0] = sst
    const b = sxx > 0 ? sxy / sxx : 0
    params[4] = vbar - b * tbar
    params[5] = b
    let sseLin = 0
    for (let i = 0; i < m; i++) {
      const r = v[i]! - params[4]! - b * t[i]!
      sseLin += r * r
    }
    sses[1] = sxx > 0 ? sseLin : Infinity
    // exponential decay and plateau: grid then golden-section refinement
    for (let kind = 2; kind <= 3; kind++) sses[kind] = fitRate(kind, v, t, m, basis, tmp, params)
    const bestL = fitLogistic(v, t, m, basis, tmp, found, params)
    sses[4] = bestL
    // selection by AICc (strictly smaller wins, so ties keep the simpler model)
    let best = -1
    let bestA = Infinity
    for (let j = 0; j < 5; j++) {
      const a = aicc(sses[j]!, m, MODEL_PARAMS[j]!)
      outAicc[s * 5 + j] = a
      if (!Number.isNaN(a) && a < bestA) {
        bestA = a
        best = j
      }
    }
    if (best < 0) best = 0 // a single point: only the mean is defined
    outModel[s] = best
    for (let j = 0; j < 4; j++) outParams[s * 4 + j] = params[best * 4 + j]!
    const p = MODEL_PARAMS[best]!
    const sse = sses[best]!
    const sigma = m > p && Number.isFinite(sse) ? Math.sqrt(sse / (m - p)) : 0
    for (let h = 1; h <= horizon; h++) {
      const th = nPoints - 1 + h
      const y = modelAt(best, params[best * 4]!, params[best * 4 + 1]!, params[best * 4 + 2]!, params[best * 4 + 3]!, th)
      const lev = sxx > 0 ? 1 / m + ((th - tbar) * (th - tbar)) / sxx : 1 / m
      const half = 1.96 * sigma * Math.sqrt(1 + lev)
      const o = s * horizon + h - 1
      outPred[o] = clamp10(y)
      outLo[o] = clamp10(y - half)
      outHi[o] = clamp10(y + half)
    }
  }
}
