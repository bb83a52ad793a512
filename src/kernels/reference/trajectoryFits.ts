/**
 * Twin of assembly/kernels/trajectory-fits.ts: the least-squares fits of the trajectory models
 * (trajectory.ts), each model's SSE given its nonlinear parameters (the linear ones solved
 * exactly), the golden-section refinement of k and the logistic's Levenberg–Marquardt refinement.
 */
import { expK } from "./common.ts"

const GOLDEN = 0.6180339887498949

// Sums in the WASM core's lane order: even and odd points apart, added at the end, then the odd
// tail (the core runs these loops on two SIMD lanes), so both twins give bit-identical fits.

/** SSE of y ≈ A·e(k,t) with the best A; writes A to out[0]. */
export const decaySse = (v: Float64Array, t: Float64Array, m: number, k: number, out: Float64Array): number => {
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
export const basisSse = (v: Float64Array, b: Float64Array, m: number, out: Float64Array): number => {
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

export const plateauSse = (v: Float64Array, t: Float64Array, m: number, k: number, basis: Float64Array, out: Float64Array): number => {
  for (let i = 0; i < m; i++) basis[i] = expK(-k * t[i]!)
  return basisSse(v, basis, m, out)
}

/**
 * The logistic's asymptotes stay on the score's scale: d (the level as t grows) and d + B (before
 * the drop or rise) within [LOGISTIC_LEVEL_MIN, LOGISTIC_LEVEL_MAX]. A logistic whose asymptote
 * lies off the scale is an exponential in disguise (its far tail through the points), and its
 * forecast runs off the scale with it.
 */
export const LOGISTIC_LEVEL_MIN = 0
export const LOGISTIC_LEVEL_MAX = 10

const clampLevel = (x: number): number => (x < LOGISTIC_LEVEL_MIN ? LOGISTIC_LEVEL_MIN : x > LOGISTIC_LEVEL_MAX ? LOGISTIC_LEVEL_MAX : x)

/** Σ (y − a0 − (a1 − a0)·β)², point by point in index order (as the WASM kernel's levelsSse). */
const levelsSse = (v: Float64Array, basis: Float64Array, m: number, a0: number, a1: number): number => {
  const q = a1 - a0
  let sse = 0
  for (let i = 0; i < m; i++) {
    const r = v[i]! - a0 - q * basis[i]!
    sse += r * r
  }
  return sse
}

/**
 * The least squares of y ≈ a0·(1 − β) + a1·β with a0 and a1 within the levels' bounds, given the
 * unconstrained fit c + A·β (out[0], out[1]) and its SSE: that fit when its levels (c, c + A) are
 * within them; else the best of the four edges of the box (a 2-variable convex problem whose
 * unconstrained optimum lies outside the box has its constrained one on the box's boundary), each
 * edge's level held at its bound and the other solved in closed form, then clamped. Writes c and A
 * of the fit kept to out[0], out[1] and which levels it holds at a bound to out[4] (1: the level
 * at β = 0, 2: the one at β = 1, 3: both; 0: none); returns its SSE (as the WASM kernel's boxedLevels).
 */
const boxedLevels = (v: Float64Array, basis: Float64Array, m: number, sse: number, out: Float64Array): number => {
  const c = out[0]!
  const a1 = c + out[1]!
  out[4] = 0
  if (!(sse < Infinity) || (c >= LOGISTIC_LEVEL_MIN && c <= LOGISTIC_LEVEL_MAX && a1 >= LOGISTIC_LEVEL_MIN && a1 <= LOGISTIC_LEVEL_MAX)) return sse
  let bestSse = Infinity
  let b0 = 0
  let b1 = 0
  let held = 0
  for (let edge = 0; edge < 4; edge++) {
    const bound = (edge & 1) === 0 ? LOGISTIC_LEVEL_MIN : LOGISTIC_LEVEL_MAX
    let num = 0
    let den = 0
    if (edge < 2) {
      // a0 held: y − a0 ≈ (a1 − a0)·β
      for (let i = 0; i < m; i++) {
        const x = basis[i]!
        num += x * (v[i]! - bound)
        den += x * x
      }
    } else {
      // a1 held: y − a1·β ≈ a0·(1 − β)
      for (let i = 0; i < m; i++) {
        const x = 1 - basis[i]!
        num += x * (v[i]! - bound * basis[i]!)
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
      held = free === solved ? (edge < 2 ? 1 : 2) : 3
    }
  }
  out[0] = b0
  out[1] = b1 - b0
  out[4] = held
  return bestSse
}

/**
 * The logistic's SSE at (k, t0) with its best d and B (out[0], out[1]; as the WASM kernel's), its
 * asymptotes held to the score's scale (boxedLevels): on the basis 1 − b = 1/(1 + e^(−k(t − t0)))
 * when t0 lies past the middle of the series (b near 1 cancels catastrophically), then d = c + A
 * and B = −A; out[2], out[3] keep the fit on the basis used (c, A).
 */
export const logisticSse = (v: Float64Array, t: Float64Array, m: number, k: number, t0: number, basis: Float64Array, out: Float64Array): number => {
  const flip = t0 > 0.5 * (t[0]! + t[m - 1]!)
  const kk = flip ? -k : k
  for (let i = 0; i < m; i++) basis[i] = 1 / (1 + expK(kk * (t[i]! - t0)))
  const sse = boxedLevels(v, basis, m, basisSse(v, basis, m, out), out)
  out[2] = out[0]!
  out[3] = out[1]!
  if (flip) {
    out[0] = out[2]! + out[3]!
    out[1] = -out[3]!
  }
  return sse
}

/** The logistic's domain: 0 < k ≤ LOGISTIC_K_MAX (t0's bounds are the caller's), as the WASM kernel's. */
export const LOGISTIC_K_MAX = 20
const LOGISTIC_K_MIN = 1e-4

/** The SSE of decay (2) or plateau (3) with k = x (as the WASM kernel's kindSse). */
export const kindSse = (kind: number, v: Float64Array, t: Float64Array, m: number, x: number, basis: Float64Array, out: Float64Array): number =>
  kind === 2 ? decaySse(v, t, m, x, out) : plateauSse(v, t, m, x, basis, out)

/** k and t0 clamped into the logistic's domain LOGISTIC_K_MIN ≤ k ≤ LOGISTIC_K_MAX, tLo ≤ t0 ≤ tHi. */
const clampK = (k: number): number => (k < LOGISTIC_K_MIN ? LOGISTIC_K_MIN : k > LOGISTIC_K_MAX ? LOGISTIC_K_MAX : k)
const clampT = (t0: number, tLo: number, tHi: number): number => (t0 < tLo ? tLo : t0 > tHi ? tHi : t0)

/** The logistic's Levenberg–Marquardt refinement: its stopping rule (as the WASM kernel's). */
const LM_MAX_STEPS = 200
const LM_LAMBDA_START = 1e-3
const LM_LAMBDA_MAX = 1e12
const LM_SSE_TOLERANCE = 1e-13

/**
 * Levenberg–Marquardt minimisation of the logistic's SSE over (k, t0) by variable projection
 * (Golub & Pereyra, SIAM J Numer Anal 1973;10:413), as the WASM kernel's logisticRefine: d and B
 * solved exactly at every (k, t0), their levels on the scale (boxedLevels); the step from the
 * residual's derivatives with d and B held, projected off the span of the free levels' columns
 * (Kaufman, BIT 1975;15:49: [1, b] when no level is held at a bound), damped by λ on the diagonal; trials
 * clamped into the domain; λ tenfold down on a lower SSE, up otherwise. Same arithmetic, same
 * order. Writes the best (k, t0, SSE) to best.
 */
export const logisticRefine = (
  v: Float64Array, t: Float64Array, m: number, k: number, t0: number, tLo: number, tHi: number,
  basis: Float64Array, out: Float64Array, best: Float64Array
): void => {
  let ck = clampK(k)
  let ct = clampT(t0, tLo, tHi)
  let f = logisticSse(v, t, m, ck, ct, basis, out)
  let lambda = LM_LAMBDA_START
  for (let step = 0; step < LM_MAX_STEPS && f < Infinity; step++) {
    const c = out[2]!
    const a = out[3]!
    const bb = out[1]!
    const held = out[4]!
    let sb = 0
    for (let i = 0; i < m; i++) sb += basis[i]!
    const mb = sb / m
    // One pass, then the projection off the span of the free levels' columns in closed form (as the
    // WASM kernel's): [1, b] when neither level is held at a bound; b alone when the level at b = 0
    // is held; 1 − b alone when the level at b = 1 is; nothing when both are.
    let sk = 0
    let st = 0
    let skb = 0
    let stb = 0
    let sbb = 0
    let skk = 0
    let skt = 0
    let stt = 0
    let g1 = 0
    let g2 = 0
    let skx = 0
    let stx = 0
    let sxx = 0
    for (let i = 0; i < m; i++) {
      const b = basis[i]!
      const w = bb * b * (1 - b)
      const gk = w * (t[i]! - ct)
      const gt = -w * ck
      const db = b - mb
      const r = v[i]! - c - a * b
      const x = held === 1 ? b : 1 - b
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
    const pk = sbb > 1e-300 ? skb / sbb : 0
    const pt = sbb > 1e-300 ? stb / sbb : 0
    const qk = sxx > 1e-300 ? skx / sxx : 0
    const qt = sxx > 1e-300 ? stx / sxx : 0
    const a11 = held === 0 ? skk - sk * sk / m - pk * skb : held === 3 ? skk : skk - qk * skx
    const a12 = held === 0 ? skt - sk * st / m - pk * stb : held === 3 ? skt : skt - qk * stx
    const a22 = held === 0 ? stt - st * st / m - pt * stb : held === 3 ? stt : stt - qt * stx
    const holdK = (ck <= LOGISTIC_K_MIN && g1 > 0) || (ck >= LOGISTIC_K_MAX && g1 < 0)
    const holdT = (ct <= tLo && g2 > 0) || (ct >= tHi && g2 < 0)
    if (holdK && holdT) break
    let accepted = false
    let converged = false
    while (lambda <= LM_LAMBDA_MAX) {
      const h11 = a11 + lambda * (a11 > 1e-300 ? a11 : 1e-300)
      const h22 = a22 + lambda * (a22 > 1e-300 ? a22 : 1e-300)
      const det = h11 * h22 - a12 * a12
      const dk = holdK ? 0 : holdT ? -g1 / h11 : det > 0 ? -(h22 * g1 - a12 * g2) / det : 0
      const dt = holdT ? 0 : holdK ? -g2 / h22 : det > 0 ? -(h11 * g2 - a12 * g1) / det : 0
      const nk = clampK(ck + dk)
      const nt = clampT(ct + dt, tLo, tHi)
      if (nk === ck && nt === ct) {
        converged = true
        break
      }
      const nf = logisticSse(v, t, m, nk, nt, basis, out)
      if (nf < f) {
        converged = f - nf <= LM_SSE_TOLERANCE * f + 1e-20
        ck = nk
        ct = nt
        f = nf
        lambda = lambda * 0.1 < 1e-12 ? 1e-12 : lambda * 0.1
        accepted = true
        break
      }
      lambda *= 10
    }
    if (converged || !accepted) break
  }
  best[0] = ck
  best[1] = ct
  best[2] = f
}

/** Golden-section minimum of {@link kindSse} on [lo, hi] in `steps` steps (as the WASM kernel's goldenMin). */
export const goldenMin = (kind: number, v: Float64Array, t: Float64Array, m: number, lo: number, hi: number, steps: number, basis: Float64Array, out: Float64Array): number => {
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
