// The least-squares fits of the trajectory models (trajectory.ts): each model's SSE given its
// nonlinear parameters (the linear ones solved exactly), the golden-section refinement of k and the
// logistic's Levenberg–Marquardt refinement. Twin: src/kernels/reference/trajectoryFits.ts (same order of sums).
import { expK, expK2, expK2neg, getF, hsum, setF } from "./common"

const GOLDEN: f64 = 0.6180339887498949

// Two-slot result of the linear sub-fits (c or A, then A).
export let out0: f64 = 0.0
export let out1: f64 = 0.0

// The least-squares loops below run on two lanes (even and odd points) with expK2, summing each
// lane apart and adding the lanes at the end, then the odd tail; the twin sums in the same order.

// decaySse keeps each point's e^(−k·t) from its first pass in `basis` and reuses it in the second
// (the twin recomputes it: same inputs, same function, so the same values).
export function decaySse(v: usize, t: usize, m: i32, k: f64, basis: usize): f64 {
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

export function basisSse(v: usize, b: usize, m: i32): f64 {
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

export function plateauSse(v: usize, t: usize, m: i32, k: f64, basis: usize): f64 {
  const vk = f64x2.splat(-k)
  let i = 0
  for (; i + 2 <= m; i += 2) v128.store(basis + (<usize>i << 3), expK2neg(f64x2.mul(vk, v128.load(t + (<usize>i << 3)))))
  if (i < m) setF(basis, i, expK(-k * getF(t, i)))
  return basisSse(v, basis, m)
}

// Set by logisticSse: the fit on the basis it left in `basis` (b, or 1 − b when t0 lies past the
// middle of the series): y ≈ lgC + lgA·basis.
export let lgC: f64 = 0.0
export let lgA: f64 = 0.0
// Set by logisticSse: which levels its fit holds at a bound (1: the one at basis = 0, 2: the one
// at basis = 1, 3: both, 0: none).
export let lgHeld: i32 = 0

// The logistic's asymptotes stay on the score's scale: d and d + B within [LEVEL_MIN, LEVEL_MAX]
// (a logistic whose asymptote lies off the scale is an exponential in disguise).
export const LOGISTIC_LEVEL_MIN: f64 = 0.0
export const LOGISTIC_LEVEL_MAX: f64 = 10.0

@inline function clampLevel(x: f64): f64 {
  return x < LOGISTIC_LEVEL_MIN ? LOGISTIC_LEVEL_MIN : x > LOGISTIC_LEVEL_MAX ? LOGISTIC_LEVEL_MAX : x
}

// Σ (y − a0 − (a1 − a0)·β)², point by point in index order.
function levelsSse(v: usize, basis: usize, m: i32, a0: f64, a1: f64): f64 {
  const q = a1 - a0
  let sse: f64 = 0.0
  for (let i = 0; i < m; i++) {
    const r = getF(v, i) - a0 - q * getF(basis, i)
    sse += r * r
  }
  return sse
}

/**
 * The least squares of y ≈ a0·(1 − β) + a1·β with a0 and a1 within the levels' bounds, given the
 * unconstrained fit c + A·β (out0, out1) and its SSE: that fit when its levels (c, c + A) are
 * within them; else the best of the box's four edges (the constrained optimum of a 2-variable
 * convex problem whose unconstrained one lies outside lies on the boundary), each edge's level
 * held at its bound and the other solved in closed form, then clamped. Leaves c and A of the fit
 * kept in out0, out1 and the levels it holds in lgHeld; returns its SSE. Sums point by point in
 * index order, as the twin's.
 */
function boxedLevels(v: usize, basis: usize, m: i32, sse: f64): f64 {
  const c = out0
  const a1 = c + out1
  lgHeld = 0
  if (!(sse < Infinity) || (c >= LOGISTIC_LEVEL_MIN && c <= LOGISTIC_LEVEL_MAX && a1 >= LOGISTIC_LEVEL_MIN && a1 <= LOGISTIC_LEVEL_MAX)) return sse
  let bestSse: f64 = Infinity
  let b0: f64 = 0.0
  let b1: f64 = 0.0
  let held: i32 = 0
  for (let edge = 0; edge < 4; edge++) {
    const bound = (edge & 1) == 0 ? LOGISTIC_LEVEL_MIN : LOGISTIC_LEVEL_MAX
    let num: f64 = 0.0
    let den: f64 = 0.0
    if (edge < 2) {
      for (let i = 0; i < m; i++) {
        const x = getF(basis, i)
        num += x * (getF(v, i) - bound)
        den += x * x
      }
    } else {
      for (let i = 0; i < m; i++) {
        const x = 1.0 - getF(basis, i)
        num += x * (getF(v, i) - bound * getF(basis, i))
        den += x * x
      }
    }
    const solved = den > 1e-300 ? (edge < 2 ? bound + num / den : num / den) : bound
    const free = clampLevel(solved)
    const e0 = edge < 2 ? bound : free
    const e1 = edge < 2 ? free : bound
    const e = levelsSse(v, basis, m, e0, e1)
    if (e < bestSse) {
      bestSse = e
      b0 = e0
      b1 = e1
      held = free == solved ? (edge < 2 ? 1 : 2) : 3
    }
  }
  out0 = b0
  out1 = b1 - b0
  lgHeld = held
  return bestSse
}

/**
 * The logistic's SSE at (k, t0) with its best d and B (written to out0, out1), its asymptotes held
 * to the score's scale (boxedLevels). The fit is the same on the basis b = 1/(1 + e^(k(t − t0)))
 * or on 1 − b = 1/(1 + e^(−k(t − t0))) (an intercept is fitted): when t0 lies past the middle of
 * the series most b are near 1, where b − mean(b) cancels catastrophically (b = 1 − 10⁻¹⁵ keeps
 * one digit), so the basis used there is 1 − b, which is near 0 with full relative precision; then
 * d = c + A and B = −A.
 */
export function logisticSse(v: usize, t: usize, m: i32, k: f64, t0: f64, basis: usize): f64 {
  const flip = t0 > 0.5 * (getF(t, 0) + getF(t, m - 1))
  const kk = flip ? -k : k
  const vk = f64x2.splat(kk)
  const vt0 = f64x2.splat(t0)
  const one = f64x2.splat(1.0)
  let i = 0
  for (; i + 2 <= m; i += 2) {
    const e = expK2(f64x2.mul(vk, f64x2.sub(v128.load(t + (<usize>i << 3)), vt0)))
    v128.store(basis + (<usize>i << 3), f64x2.div(one, f64x2.add(one, e)))
  }
  if (i < m) setF(basis, i, 1.0 / (1.0 + expK(kk * (getF(t, i) - t0))))
  const sse = boxedLevels(v, basis, m, basisSse(v, basis, m))
  lgC = out0
  lgA = out1
  if (flip) {
    out0 = lgC + lgA
    out1 = -lgA
  }
  return sse
}

@inline export function kindSse(kind: i32, v: usize, t: usize, m: i32, k: f64, basis: usize): f64 {
  return kind == 2 ? decaySse(v, t, m, k, basis) : plateauSse(v, t, m, k, basis)
}

// The logistic's domain: 0 < k ≤ LOGISTIC_K_MAX (t0's bounds are the caller's).
export const LOGISTIC_K_MAX: f64 = 20.0
const LOGISTIC_K_MIN: f64 = 1e-4

@inline function clampK(k: f64): f64 {
  return k < LOGISTIC_K_MIN ? LOGISTIC_K_MIN : k > LOGISTIC_K_MAX ? LOGISTIC_K_MAX : k
}

@inline function clampT(t0: f64, tLo: f64, tHi: f64): f64 {
  return t0 < tLo ? tLo : t0 > tHi ? tHi : t0
}

// Result of logisticRefine: k, t0 and the SSE.
export let lmK: f64 = 0.0
export let lmT: f64 = 0.0
export let lmF: f64 = 0.0

// The logistic's Levenberg–Marquardt refinement (see logisticRefine): its stopping rule.
const LM_MAX_STEPS: i32 = 200
const LM_LAMBDA_START: f64 = 1e-3
const LM_LAMBDA_MAX: f64 = 1e12
const LM_SSE_TOLERANCE: f64 = 1e-13

/**
 * Levenberg–Marquardt minimisation of the logistic's SSE over (k, t0) by variable projection
 * (Golub & Pereyra, SIAM J Numer Anal 1973;10:413): d and B are solved exactly at every (k, t0)
 * (logisticSse, their levels on the scale), and the step for (k, t0) comes from the residual's
 * derivatives with d and B held, projected off the span of the free levels' columns (Kaufman's
 * approximation, BIT 1975;15:49; [1, b] when no level is held at a bound), damped by λ on the
 * diagonal (Marquardt's scaling). A trial point outside the domain is clamped into it; a trial
 * that does not lower the SSE raises λ tenfold, one that does lowers it tenfold. Stops when an
 * accepted step lowers the SSE by no more than LM_SSE_TOLERANCE (relative, plus 1e-20), when λ
 * passes LM_LAMBDA_MAX, or after LM_MAX_STEPS steps. Sums run point by point in index order; the
 * twin runs the same arithmetic in the same order. Writes (k, t0, SSE) to lmK, lmT, lmF; leaves
 * `basis` at an unspecified point.
 */
export function logisticRefine(v: usize, t: usize, m: i32, k: f64, t0: f64, tLo: f64, tHi: f64, basis: usize): void {
  let ck = clampK(k)
  let ct = clampT(t0, tLo, tHi)
  let f = logisticSse(v, t, m, ck, ct, basis)
  let lambda = LM_LAMBDA_START
  for (let step = 0; step < LM_MAX_STEPS && f < Infinity; step++) {
    const c = lgC
    const a = lgA
    const bb = out1
    const held = lgHeld
    let sb: f64 = 0.0
    for (let i = 0; i < m; i++) sb += getF(basis, i)
    const mb = sb / <f64>m
    // Columns of the residual's derivatives: ∂r/∂k = B·b(1−b)·(t − t0), ∂r/∂t0 = −B·b(1−b)·k
    // (the basis left is b or 1 − b: b(1−b) is the same, and so is the span projected off).
    // One pass: the columns' sums, cross products with the centred basis, with the free level's
    // column x and with the residual; the projection off the span of the free levels' columns then
    // follows in closed form: off [1, b] when no level is held (Σ(g − ḡ − p·db)² = Σg² − m·ḡ² −
    // p·Σg·db), off x alone when one is (x = b when the level at b = 0 is held, else 1 − b),
    // nothing when both are.
    let sk: f64 = 0.0
    let st: f64 = 0.0
    let skb: f64 = 0.0
    let stb: f64 = 0.0
    let sbb: f64 = 0.0
    let skk: f64 = 0.0
    let skt: f64 = 0.0
    let stt: f64 = 0.0
    let g1: f64 = 0.0
    let g2: f64 = 0.0
    let skx: f64 = 0.0
    let stx: f64 = 0.0
    let sxx: f64 = 0.0
    for (let i = 0; i < m; i++) {
      const b = getF(basis, i)
      const w = bb * b * (1.0 - b)
      const gk = w * (getF(t, i) - ct)
      const gt = -w * ck
      const db = b - mb
      const r = getF(v, i) - c - a * b
      const x = held == 1 ? b : 1.0 - b
      sk += gk
      st += gt
      skb += gk * db
      stb += gt * db
      sbb += db * db
      skk += gk * gk
      skt += gk * gt
      stt += gt * gt
      g1 += gk * r
      g2 += gt * r
      skx += gk * x
      stx += gt * x
      sxx += x * x
    }
    const pk = sbb > 1e-300 ? skb / sbb : 0.0
    const pt = sbb > 1e-300 ? stb / sbb : 0.0
    const qk = sxx > 1e-300 ? skx / sxx : 0.0
    const qt = sxx > 1e-300 ? stx / sxx : 0.0
    const a11 = held == 0 ? skk - sk * sk / <f64>m - pk * skb : held == 3 ? skk : skk - qk * skx
    const a12 = held == 0 ? skt - sk * st / <f64>m - pk * stb : held == 3 ? skt : skt - qk * stx
    const a22 = held == 0 ? stt - st * st / <f64>m - pt * stb : held == 3 ? stt : stt - qt * stx
    // A parameter on a bound of the domain that the descent would push across is held there
    // (an active set): the step is taken in the other alone; both held is a constrained minimum.
    const holdK = (ck <= LOGISTIC_K_MIN && g1 > 0.0) || (ck >= LOGISTIC_K_MAX && g1 < 0.0)
    const holdT = (ct <= tLo && g2 > 0.0) || (ct >= tHi && g2 < 0.0)
    if (holdK && holdT) break
    // Trials at rising λ until one lowers the SSE (the derivatives above stay those of (ck, ct)).
    let accepted = false
    let converged = false
    while (lambda <= LM_LAMBDA_MAX) {
      const h11 = a11 + lambda * (a11 > 1e-300 ? a11 : 1e-300)
      const h22 = a22 + lambda * (a22 > 1e-300 ? a22 : 1e-300)
      const det = h11 * h22 - a12 * a12
      // The step δ solves (JᵀJ + λ·diag) δ = −Jᵀr; r decreases along −J δ, so δ = −H⁻¹ Jᵀ r.
      const dk = holdK ? 0.0 : holdT ? -g1 / h11 : det > 0.0 ? -(h22 * g1 - a12 * g2) / det : 0.0
      const dt = holdT ? 0.0 : holdK ? -g2 / h22 : det > 0.0 ? -(h11 * g2 - a12 * g1) / det : 0.0
      const nk = clampK(ck + dk)
      const nt = clampT(ct + dt, tLo, tHi)
      if (nk == ck && nt == ct) {
        converged = true
        break
      }
      const nf = logisticSse(v, t, m, nk, nt, basis)
      if (nf < f) {
        converged = f - nf <= LM_SSE_TOLERANCE * f + 1e-20
        ck = nk
        ct = nt
        f = nf
        lambda = lambda * 0.1 < 1e-12 ? 1e-12 : lambda * 0.1
        accepted = true
        break
      }
      lambda *= 10.0
    }
    if (converged || !accepted) break
  }
  lmK = ck
  lmT = ct
  lmF = f
}

/** Golden-section minimum of {@link kindSse} (decay or plateau, k = x) on [lo, hi] in `steps` steps. */
export function goldenMin(kind: i32, v: usize, t: usize, m: i32, lo: f64, hi: f64, steps: i32, basis: usize): f64 {
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
