// Trajectory kernels: fit five models to each series, select by AICc, predict with an approximate
// 95 % prediction interval. Twin: src/kernels/reference/trajectory.ts (same constants and order).
//   0 stable               y = c                                  (1 parameter)
//   1 linear               y = a + b·t                            (2)
//   2 exponential_decay    y = A·e^(−k·t)                         (2)
//   3 exponential_plateau  y = c + A·e^(−k·t) = c + (y0 − c)·e^(−k·t)   (3)
//   4 logistic             y = d + B / (1 + e^(k·(t − t0)))       (4)
// Given k (and t0) the exponential models are linear in their other parameters, so each is solved
// exactly by least squares on a geometric k grid, then k is refined by golden-section search
// around the best grid point (logistic: a grid over k and t0, then Nelder–Mead). Missing points (NaN) are skipped; t is
// the point's index. AICc = m·ln(max(SSE, m·1e-10)/m) + 2p + 2p(p+1)/(m−p−1), defined for m ≥ p+2.
import { getF, setF, compact, expK, expK2, expK2neg, hsum } from "./common"

const K_GRID_START: f64 = 0.01
const K_GRID_RATIO: f64 = 1.1193298485718235
const K_GRID_N: i32 = 48
const LK_START: f64 = 0.05
const LK_RATIO: f64 = 1.450942205090469
const LK_N: i32 = 12
const LT_N: i32 = 20
const GOLDEN: f64 = 0.6180339887498949
const GOLDEN_STEPS: i32 = 40
const SSE_FLOOR: f64 = 1e-10

// Two-slot result of the linear sub-fits (c or A, then A).
let out0: f64 = 0.0
let out1: f64 = 0.0

// The least-squares loops below run on two lanes (even and odd points) with expK2, summing each
// lane apart and adding the lanes at the end, then the odd tail; the twin sums in the same order.

// decaySse keeps each point's e^(−k·t) from its first pass in `basis` and reuses it in the second
// (the twin recomputes it: same inputs, same function, so the same values).
function decaySse(v: usize, t: usize, m: i32, k: f64, basis: usize): f64 {
  const vk = f64x2.splat(-k)
  let vye = f64x2.splat(0.0)
  let vee = f64x2.splat(0.0)
  let i = 0
  for (; i + 2 <= m; i += 2) {
    const e = expK2neg(f64x2.mul(vk, v128.load(t + (<usize>i << 3))))
    v128.store(basis + (<usize>i << 3), e)
    vye = f64x2.add(vye, f64x2.mul(v128.load(v + (<usize>i << 3)), e))
    vee = f64x2.add(vee, f64x2.mul(e, e))
  }
  let sye = hsum(vye)
  let see = hsum(vee)
  if (i < m) {
    const e = expK(-k * getF(t, i))
    setF(basis, i, e)
    sye += getF(v, i) * e
    see += e * e
  }
  if (!(see > 0.0)) return Infinity
  const a = sye / see
  const va = f64x2.splat(a)
  let vss = f64x2.splat(0.0)
  i = 0
  for (; i + 2 <= m; i += 2) {
    const r = f64x2.sub(v128.load(v + (<usize>i << 3)), f64x2.mul(va, v128.load(basis + (<usize>i << 3))))
    vss = f64x2.add(vss, f64x2.mul(r, r))
  }
  let sse = hsum(vss)
  if (i < m) {
    const r = getF(v, i) - a * getF(basis, i)
    sse += r * r
  }
  out0 = a
  return sse
}

function basisSse(v: usize, b: usize, m: i32): f64 {
  let vb = f64x2.splat(0.0)
  let vy = f64x2.splat(0.0)
  let i = 0
  for (; i + 2 <= m; i += 2) {
    vb = f64x2.add(vb, v128.load(b + (<usize>i << 3)))
    vy = f64x2.add(vy, v128.load(v + (<usize>i << 3)))
  }
  let sb = hsum(vb)
  let sy = hsum(vy)
  if (i < m) {
    sb += getF(b, i)
    sy += getF(v, i)
  }
  const mb = sb / <f64>m
  const my = sy / <f64>m
  const vmb = f64x2.splat(mb)
  const vmy = f64x2.splat(my)
  let vbb = f64x2.splat(0.0)
  let vby = f64x2.splat(0.0)
  i = 0
  for (; i + 2 <= m; i += 2) {
    const db = f64x2.sub(v128.load(b + (<usize>i << 3)), vmb)
    vbb = f64x2.add(vbb, f64x2.mul(db, db))
    vby = f64x2.add(vby, f64x2.mul(db, f64x2.sub(v128.load(v + (<usize>i << 3)), vmy)))
  }
  let sbb = hsum(vbb)
  let sby = hsum(vby)
  if (i < m) {
    const db = getF(b, i) - mb
    sbb += db * db
    sby += db * (getF(v, i) - my)
  }
  if (!(sbb > 1e-300)) return Infinity
  const a = sby / sbb
  const c = my - a * mb
  const va = f64x2.splat(a)
  const vc = f64x2.splat(c)
  let vss = f64x2.splat(0.0)
  i = 0
  for (; i + 2 <= m; i += 2) {
    const r = f64x2.sub(f64x2.sub(v128.load(v + (<usize>i << 3)), vc), f64x2.mul(va, v128.load(b + (<usize>i << 3))))
    vss = f64x2.add(vss, f64x2.mul(r, r))
  }
  let sse = hsum(vss)
  if (i < m) {
    const r = getF(v, i) - c - a * getF(b, i)
    sse += r * r
  }
  out0 = c
  out1 = a
  return sse
}

function plateauSse(v: usize, t: usize, m: i32, k: f64, basis: usize): f64 {
  const vk = f64x2.splat(-k)
  let i = 0
  for (; i + 2 <= m; i += 2) v128.store(basis + (<usize>i << 3), expK2neg(f64x2.mul(vk, v128.load(t + (<usize>i << 3)))))
  if (i < m) setF(basis, i, expK(-k * getF(t, i)))
  return basisSse(v, basis, m)
}

function logisticSse(v: usize, t: usize, m: i32, k: f64, t0: f64, basis: usize): f64 {
  const vk = f64x2.splat(k)
  const vt0 = f64x2.splat(t0)
  const one = f64x2.splat(1.0)
  let i = 0
  for (; i + 2 <= m; i += 2) {
    const e = expK2(f64x2.mul(vk, f64x2.sub(v128.load(t + (<usize>i << 3)), vt0)))
    v128.store(basis + (<usize>i << 3), f64x2.div(one, f64x2.add(one, e)))
  }
  if (i < m) setF(basis, i, 1.0 / (1.0 + expK(k * (getF(t, i) - t0))))
  return basisSse(v, basis, m)
}

@inline function kindSse(kind: i32, v: usize, t: usize, m: i32, k: f64, basis: usize): f64 {
  return kind == 2 ? decaySse(v, t, m, k, basis) : plateauSse(v, t, m, k, basis)
}

// The logistic's Nelder–Mead search (see logisticNelderMead): its domain and stopping rule.
const LOGISTIC_K_MAX: f64 = 20.0
const LOGISTIC_K_MIN: f64 = 1e-4
const NM_MAX_STEPS: i32 = 500
const NM_MAX_RESTARTS: i32 = 5
const NM_SSE_TOLERANCE: f64 = 1e-12
const NM_SIZE_TOLERANCE: f64 = 1e-9

@inline function clampK(k: f64): f64 {
  return k < LOGISTIC_K_MIN ? LOGISTIC_K_MIN : k > LOGISTIC_K_MAX ? LOGISTIC_K_MAX : k
}

@inline function clampT(t0: f64, tLo: f64, tHi: f64): f64 {
  return t0 < tLo ? tLo : t0 > tHi ? tHi : t0
}

// Result of logisticNelderMead: k, t0 and the SSE.
let nmK: f64 = 0.0
let nmT: f64 = 0.0
let nmF: f64 = 0.0

/**
 * Nelder–Mead minimisation of the logistic's SSE over (k, t0) (Lagarias, Reeds, Wright & Wright,
 * SIAM J Optim 1998;9:112: reflection 1, expansion 2, contractions ½, shrink ½), from (k, t0) with
 * the simplex (k, t0), (k + dk, t0), (k, t0 + dt); a vertex outside the domain takes the SSE of
 * its nearest point inside. A run stops when the vertices' SSEs agree to NM_SSE_TOLERANCE
 * (relative, plus 1e-20) and the simplex is within NM_SIZE_TOLERANCE (relative to 1 + |coordinate|)
 * of its best vertex, or after NM_MAX_STEPS steps; it is restarted from its best vertex with the
 * first simplex's size while a run lowers the SSE by more than NM_SSE_TOLERANCE (relative), at most
 * NM_MAX_RESTARTS times. The twin runs the same arithmetic in the same order.
 */
function logisticNelderMead(v: usize, t: usize, m: i32, k: f64, t0: f64, dk: f64, dt: f64, tLo: f64, tHi: f64, basis: usize): void {
  let bk = k
  let bt = t0
  let bf = logisticSse(v, t, m, clampK(k), clampT(t0, tLo, tHi), basis)
  for (let run = 0; run <= NM_MAX_RESTARTS; run++) {
    let ak = bk
    let at = bt
    let af = bf
    let ck = bk + dk
    let ct = bt
    let cf = logisticSse(v, t, m, clampK(ck), clampT(ct, tLo, tHi), basis)
    let ek = bk
    let et = bt + dt
    let ef = logisticSse(v, t, m, clampK(ek), clampT(et, tLo, tHi), basis)
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
      const rf = logisticSse(v, t, m, clampK(rk), clampT(rt, tLo, tHi), basis)
      if (rf < af) {
        const xk = ok + 2 * (ok - ek)
        const xt = ot + 2 * (ot - et)
        const xf = logisticSse(v, t, m, clampK(xk), clampT(xt, tLo, tHi), basis)
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
      const qf = logisticSse(v, t, m, clampK(qk), clampT(qt, tLo, tHi), basis)
      if (outside ? qf <= rf : qf < ef) {
        ek = qk; et = qt; ef = qf
        continue
      }
      ck = ak + 0.5 * (ck - ak); ct = at + 0.5 * (ct - at); cf = logisticSse(v, t, m, clampK(ck), clampT(ct, tLo, tHi), basis)
      ek = ak + 0.5 * (ek - ak); et = at + 0.5 * (et - at); ef = logisticSse(v, t, m, clampK(ek), clampT(et, tLo, tHi), basis)
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
  nmK = clampK(bk)
  nmT = clampT(bt, tLo, tHi)
  nmF = bf
}

/** Golden-section minimum of {@link kindSse} (decay or plateau, k = x) on [lo, hi] in `steps` steps. */
function goldenMin(kind: i32, v: usize, t: usize, m: i32, lo: f64, hi: f64, steps: i32, basis: usize): f64 {
  let a = lo
  let b = hi
  let c = b - GOLDEN * (b - a)
  let d = a + GOLDEN * (b - a)
  let fc = kindSse(kind, v, t, m, c, basis)
  let fd = kindSse(kind, v, t, m, d, basis)
  for (let it = 0; it < steps; it++) {
    if (fc < fd) {
      b = d
      d = c
      fd = fc
      c = b - GOLDEN * (b - a)
      fc = kindSse(kind, v, t, m, c, basis)
    } else {
      a = c
      c = d
      fc = fd
      d = a + GOLDEN * (b - a)
      fd = kindSse(kind, v, t, m, d, basis)
    }
  }
  return 0.5 * (a + b)
}

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
    // logistic: grid over k and t0; then Nelder–Mead from the best grid point of each k row, one
    // grid cell wide, and from the best step between consecutive points (k = LOGISTIC_K_MAX, t0
    // midway), over the domain with t0 within the span ± the span; the lowest SSE wins.
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
        logisticNelderMead(v, t, m, lk, rowT0, lk * (LK_RATIO - 1), t0Step, tLo, tHi, basis)
        if (nmF < bestL) {
          bestL = nmF
          setF(params, 18, nmK)
          setF(params, 19, nmT)
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
      logisticNelderMead(v, t, m, LOGISTIC_K_MAX, stepT0, LOGISTIC_K_MAX * (1 / LK_RATIO - 1), t0Step, tLo, tHi, basis)
      if (nmF < bestL) {
        bestL = nmF
        setF(params, 18, nmK)
        setF(params, 19, nmT)
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
