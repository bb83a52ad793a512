/**
 * Twin of assembly/kernels/trajectory-fits.ts: the least-squares fits of the trajectory models
 * (trajectory.ts), each model's SSE given its nonlinear parameters (the linear ones solved
 * exactly), the golden-section refinement of k and the logistic's Nelder–Mead search.
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

export const logisticSse = (v: Float64Array, t: Float64Array, m: number, k: number, t0: number, basis: Float64Array, out: Float64Array): number => {
  for (let i = 0; i < m; i++) basis[i] = 1 / (1 + expK(k * (t[i]! - t0)))
  return basisSse(v, basis, m, out)
}

/** The logistic's Nelder–Mead search: the largest k tried, and its stopping rule (as the WASM kernel's). */
export const LOGISTIC_K_MAX = 20
const LOGISTIC_K_MIN = 1e-4
const NM_MAX_STEPS = 500
const NM_MAX_RESTARTS = 5
const NM_SSE_TOLERANCE = 1e-12
const NM_SIZE_TOLERANCE = 1e-9

/** The SSE of decay (2) or plateau (3) with k = x (as the WASM kernel's kindSse). */
export const kindSse = (kind: number, v: Float64Array, t: Float64Array, m: number, x: number, basis: Float64Array, out: Float64Array): number =>
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
export const logisticNelderMead = (
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
