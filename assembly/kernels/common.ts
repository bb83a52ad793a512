// Shared numeric helpers of the kernel families. Plain f64 code over linear memory, no allocation.
// Missing values are NaN everywhere; every helper states what it does with them.

/**
 * Comparing a score quantity (score, mean, difference, SD, slope in points) with a threshold: with a
 * tolerance of 1e-6 points, so a value equal to the threshold in decimal arithmetic counts as equal.
 * Twin and rationale: src/kernels/thresholds.ts.
 */
export const SCORE_TOLERANCE: f64 = 1e-6
/** x ≥ t. */
@inline export function atLeast(x: f64, t: f64): bool {
  return x >= t - SCORE_TOLERANCE
}
/** x ≤ t. */
@inline export function atMost(x: f64, t: f64): bool {
  return x <= t + SCORE_TOLERANCE
}
/** x < t by more than the tolerance. */
@inline export function below(x: f64, t: f64): bool {
  return x < t - SCORE_TOLERANCE
}
/** x > t by more than the tolerance. */
@inline export function above(x: f64, t: f64): bool {
  return x > t + SCORE_TOLERANCE
}

/** Reads element i of an f64 array at ptr. */
@inline export function getF(ptr: usize, i: i32): f64 {
  return load<f64>(ptr + (<usize>i << 3))
}

/** Writes element i of an f64 array at ptr. */
@inline export function setF(ptr: usize, i: i32, v: f64): void {
  store<f64>(ptr + (<usize>i << 3), v)
}

/** Reads element i of an i32 array at ptr. */
@inline export function getI(ptr: usize, i: i32): i32 {
  return load<i32>(ptr + (<usize>i << 2))
}

/** Writes element i of an i32 array at ptr. */
@inline export function setI(ptr: usize, i: i32, v: i32): void {
  store<i32>(ptr + (<usize>i << 2), v)
}

/** e^x on two lanes for x already clamped to [−708, 709]: expK's steps, lane by lane. */
@inline function expCore2(xc: v128): v128 {
  const k = f64x2.floor(f64x2.add(f64x2.mul(xc, V_INV_LN2), V_HALF))
  const r = f64x2.sub(f64x2.sub(xc, f64x2.mul(k, V_LN2_HI)), f64x2.mul(k, V_LN2_LO))
  let p = f64x2.splat(1.6059043836821613e-10)
  p = f64x2.add(f64x2.splat(2.08767569878681e-9), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(2.505210838544172e-8), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(2.755731922398589e-7), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(0.0000027557319223985893), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(0.0000248015873015873), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(0.0001984126984126984), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(0.001388888888888889), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(0.008333333333333333), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(0.041666666666666664), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(0.16666666666666666), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(0.5), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(1.0), f64x2.mul(r, p))
  p = f64x2.add(f64x2.splat(1.0), f64x2.mul(r, p))
  const ki = i64x2.extend_low_i32x4_s(i32x4.trunc_sat_f64x2_s_zero(k))
  const scale = i64x2.shl(i64x2.add(ki, i64x2.splat(1023)), 52)
  return f64x2.mul(p, scale)
}

/**
 * expK2 for lanes known to be ≤ 0 (e^(−k·t) with k, t ≥ 0): the same operations per lane, without
 * the upper clamp and its select, which can never apply.
 */
@inline export function expK2neg(x: v128): v128 {
  const lo = f64x2.lt(x, f64x2.splat(-708.0))
  const xc = f64x2.max(x, f64x2.splat(-708.0))
  return v128.bitselect(f64x2.splat(0.0), expCore2(xc), lo)
}

/** Sum of the two lanes (lane 0 first): how every paired-lane sum of the core ends. */
@inline export function hsum(v: v128): f64 {
  return f64x2.extract_lane(v, 0) + f64x2.extract_lane(v, 1)
}

/**
 * Copies the non-NaN values of src[0..n) to vals and their indices (as f64 time) to ts.
 * Returns how many were kept.
 */
export function compact(src: usize, n: i32, vals: usize, ts: usize): i32 {
  let m = 0
  for (let i = 0; i < n; i++) {
    const v = getF(src, i)
    if (!isNaN(v)) {
      setF(vals, m, v)
      setF(ts, m, <f64>i)
      m++
    }
  }
  return m
}

// The range helpers below sum on two lanes: lane 0 takes a[from], a[from+2], …, lane 1 the
// others; the lanes are added at the end, then the odd tail. The twin sums in the same order.

/** Sum of a[from..to) in lane order. */
@inline function sumRange(a: usize, from: i32, to: i32): f64 {
  let acc = f64x2.splat(0.0)
  let i = from
  for (; i + 2 <= to; i += 2) acc = f64x2.add(acc, v128.load(a + (<usize>i << 3)))
  let s = hsum(acc)
  if (i < to) s += getF(a, i)
  return s
}

/** Sample standard deviation of a[from..to) (two-pass); 0 for fewer than 2 values. */
export function sdRange(a: usize, from: i32, to: i32): f64 {
  const m = to - from
  if (m < 2) return 0.0
  const mu = sumRange(a, from, to) / <f64>m
  const vmu = f64x2.splat(mu)
  let acc = f64x2.splat(0.0)
  let i = from
  for (; i + 2 <= to; i += 2) {
    const d = f64x2.sub(v128.load(a + (<usize>i << 3)), vmu)
    acc = f64x2.add(acc, f64x2.mul(d, d))
  }
  let ss = hsum(acc)
  if (i < to) {
    const d = getF(a, i) - mu
    ss += d * d
  }
  return Math.sqrt(ss / <f64>(m - 1))
}

/** Mean of a[from..to); NaN for an empty range. */
export function meanRange(a: usize, from: i32, to: i32): f64 {
  if (to <= from) return NaN
  return sumRange(a, from, to) / <f64>(to - from)
}

/** OLS slope of y on x over [from..to) (two-pass); NaN with fewer than 2 points or no spread in x. */
export function slopeRange(x: usize, y: usize, from: i32, to: i32): f64 {
  const m = to - from
  if (m < 2) return NaN
  const mx = sumRange(x, from, to) / <f64>m
  const my = sumRange(y, from, to) / <f64>m
  const vmx = f64x2.splat(mx)
  const vmy = f64x2.splat(my)
  let axx = f64x2.splat(0.0)
  let axy = f64x2.splat(0.0)
  let i = from
  for (; i + 2 <= to; i += 2) {
    const dx = f64x2.sub(v128.load(x + (<usize>i << 3)), vmx)
    axx = f64x2.add(axx, f64x2.mul(dx, dx))
    axy = f64x2.add(axy, f64x2.mul(dx, f64x2.sub(v128.load(y + (<usize>i << 3)), vmy)))
  }
  let sxx = hsum(axx)
  let sxy = hsum(axy)
  if (i < to) {
    const dx = getF(x, i) - mx
    sxx += dx * dx
    sxy += dx * (getF(y, i) - my)
  }
  return sxx > 0.0 ? sxy / sxx : NaN
}

/**
 * Complementary error function, Numerical Recipes `erfcc` (Chebyshev fit; fractional error
 * below 1.2e-7 everywhere). Used only for p-values, where that accuracy is ample.
 */
export function erfc(x: f64): f64 {
  const z = Math.abs(x)
  const t = 1.0 / (1.0 + 0.5 * z)
  const ans = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
    t * (-0.82215223 + t * 0.17087277)))))))))
  return x >= 0.0 ? ans : 2.0 - ans
}

/** Sorts idx[0..m) (i32 indices into v) by v ascending, in place (heap sort). */
export function heapSortIndex(idx: usize, v: usize, m: i32): void {
  for (let start = (m >> 1) - 1; start >= 0; start--) siftDownIndex(idx, v, start, m)
  for (let end = m - 1; end > 0; end--) {
    const t = getI(idx, 0)
    setI(idx, 0, getI(idx, end))
    setI(idx, end, t)
    siftDownIndex(idx, v, 0, end)
  }
}

function siftDownIndex(idx: usize, v: usize, start: i32, end: i32): void {
  let root = start
  while (true) {
    let child = 2 * root + 1
    if (child >= end) return
    if (child + 1 < end && getF(v, getI(idx, child)) < getF(v, getI(idx, child + 1))) child++
    if (getF(v, getI(idx, root)) >= getF(v, getI(idx, child))) return
    const t = getI(idx, root)
    setI(idx, root, getI(idx, child))
    setI(idx, child, t)
    root = child
  }
}

/**
 * Average ranks (1-based; ties share the mean of their positions) of v[0..m) into r, using idx
 * (m i32) as scratch. The result does not depend on the sort's stability.
 */
export function rankAverage(v: usize, m: i32, r: usize, idx: usize): void {
  for (let i = 0; i < m; i++) setI(idx, i, i)
  heapSortIndex(idx, v, m)
  let i = 0
  while (i < m) {
    let j = i
    const vi = getF(v, getI(idx, i))
    while (j + 1 < m && getF(v, getI(idx, j + 1)) == vi) j++
    const rank = (<f64>(i + j) + 2.0) * 0.5
    for (let k = i; k <= j; k++) setF(r, getI(idx, k), rank)
    i = j + 1
  }
}

/**
 * Pearson correlation of x[0..m), y[0..m) (two-pass); NaN with fewer than 3 points or no variance.
 * Sums run on two lanes (even and odd indices) that are added at the end, then the odd tail; the
 * TypeScript twin sums in exactly this order.
 */
export function pearsonDense(x: usize, y: usize, m: i32): f64 {
  if (m < 3) return NaN
  let vsx = f64x2.splat(0.0)
  let vsy = f64x2.splat(0.0)
  let i = 0
  for (; i + 2 <= m; i += 2) {
    vsx = f64x2.add(vsx, v128.load(x + (<usize>i << 3)))
    vsy = f64x2.add(vsy, v128.load(y + (<usize>i << 3)))
  }
  let sx = hsum(vsx)
  let sy = hsum(vsy)
  if (i < m) {
    sx += getF(x, i)
    sy += getF(y, i)
  }
  const mx = sx / <f64>m
  const my = sy / <f64>m
  const vmx = f64x2.splat(mx)
  const vmy = f64x2.splat(my)
  let vxx = f64x2.splat(0.0)
  let vyy = f64x2.splat(0.0)
  let vxy = f64x2.splat(0.0)
  i = 0
  for (; i + 2 <= m; i += 2) {
    const dx = f64x2.sub(v128.load(x + (<usize>i << 3)), vmx)
    const dy = f64x2.sub(v128.load(y + (<usize>i << 3)), vmy)
    vxx = f64x2.add(vxx, f64x2.mul(dx, dx))
    vyy = f64x2.add(vyy, f64x2.mul(dy, dy))
    vxy = f64x2.add(vxy, f64x2.mul(dx, dy))
  }
  let sxx = hsum(vxx)
  let syy = hsum(vyy)
  let sxy = hsum(vxy)
  if (i < m) {
    const dx = getF(x, i) - mx
    const dy = getF(y, i) - my
    sxx += dx * dx
    syy += dy * dy
    sxy += dx * dy
  }
  if (sxx <= 0.0 || syy <= 0.0) return NaN
  const r = sxy / Math.sqrt(sxx * syy)
  return r > 1.0 ? 1.0 : r < -1.0 ? -1.0 : r
}

// exp shared bit for bit with the TypeScript twin: both use only IEEE-exact operations (+ − × ÷,
// floor, exponent-bit construction), so the fits that call it give identical results in WASM and
// in V8 (whose Math.exp may differ from AssemblyScript's by an ulp). Method: x = k·ln2 + r with
// |r| ≤ ln2/2 (ln2 split in a high and a low part, fdlibm's constants), e^r by a degree-13 Taylor
// polynomial (truncation error < 5e-18 relative), times 2^k built from its exponent bits.
// Accuracy: within a few ulps of the true value; 0 below −708, Infinity above 709.
const LN2_HI: f64 = 0.6931471803691238
const LN2_LO: f64 = 1.9082149292705877e-10
const INV_LN2: f64 = 1.4426950408889634

/** e^x, identical in both twins (see above). */
export function expK(x: f64): f64 {
  if (x != x) return x
  if (x > 709.0) return Infinity
  if (x < -708.0) return 0.0
  const k = Math.floor(x * INV_LN2 + 0.5)
  const r = (x - k * LN2_HI) - k * LN2_LO
  const p = 1.0 + r * (1.0 + r * (0.5 + r * (0.16666666666666666 + r * (0.041666666666666664 + r * (0.008333333333333333 +
    r * (0.001388888888888889 + r * (0.0001984126984126984 + r * (0.0000248015873015873 + r * (0.0000027557319223985893 +
    r * (2.755731922398589e-7 + r * (2.505210838544172e-8 + r * (2.08767569878681e-9 + r * 1.6059043836821613e-10))))))))))))
  return p * reinterpret<f64>(<i64>(<i32>k + 1023) << 52)
}

const V_INV_LN2 = f64x2.splat(INV_LN2)
const V_HALF = f64x2.splat(0.5)
const V_LN2_HI = f64x2.splat(LN2_HI)
const V_LN2_LO = f64x2.splat(LN2_LO)

/**
 * expK on two lanes at once; each lane is bit for bit expK of that lane (same operations in the
 * same order). Lanes below −708 give 0 and above 709 give Infinity, as in expK.
 */
@inline export function expK2(x: v128): v128 {
  const lo = f64x2.lt(x, f64x2.splat(-708.0))
  const hi = f64x2.gt(x, f64x2.splat(709.0))
  const xc = f64x2.min(f64x2.max(x, f64x2.splat(-708.0)), f64x2.splat(709.0))
  const y = expCore2(xc)
  return v128.bitselect(f64x2.splat(Infinity), v128.bitselect(f64x2.splat(0.0), y, lo), hi)
}


/**
 * Moves the value of rank `k` (0-based, ascending) of a[lo..hi] to position k, smaller-or-equal
 * values before it and greater-or-equal after (Hoare's quickselect, median-of-three pivot; O(n)
 * on average). The values it returns are exactly those a full sort would put there.
 */
export function select(a: usize, lo: i32, hi: i32, k: i32): void {
  while (hi > lo) {
    const mid = lo + ((hi - lo) >> 1)
    // median of three → pivot value
    let x = getF(a, lo)
    let y = getF(a, mid)
    let z = getF(a, hi)
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y)
    let i = lo
    let j = hi
    while (i <= j) {
      while (getF(a, i) < pivot) i++
      while (getF(a, j) > pivot) j--
      if (i <= j) {
        const t = getF(a, i)
        setF(a, i, getF(a, j))
        setF(a, j, t)
        i++
        j--
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else return
  }
}

