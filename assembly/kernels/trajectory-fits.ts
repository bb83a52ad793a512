// The least-squares fits of the trajectory models (trajectory.ts): each model's SSE given its
// nonlinear parameters (the linear ones solved exactly), the golden-section refinement of k and the
// logistic's Nelder–Mead search. Twin: src/kernels/reference/trajectoryFits.ts (same order of sums).
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

export function logisticSse(v: usize, t: usize, m: i32, k: f64, t0: f64, basis: usize): f64 {
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

@inline export function kindSse(kind: i32, v: usize, t: usize, m: i32, k: f64, basis: usize): f64 {
  return kind == 2 ? decaySse(v, t, m, k, basis) : plateauSse(v, t, m, k, basis)
}

// The logistic's Nelder–Mead search (see logisticNelderMead): its domain and stopping rule.
export const LOGISTIC_K_MAX: f64 = 20.0
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
export let nmK: f64 = 0.0
export let nmT: f64 = 0.0
export let nmF: f64 = 0.0

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
export function logisticNelderMead(v: usize, t: usize, m: i32, k: f64, t0: f64, dk: f64, dt: f64, tLo: f64, tHi: f64, basis: usize): void {
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
