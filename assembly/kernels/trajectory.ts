// Trajectory kernels: fit five models to each series, select by AICc, predict with an approximate
// 95 % prediction interval. Twin: src/kernels/reference/trajectory.ts (same constants and order).
//   0 stable               y = c                                  (1 parameter)
//   1 linear               y = a + b·t                            (2)
//   2 exponential_decay    y = A·e^(−k·t)                         (2)
//   3 exponential_plateau  y = c + A·e^(−k·t) = c + (y0 − c)·e^(−k·t)   (3)
//   4 logistic             y = d + B / (1 + e^(k·(t − t0)))       (4)
// Given k (and t0) the exponential models are linear in their other parameters, so each is solved
// exactly by least squares on a geometric k grid, then k is refined by golden-section search
// around the best grid point (logistic: a grid over k and t0, then Levenberg–Marquardt). Missing points (NaN) are skipped; t is
// the point's index. AICc = m·ln(max(SSE, m·1e-10)/m) + 2p + 2p(p+1)/(m−p−1), defined for m ≥ p+2.
// The fits themselves (each model's SSE, the refinements) are in trajectory-fits.ts.
import { compact, expK, getF, setF } from "./common"
import { goldenMin, kindSse, LOGISTIC_K_MAX, logisticRefine, logisticSse, lmF, lmK, lmT, out0, out1 } from "./trajectory-fits"

const K_GRID_START: f64 = 0.01
const K_GRID_RATIO: f64 = 1.1193298485718235
const K_GRID_N: i32 = 48
const LK_START: f64 = 0.05
const LK_RATIO: f64 = 1.450942205090469
const LK_N: i32 = 12
const LT_N: i32 = 20
const GOLDEN_STEPS: i32 = 40
const SSE_FLOOR: f64 = 1e-10

function paramsOf(model: i32): i32 {
  return model == 0 ? 1 : model == 1 ? 2 : model == 2 ? 2 : model == 3 ? 3 : 4
}

function aicc(sse: f64, m: i32, p: i32): f64 {
  if (m < p + 2 || !isFinite(sse)) return NaN
  const floor = <f64>m * SSE_FLOOR
  const s = sse > floor ? sse : floor
  return <f64>m * Math.log(s / <f64>m) + 2.0 * <f64>p + (2.0 * <f64>p * <f64>(p + 1)) / <f64>(m - p - 1)
}

function modelAt(model: i32, p0: f64, p1: f64, p2: f64, p3: f64, t: f64): f64 {
  if (model == 0) return p0
  if (model == 1) return p0 + p1 * t
  if (model == 2) return p0 * expK(-p1 * t)
  if (model == 3) return p0 + p1 * expK(-p2 * t)
  return p0 + p1 / (1.0 + expK(p2 * (t - p3)))
}

@inline function clamp10(x: f64): f64 {
  return x < 0.0 ? 0.0 : x > 10.0 ? 10.0 : x
}

/**
 * data: nSeries × nPoints. Outputs per series: outModel (code as f64, −1 with no points),
 * outParams (4), outAicc (5, NaN where ineligible), outPred/outLo/outHi (horizon values at
 * t = nPoints − 1 + h, clamped to [0, 10]; interval ŷ ± 1.96·σ·√(1 + 1/m + (t − t̄)²/Sxx)).
 * scratch: at least nPoints × 24 + 160 bytes.
 */
export function fitTrajectories(
  data: usize, nSeries: i32, nPoints: i32, horizon: i32,
  outModel: usize, outParams: usize, outAicc: usize, outPred: usize, outLo: usize, outHi: usize, scratch: usize
): void {
  const v = scratch
  const t = v + (<usize>nPoints << 3)
  const basis = t + (<usize>nPoints << 3)
  const params = basis + (<usize>nPoints << 3)
  const sses = params + 160
  for (let s = 0; s < nSeries; s++) {
    const m = compact(data + (<usize>(s * nPoints) << 3), nPoints, v, t)
    for (let j = 0; j < 20; j++) setF(params, j, NaN)
    if (m == 0) {
      setF(outModel, s, -1.0)
      for (let j = 0; j < 4; j++) setF(outParams, s * 4 + j, NaN)
      for (let j = 0; j < 5; j++) setF(outAicc, s * 5 + j, NaN)
      for (let h = 0; h < horizon; h++) {
        setF(outPred, s * horizon + h, NaN)
        setF(outLo, s * horizon + h, NaN)
        setF(outHi, s * horizon + h, NaN)
      }
      continue
    }
    let st = 0.0
    let sv = 0.0
    for (let i = 0; i < m; i++) {
      st += getF(t, i)
      sv += getF(v, i)
    }
    const tbar = st / <f64>m
    const vbar = sv / <f64>m
    let sxx = 0.0
    let sxy = 0.0
    let sst = 0.0
    for (let i = 0; i < m; i++) {
      const dt = getF(t, i) - tbar
      const dv = getF(v, i) - vbar
      sxx += dt * dt
      sxy += dt * dv
      sst += dv * dv
    }
    setF(params, 0, vbar)
    setF(sses, 0, sst)
    const b = sxx > 0.0 ? sxy / sxx : 0.0
    setF(params, 4, vbar - b * tbar)
    setF(params, 5, b)
    let sseLin = 0.0
    for (let i = 0; i < m; i++) {
      const r = getF(v, i) - getF(params, 4) - b * getF(t, i)
      sseLin += r * r
    }
    setF(sses, 1, sxx > 0.0 ? sseLin : Infinity)
    for (let kind = 2; kind <= 3; kind++) {
      let k = K_GRID_START
      let bestJ = 0
      let bestSse = Infinity
      let bestK = k
      for (let j = 0; j < K_GRID_N; j++) {
        const e = kindSse(kind, v, t, m, k, basis)
        if (e < bestSse) {
          bestSse = e
          bestJ = j
          bestK = k
        }
        k = k * K_GRID_RATIO
      }
      if (bestSse < Infinity) {
        const lo = bestJ == 0 ? bestK : bestK / K_GRID_RATIO
        const hi = bestJ == K_GRID_N - 1 ? bestK : bestK * K_GRID_RATIO
        const kr = goldenMin(kind, v, t, m, lo, hi, GOLDEN_STEPS, basis)
        const er = kindSse(kind, v, t, m, kr, basis)
        const kBest = er < bestSse ? kr : bestK
        const eBest = kindSse(kind, v, t, m, kBest, basis)
        setF(sses, kind, eBest)
        if (kind == 2) {
          setF(params, 8, out0)
          setF(params, 9, kBest)
        } else {
          setF(params, 12, out0)
          setF(params, 13, out1)
          setF(params, 14, kBest)
        }
      } else {
        setF(sses, kind, Infinity)
      }
    }
    // logistic: grid over k and t0; then Levenberg–Marquardt from the best grid point of each k
    // row and from the best step between consecutive points (k = LOGISTIC_K_MAX, t0 midway), over
    // the domain with t0 within the span ± the span; the lowest SSE wins.
    const span = getF(t, m - 1) - getF(t, 0)
    const t0Start = getF(t, 0) - 0.25 * span
    const t0Step = (1.5 * span) / <f64>(LT_N - 1)
    const tLo = getF(t, 0) - span
    const tHi = getF(t, m - 1) + span
    let lk = LK_START
    let bestL = Infinity
    for (let j = 0; j < LK_N; j++) {
      let rowBest = Infinity
      let rowT0 = 0.0
      for (let q = 0; q < LT_N; q++) {
        const t0 = t0Start + <f64>q * t0Step
        const e = logisticSse(v, t, m, lk, t0, basis)
        if (e < rowBest) {
          rowBest = e
          rowT0 = t0
        }
      }
      if (rowBest < Infinity) {
        logisticRefine(v, t, m, lk, rowT0, tLo, tHi, basis)
        if (lmF < bestL) {
          bestL = lmF
          setF(params, 18, lmK)
          setF(params, 19, lmT)
        }
      }
      lk = lk * LK_RATIO
    }
    let stepBest = Infinity
    let stepT0 = 0.0
    for (let i = 0; i + 1 < m; i++) {
      const t0 = 0.5 * (getF(t, i) + getF(t, i + 1))
      const e = logisticSse(v, t, m, LOGISTIC_K_MAX, t0, basis)
      if (e < stepBest) {
        stepBest = e
        stepT0 = t0
      }
    }
    if (stepBest < Infinity) {
      logisticRefine(v, t, m, LOGISTIC_K_MAX, stepT0, tLo, tHi, basis)
      if (lmF < bestL) {
        bestL = lmF
        setF(params, 18, lmK)
        setF(params, 19, lmT)
      }
    }
    if (bestL < Infinity) {
      bestL = logisticSse(v, t, m, getF(params, 18), getF(params, 19), basis)
      setF(params, 16, out0)
      setF(params, 17, out1)
    }
    setF(sses, 4, bestL)
    let best = -1
    let bestA = Infinity
    for (let j = 0; j < 5; j++) {
      const a = aicc(getF(sses, j), m, paramsOf(j))
      setF(outAicc, s * 5 + j, a)
      if (!isNaN(a) && a < bestA) {
        bestA = a
        best = j
      }
    }
    if (best < 0) best = 0
    setF(outModel, s, <f64>best)
    for (let j = 0; j < 4; j++) setF(outParams, s * 4 + j, getF(params, best * 4 + j))
    const p = paramsOf(best)
    const sse = getF(sses, best)
    const sigma = m > p && isFinite(sse) ? Math.sqrt(sse / <f64>(m - p)) : 0.0
    for (let h = 1; h <= horizon; h++) {
      const th = <f64>(nPoints - 1 + h)
      const y = modelAt(best, getF(params, best * 4), getF(params, best * 4 + 1), getF(params, best * 4 + 2), getF(params, best * 4 + 3), th)
      const lev = sxx > 0.0 ? 1.0 / <f64>m + ((th - tbar) * (th - tbar)) / sxx : 1.0 / <f64>m
      const half = 1.96 * sigma * Math.sqrt(1.0 + lev)
      const o = s * horizon + h - 1
      setF(outPred, o, clamp10(y))
      setF(outLo, o, clamp10(y - half))
      setF(outHi, o, clamp10(y + half))
    }
  }
}
