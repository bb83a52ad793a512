/**
 * Twin of assembly/kernels/common.ts: the same helpers over Float64Array views, in the same
 * operation order, so WASM and TypeScript results agree to the last few ulps.
 */

/** Copies the non-NaN values of src to vals and their indices to ts; returns how many were kept. */
export const compact = (src: Float64Array, vals: Float64Array, ts: Float64Array): number => {
  let m = 0
  for (let i = 0; i < src.length; i++) {
    const v = src[i]!
    if (!Number.isNaN(v)) {
      vals[m] = v
      ts[m] = i
      m++
    }
  }
  return m
}

// Range sums in the WASM core's lane order: a[from], a[from+2], … and the others apart, added at
// the end, then the odd tail.

const sumRange = (a: Float64Array, from: number, to: number): number => {
  let s0 = 0
  let s1 = 0
  let i = from
  for (; i + 2 <= to; i += 2) {
    s0 += a[i]!
    s1 += a[i + 1]!
  }
  let s = s0 + s1
  if (i < to) s += a[i]!
  return s
}

/** Sample SD of a[from..to) (two-pass); 0 for fewer than 2 values. */
export const sdRange = (a: Float64Array, from: number, to: number): number => {
  const m = to - from
  if (m < 2) return 0
  const mu = sumRange(a, from, to) / m
  let s0 = 0
  let s1 = 0
  let i = from
  for (; i + 2 <= to; i += 2) {
    const d0 = a[i]! - mu
    const d1 = a[i + 1]! - mu
    s0 += d0 * d0
    s1 += d1 * d1
  }
  let ss = s0 + s1
  if (i < to) {
    const d = a[i]! - mu
    ss += d * d
  }
  return Math.sqrt(ss / (m - 1))
}

/** Mean of a[from..to); NaN for an empty range. */
export const meanRange = (a: Float64Array, from: number, to: number): number => {
  if (to <= from) return NaN
  return sumRange(a, from, to) / (to - from)
}

/** OLS slope of y on x over [from..to); NaN with fewer than 2 points or no spread in x. */
export const slopeRange = (x: Float64Array, y: Float64Array, from: number, to: number): number => {
  const m = to - from
  if (m < 2) return NaN
  const mx = sumRange(x, from, to) / m
  const my = sumRange(y, from, to) / m
  let xx0 = 0
  let xx1 = 0
  let xy0 = 0
  let xy1 = 0
  let i = from
  for (; i + 2 <= to; i += 2) {
    const d0 = x[i]! - mx
    const d1 = x[i + 1]! - mx
    xx0 += d0 * d0
    xx1 += d1 * d1
    xy0 += d0 * (y[i]! - my)
    xy1 += d1 * (y[i + 1]! - my)
  }
  let sxx = xx0 + xx1
  let sxy = xy0 + xy1
  if (i < to) {
    const dx = x[i]! - mx
    sxx += dx * dx
    sxy += dx * (y[i]! - my)
  }
  return sxx > 0 ? sxy / sxx : NaN
}

/** Complementary error function (Numerical Recipes erfcc; fractional error < 1.2e-7). */
export const erfc = (x: number): number => {
  const z = Math.abs(x)
  const t = 1 / (1 + 0.5 * z)
  const ans = t * Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
    t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
    t * (-0.82215223 + t * 0.17087277)))))))))
  return x >= 0 ? ans : 2 - ans
}

/** Average ranks (1-based, ties share the mean position) of v[0..m) into r. */
export const rankAverage = (v: Float64Array, m: number, r: Float64Array): void => {
  const idx = Array.from({ length: m }, (_, i) => i).sort((a, b) => v[a]! - v[b]!)
  let i = 0
  while (i < m) {
    let j = i
    const vi = v[idx[i]!]!
    while (j + 1 < m && v[idx[j + 1]!]! === vi) j++
    const rank = (i + j + 2) * 0.5
    for (let k = i; k <= j; k++) r[idx[k]!] = rank
    i = j + 1
  }
}

/**
 * Pearson correlation of x[0..m), y[0..m) (two-pass); NaN with fewer than 3 points or no variance.
 * Sums in the WASM core's lane order: even and odd indices apart, added at the end, then the odd tail.
 */
export const pearsonDense = (x: Float64Array, y: Float64Array, m: number): number => {
  if (m < 3) return NaN
  let sx0 = 0
  let sx1 = 0
  let sy0 = 0
  let sy1 = 0
  let i = 0
  for (; i + 2 <= m; i += 2) {
    sx0 += x[i]!
    sx1 += x[i + 1]!
    sy0 += y[i]!
    sy1 += y[i + 1]!
  }
  let sx = sx0 + sx1
  let sy = sy0 + sy1
  if (i < m) {
    sx += x[i]!
    sy += y[i]!
  }
  const mx = sx / m
  const my = sy / m
  let xx0 = 0
  let xx1 = 0
  let yy0 = 0
  let yy1 = 0
  let xy0 = 0
  let xy1 = 0
  i = 0
  for (; i + 2 <= m; i += 2) {
    const dx0 = x[i]! - mx
    const dx1 = x[i + 1]! - mx
    const dy0 = y[i]! - my
    const dy1 = y[i + 1]! - my
    xx0 += dx0 * dx0
    xx1 += dx1 * dx1
    yy0 += dy0 * dy0
    yy1 += dy1 * dy1
    xy0 += dx0 * dy0
    xy1 += dx1 * dy1
  }
  let sxx = xx0 + xx1
  let syy = yy0 + yy1
  let sxy = xy0 + xy1
  if (i < m) {
    const dx = x[i]! - mx
    const dy = y[i]! - my
    sxx += dx * dx
    syy += dy * dy
    sxy += dx * dy
  }
  if (sxx <= 0 || syy <= 0) return NaN
  const r = sxy / Math.sqrt(sxx * syy)
  return r > 1 ? 1 : r < -1 ? -1 : r
}

const LN2_HI = 0.6931471803691238
const LN2_LO = 1.9082149292705877e-10
const INV_LN2 = 1.4426950408889634
/** 2^k for k in [−1022, 1023], built by exact doubling (index k + 1022). */
const POW2 = (() => {
  const t = new Float64Array(2046)
  t[1022] = 1
  for (let k = 1; k <= 1023; k++) t[1022 + k] = t[1022 + k - 1]! * 2
  for (let k = 1; k <= 1022; k++) t[1022 - k] = t[1022 - k + 1]! / 2
  return t
})()

/** e^x, bit for bit the same as the WASM core's expK (see assembly/kernels/common.ts). */
export const expK = (x: number): number => {
  if (x !== x) return x
  if (x > 709) return Infinity
  if (x < -708) return 0
  const k = Math.floor(x * INV_LN2 + 0.5)
  const r = (x - k * LN2_HI) - k * LN2_LO
  const p = 1 + r * (1 + r * (0.5 + r * (0.16666666666666666 + r * (0.041666666666666664 + r * (0.008333333333333333 +
    r * (0.001388888888888889 + r * (0.0001984126984126984 + r * (0.0000248015873015873 + r * (0.0000027557319223985893 +
    r * (2.755731922398589e-7 + r * (2.505210838544172e-8 + r * (2.08767569878681e-9 + r * 1.6059043836821613e-10))))))))))))
  return p * POW2[k + 1022]!
}
