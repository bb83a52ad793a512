// Cohort-scan kernels over columnar arrays: filter masks (u8, 1 = selected), grouped counts /
// sums / means, and quantiles of a masked column. Twin: src/kernels/reference/cohort.ts.
// NaN values never pass a range filter and are skipped by aggregates.
import { getF, setF, getI, select } from "./common"

/** maskOut[i] = maskIn[i] & (lo ≤ col[i] ≤ hi); f64 column, two lanes at a time (SIMD). In place allowed. */
export function maskRange(col: usize, n: i32, lo: f64, hi: f64, maskIn: usize, maskOut: usize): void {
  const vlo = f64x2.splat(lo)
  const vhi = f64x2.splat(hi)
  let i = 0
  for (; i + 2 <= n; i += 2) {
    const v = v128.load(col + (<usize>i << 3))
    const bits = i64x2.bitmask(v128.and(f64x2.ge(v, vlo), f64x2.le(v, vhi)))
    store<u8>(maskOut + <usize>i, load<u8>(maskIn + <usize>i) & <u8>(bits & 1))
    store<u8>(maskOut + <usize>i + 1, load<u8>(maskIn + <usize>i + 1) & <u8>((bits >> 1) & 1))
  }
  for (; i < n; i++) {
    const x = getF(col, i)
    store<u8>(maskOut + <usize>i, load<u8>(maskIn + <usize>i) & <u8>(x >= lo && x <= hi ? 1 : 0))
  }
}

/** maskOut[i] = maskIn[i] & (0 ≤ col[i] < setSize && set[col[i]] ≠ 0); i32 codes, u8 lookup table. */
export function maskInSet(col: usize, n: i32, set: usize, setSize: i32, maskIn: usize, maskOut: usize): void {
  for (let i = 0; i < n; i++) {
    const c = getI(col, i)
    const hit: u8 = c >= 0 && c < setSize && load<u8>(set + <usize>c) != 0 ? 1 : 0
    store<u8>(maskOut + <usize>i, load<u8>(maskIn + <usize>i) & hit)
  }
}

/** maskOut[i] = maskIn[i] & (flags[i] ≠ 0); a u8 flag column, sixteen rows at a time (SIMD). In place allowed. */
export function maskFlag(flags: usize, n: i32, maskIn: usize, maskOut: usize): void {
  const zero = i8x16.splat(0)
  let i = 0
  for (; i + 16 <= n; i += 16) {
    const set = v128.not(i8x16.eq(v128.load(flags + <usize>i), zero))
    v128.store(maskOut + <usize>i, v128.and(v128.load(maskIn + <usize>i), set))
  }
  for (; i < n; i++) store<u8>(maskOut + <usize>i, load<u8>(flags + <usize>i) != 0 ? load<u8>(maskIn + <usize>i) : 0)
}

/** Number of selected rows; sixteen mask bytes at a time (SIMD). */
export function maskCount(mask: usize, n: i32): i32 {
  let acc = i32x4.splat(0)
  let i = 0
  for (; i + 16 <= n; i += 16) {
    const b = v128.load(mask + <usize>i)
    acc = i32x4.add(acc, i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(b)))
  }
  let count = i32x4.extract_lane(acc, 0) + i32x4.extract_lane(acc, 1) + i32x4.extract_lane(acc, 2) + i32x4.extract_lane(acc, 3)
  for (; i < n; i++) count += <i32>load<u8>(mask + <usize>i)
  return count
}

/**
 * For selected rows with a group in [0, nGroups) and a present value: per group count, sum (in
 * row order) and mean (NaN for an empty group). Outputs nGroups f64 each.
 */
export function groupStats(
  groups: usize, values: usize, mask: usize, n: i32, nGroups: i32,
  outCount: usize, outSum: usize, outMean: usize
): void {
  for (let g = 0; g < nGroups; g++) {
    setF(outCount, g, 0.0)
    setF(outSum, g, 0.0)
  }
  for (let i = 0; i < n; i++) {
    if (load<u8>(mask + <usize>i) == 0) continue
    const g = getI(groups, i)
    const x = getF(values, i)
    if (g < 0 || g >= nGroups || isNaN(x)) continue
    setF(outCount, g, getF(outCount, g) + 1.0)
    setF(outSum, g, getF(outSum, g) + x)
  }
  for (let g = 0; g < nGroups; g++) {
    const c = getF(outCount, g)
    setF(outMean, g, c > 0.0 ? getF(outSum, g) / c : NaN)
  }
}

/**
 * Quantiles (Hyndman–Fan type 7, linear interpolation; the R and NumPy default) of the selected,
 * present values. qs: nq probabilities in [0, 1]; out: nq f64 (NaN when nothing is selected).
 * Each needs the values of rank ⌊h⌋ and ⌊h⌋ + 1 (h = (m − 1)·q): a quickselect for the first, the
 * minimum of what lies above it for the second, so no full sort is needed.
 * scratch: at least n × 8 bytes. Returns the number of values used.
 */
export function quantiles(values: usize, mask: usize, n: i32, qs: usize, nq: i32, out: usize, scratch: usize): i32 {
  let m = 0
  for (let i = 0; i < n; i++) {
    const x = getF(values, i)
    if (load<u8>(mask + <usize>i) != 0 && !isNaN(x)) {
      setF(scratch, m, x)
      m++
    }
  }
  for (let j = 0; j < nq; j++) {
    if (m == 0) {
      setF(out, j, NaN)
      continue
    }
    const h = <f64>(m - 1) * getF(qs, j)
    const lo = <i32>Math.floor(h)
    select(scratch, 0, m - 1, lo)
    const a = getF(scratch, lo)
    let b = a
    if (lo + 1 < m) {
      b = getF(scratch, lo + 1)
      for (let i = lo + 2; i < m; i++) if (getF(scratch, i) < b) b = getF(scratch, i)
    }
    setF(out, j, a + (h - <f64>lo) * (b - a))
  }
  return m
}
