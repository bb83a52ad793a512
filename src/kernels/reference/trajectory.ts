/**
 * Twin of assembly/kernels/trajectory.ts. Fits five models to each series and selects one by AICc:
 *   0 stable               y = c                                 (1 parameter)
 *   1 linear               y = a + b·t                           (2)
 *   2 exponential_decay    y = A·e^(−k·t)                        (2)
 *   3 exponential_plateau  y = c + A·e^(−k·t)   (= c + (y0 − c)·e^(−k·t))   (3)
 *   4 logistic             y = d + B / (1 + e^(k·(t − t0)))      (4)
 * The exponential models are linear in their other parameters once k (and t0) are fixed, so each
 * is solved exactly by least squares for every k on a geometric grid, then k is refined by golden-
 * section search around the best grid point (logistic: grid over k and t0 only).
 */
import { compact, expK } from "./common.ts"

export { MODEL_NAMES } from "../names.ts"

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
const GOLDEN = 0.6180339887498949
const GOLDEN_STEPS = 40
/** SSE floor per point: a residual SD of 1e-5 on the 0–10 scale counts as a perfect fit. */
const SSE_FLOOR = 1e-10

// Sums in the WASM core's lane order: even and odd points apart, added at the end, then the odd
// tail (the core runs these loops on two SIMD lanes), so both twins give bit-identical fits.

/** SSE of y ≈ A·e(k,t) with the best A; writes A to out[0]. */
const decaySse = (v: Float64Array, t: Float64Array, m: number, k: number, out: Float64Array): number => {
  let ye0 = 0
  let ye1 = 0
  let ee0 = 0
  let ee1 = 0
  let i = 0
  for (; i + 2 <= m; i += 2) {
    const e0 = expK(-k * t[i]!)
    const e1 = expK(-k * t[i + 1]!)
    ye0 += v[i]! * e0
    ye1 += v[i + 1]! * e1
    ee0 += e0 * e0
    ee1 += e1 * e1
  }
  let sye = ye0 + ye1
  let see = ee0 + ee1
  if (i < m) {
    const e = expK(-k * t[i]!)
    sye += v[i]! * e
    see += e * e
  }
  if (!(see > 0)) return Infinity
  const a = sye / see
  let s0 = 0
  let s1 = 0
  i = 0
  for (; i + 2 <= m; i += 2) {
    const r0 = v[i]! - a * expK(-k * t[i]!)
    const r1 = v[i + 1]! - a * expK(-k * t[i + 1]!)
    s0 += r0 * r0
    s1 += r1 * r1
  }
  let sse = s0 + s1
  if (i < m) {
    const r = v[i]! - a * expK(-k * t[i]!)
    sse += r * r
  }
  out[0] = a
  return sse
}

/** SSE of y ≈ c + A·b_i (b a basis column) with the best c, A; writes c, A to out[0], out[1]. */
const basisSse = (v: Float64Array, b: Float64Array, m: number, out: Float64Array): number => {
  let b0 = 0
  let b1 = 0
  let y0 = 0
  let y1 = 0
  let i = 0
  for (; i + 2 <= m; i += 2) {
    b0 += b[i]!
    b1 += b[i + 1]!
    y0 += v[i]!
    y1 += v[i + 1]!
  }
  let sb = b0 + b1
  let sy = y0 + y1
  if (i < m) {
    sb += b[i]!
    sy += v[i]!
  }
  const mb = sb / m
  const my = sy / m
  let bb0 = 0
  let bb1 = 0
  let by0 = 0
  let by1 = 0
  i = 0
  for (; i + 2 <= m; i += 2) {
    const d0 = b[i]! - mb
    const d1 = b[i + 1]! - mb
    bb0 += d0 * d0
    bb1 += d1 * d1
    by0 += d0 * (v[i]! - my)
    by1 += d1 * (v[i + 1]! - my)
  }
  let sbb = bb0 + bb1
  let sby = by0 + by1
  if (i < m) {
    const d = b[i]! - mb
    sbb += d * d
    sby += d * (v[i]! - my)
  }
  if (!(sbb > 1e-300)) return Infinity
  const a = sby / sbb
  const c = my - a * mb
  let s0 = 0
  let s1 = 0
  i = 0
  for (; i + 2 <= m; i += 2) {
    const r0 = v[i]! - c - a * b[i]!
    const r1 = v[i + 1]! - c - a * b[i + 1]!
    s0 += r0 * r0
    s1 += r1 * r1
  }
  let sse = s0 + s1
  if (i < m) {
    const r = v[i]! - c - a * b[i]!
    sse += r * r
  }
  out[0] = c
  out[1] = a
  return sse
}

const plateauSse = (v: Float64Array, t: Float64Array, m: number, k: number, basis: Float64Array, out: Float64Array): number => {
  for (let i = 0; i < m; i++) basis[i] = expK(-k * t[i]!)
  return basisSse(v, basis, m, out)
}

const logisticSse = (v: Float64Array, t: Float64Array, m: number, k: number, t0: number, basis: Float64Array, out: Float64Array): number => {
  for (let i = 0; i < m; i++) basis[i] = 1 / (1 + expK(k * (t[i]! - t0)))
  return basisSse(v, basis, m, out)
}

/** The logistic's Nelder–Mead search: the largest k tried, and its stopping rule (as the WASM kernel's). */
const LOGISTIC_K_MAX = 20
const LOGISTIC_K_MIN = 1e-4
const NM_MAX_STEPS = 500
const NM_MAX_RESTARTS = 5
const NM_SSE_TOLERANCE = 1e-12
const NM_SIZE_TOLERANCE = 1e-9

/** The SSE of decay (2) or plateau (3) with k = x (as the WASM kernel's kindSse). */
const kindSse = (kind: number, v: Float64Array, t: Float64Array, m: number, x: number, basis: Float64Array, out: Float64Array): number =>
  kind === 2 ? decaySse(v, t, m, x, out) : plateauSse(v, t, m, x, basis, out)

/** k and t0 clamped into the logistic's domain LOGISTIC_K_MIN ≤ k ≤ LOGISTIC_K_MAX, tLo ≤ t0 ≤ tHi. */
const clampK = (k: number): number => (k < LOGISTIC_K_MIN ? LOGISTIC_K_MIN : k > LOGISTIC_K_MAX ? LOGISTIC_K_MAX : k)
const clampT = (t0: number, tLo: number, tHi: number): number => (t0 < tLo ? tLo : t0 > tHi ? tHi : t0)

/**
 * Nelder–Mead minimisation of the logistic's SSE over (k, t0) (Lagarias, Reeds, Wright & Wright,
 * SIAM J Optim 1998;9:112: reflection 1, expansion 2, contractions ½, shrink ½), from (k, t0) with
 * the simplex (k, t0), (k + dk, t0), (k, t0 + dt). A run stops when the vertices' SSEs agree to
 * NM_SSE_TOLERANCE (relative, plus 1e-20) and the simplex is within NM_SIZE_TOLERANCE (relative to
 * 1 + |coordinate|) of its best vertex, or after NM_MAX_STEPS steps; it is restarted from its best
 * vertex with the first simplex's size while a run lowers the SSE by more than NM_SSE_TOLERANCE
 * (relative), at most NM_MAX_RESTARTS times — restarting is the usual remedy for a simplex that
 * collapsed early. Writes the best (k, t0, SSE) to best.
 */
const logisticNelderMead = (
  v: Float64Array, t: Float64Array, m: number, k: number, t0: number, dk: number, dt: number, tLo: number, tHi: number,
  basis: Float64Array, out: Float64Array, best: Float64Array
): void => {
  // Outside the domain a vertex takes the SSE of its nearest point inside (projection), so the
  // simplex can settle on a bound.
  const f = (kk: number, tt: number) => logisticSse(v, t, m, clampK(kk), clampT(tt, tLo, tHi), basis, out)
  let bk = k
  let bt = t0
  let bf = f(k, t0)
  for (let run = 0; run <= NM_MAX_RESTARTS; run++) {
    // Vertices a (best), c, e (worst) after each ordering.
    let ak = bk
    let at = bt
    let af = bf
    let ck = bk + dk
    let ct = bt
    let cf = f(ck, ct)
    let ek = bk
    let et = bt + dt
    let ef = f(ek, et)
    for (let step = 0; step < NM_MAX_STEPS; step++) {
      if (cf < af) {
        let x = ak; ak = ck; ck = x
        x = at; at = ct; ct = x
        x = af; af = cf; cf = x
      }
      if (ef < cf) {
        let x = ck; ck = ek; ek = x
        x = ct; ct = et; et = x
        x = cf; cf = ef; ef = x
        if (cf < af) {
          x = ak; ak = ck; ck = x
          x = at; at = ct; ct = x
          x = af; af = cf; cf = x
        }
      }
      const flat = ef - af <= NM_SSE_TOLERANCE * af + 1e-20
      const small = Math.abs(ck - ak) <= NM_SIZE_TOLERANCE * (1 + ak) && Math.abs(ek - ak) <= NM_SIZE_TOLERANCE * (1 + ak) &&
        Math.abs(ct - at) <= NM_SIZE_TOLERANCE * (1 + Math.abs(at)) && Math.abs(et - at) <= NM_SIZE_TOLERANCE * (1 + Math.abs(at))
      if (flat || small) break
      const ok = 0.5 * (ak + ck)
      const ot = 0.5 * (at + ct)
      const rk = ok + (ok - ek)
      const rt = ot + (ot - et)
      const rf = f(rk, rt)
      if (rf < af) {
        const xk = ok + 2 * (ok - ek)
        const xt = ot + 2 * (ot - et)
        const xf = f(xk, xt)
        if (xf < rf) {
          ek = xk; et = xt; ef = xf
        } else {
          ek = rk; et = rt; ef = rf
        }
        continue
      }
      if (rf < cf) {
        ek = rk; et = rt; ef = rf
        continue
      }
      const outside = rf < ef
      const qk = outside ? ok + 0.5 * (rk - ok) : ok + 0.5 * (ek - ok)
      const qt = outside ? ot + 0.5 * (rt - ot) : ot + 0.5 * (et - ot)
      const qf = f(qk, qt)
      if (outside ? qf <= rf : qf < ef) {
        ek = qk; et = qt; ef = qf
        continue
      }
      ck = ak + 0.5 * (ck - ak); ct = at + 0.5 * (ct - at); cf = f(ck, ct)
      ek = ak + 0.5 * (ek - ak); et = at + 0.5 * (et - at); ef = f(ek, et)
    }
    if (cf < af) {
      ak = ck; at = ct; af = cf
    }
    if (ef < af) {
      ak = ek; at = et; af = ef
    }
    const improved = af < bf - NM_SSE_TOLERANCE * bf
    if (af < bf) {
      bk = ak; bt = at; bf = af
    }
    if (!improved) break
  }
  best[0] = clampK(bk)
  best[1] = clampT(bt, tLo, tHi)
  best[2] = bf
}

/** Golden-section minimum of {@link kindSse} on [lo, hi] in `steps` steps (as the WASM kernel's goldenMin). */
const goldenMin = (kind: number, v: Float64Array, t: Float64Array, m: number, lo: number, hi: number, steps: number, basis: Float64Array, out: Float64Array): number => {
  let a = lo
  let b = hi
  let c = b - GOLDEN * (b - a)
  let d = a + GOLDEN * (b - a)
  let fc = kindSse(kind, v, t, m, c, basis, out)
  let fd = kindSse(kind, v, t, m, d, basis, out)
  for (let it = 0; it < steps; it++) {
    if (fc < fd) {
      b = d
      d = c
      fd = fc
      c = b - GOLDEN * (b - a)
      fc = kindSse(kind, v, t, m, c, basis, out)
    } else {
      a = c
      c = d
      fc = fd
      d = a + GOLDEN * (b - a)
      fd = kindSse(kind, v, t, m, d, basis, out)
    }
  }
  return 0.5 * (a + b)
}

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
  const tmp = new Float64Array(2)
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
    for (let kind = 2; kind <= 3; kind++) {
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
        sses[kind] = eBest
        if (kind === 2) {
          params[8] = tmp[0]!
          params[9] = kBest
        } else {
          params[12] = tmp[0]!
          params[13] = tmp[1]!
          params[14] = kBest
        }
      } else sses[kind] = Infinity
    }
    // logistic: grid over k and t0; then (as in the WASM kernel) Nelder–Mead from the best grid point
    // of each k row, one grid cell wide, over 0 < k ≤ LOGISTIC_K_MAX and t0 within the span ± the span.
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
        logisticNelderMead(v, t, m, lk, rowT0, lk * (LK_RATIO - 1), t0Step, t[0]! - span, t[m - 1]! + span, basis, tmp, found)
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
      logisticNelderMead(v, t, m, LOGISTIC_K_MAX, stepT0, LOGISTIC_K_MAX * (1 / LK_RATIO - 1), t0Step, t[0]! - span, t[m - 1]! + span, basis, tmp, found)
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
