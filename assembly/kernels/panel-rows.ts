// Reading the rows of the axis panel (panel.ts): a score or two months of scores of a row in
// either storage, touching a row's cache lines ahead of use, and the sums of one row's present
// scores that every scan inlines. No twin: the TypeScript twin (src/kernels/reference/panel.ts)
// reads its arrays directly; the kernels built on these are twinned in panel.ts.
import { getF, hsum, setF } from "./common"
import { TENTHS } from "./tenths"

/**
 * How many listed or selected patients ahead a scan that skips rows touches their rows, in batches
 * of as many: rows here and there are cache misses the hardware does not fetch ahead, and one at a
 * time each is waited for alone; touched 16 at once, their misses overlap.
 */
export const PREFETCH_AHEAD = 16
/** One word of every cache line of a row (the words xor-ed: the scans keep them in panel.ts's prefetchSink). */
@inline export function touchRow(row: usize, rowBytes: usize): u32 {
  let t: u32 = 0
  for (let o: usize = 0; o < rowBytes; o += 64) t ^= load<u32>(row + o)
  return t
}

/** Month m's score of the row at `row` (NaN when missing). */
@inline export function scoreAt<T>(row: usize, m: i32): f64 {
  if (sizeof<T>() == 1) return load<f64>(TENTHS + (<usize>load<u8>(row + <usize>m) << 3))
  return <f64>load<f32>(row + (<usize>m << 2))
}

/** Months m and m + 1 of the row at `row` as f64 lanes (NaN when missing). */
@inline export function load2<T>(row: usize, m: i32): v128 {
  if (sizeof<T>() == 1) {
    const at = row + <usize>m
    return v128.load64_lane(TENTHS + (<usize>load<u8>(at, 1) << 3), v128.load64_zero(TENTHS + (<usize>load<u8>(at) << 3)), 1)
  }
  return f64x2.promote_low_f32x4(v128.load64_zero(row + (<usize>m << 2)))
}

/** Bytes of one row (nMonths scores). */
@inline export function rowBytesOf<T>(nMonths: i32): usize {
  return <usize>nMonths * sizeof<T>()
}


// What rowSums leaves: over one row's present scores in its months, their count, the sums of their
// months, of the scores, of the months squared and of month × score.
export let rowN = 0.0
export let rowT = 0.0
export let rowX = 0.0
export let rowTT = 0.0
export let rowTX = 0.0

/**
 * The sums of one row's present scores over months [from, to), two months a step and then the odd
 * one (exact sums: the lanes' order gives the twin's bits); inlined into each scan, its flags
 * constant there. keep = false (dense only) counts nothing; slopes: leave the five sums in
 * rowN…rowTX; months: add each month's count and sum to monthCount / monthSum.
 */
@inline export function rowSums<T>(
  row: usize, from: i32, to: i32, keep: bool, dense: bool, slopes: bool, months: bool, monthCount: usize, monthSum: usize
): void {
  const one = f64x2.splat(1.0)
  const two = f64x2.splat(2.0)
  // dense: all ones for a selected patient, all zeros otherwise (no branch in the loop below).
  const kept = i64x2.splat(-(<i64>keep))
  let vn = f64x2.splat(0.0)
  let vt = f64x2.splat(0.0)
  let vx = f64x2.splat(0.0)
  let vtt = f64x2.splat(0.0)
  let vtx = f64x2.splat(0.0)
  let t = f64x2.replace_lane(f64x2.splat(<f64>from), 1, <f64>(from + 1))
  let m = from
  for (; m + 2 <= to; m += 2) {
    const x = load2<T>(row, m)
    const present = dense ? v128.and(f64x2.eq(x, x), kept) : f64x2.eq(x, x)
    const xz = v128.and(x, present)
    const c = v128.and(one, present)
    if (months) {
      const at = <usize>m << 3
      v128.store(monthCount + at, f64x2.add(v128.load(monthCount + at), c))
      v128.store(monthSum + at, f64x2.add(v128.load(monthSum + at), xz))
    }
    if (slopes) {
      const tz = v128.and(t, present)
      vn = f64x2.add(vn, c)
      vt = f64x2.add(vt, tz)
      vx = f64x2.add(vx, xz)
      vtt = f64x2.add(vtt, f64x2.mul(tz, tz))
      vtx = f64x2.add(vtx, f64x2.mul(tz, xz))
      t = f64x2.add(t, two)
    }
  }
  let n = hsum(vn)
  let st = hsum(vt)
  let sx = hsum(vx)
  let stt = hsum(vtt)
  let stx = hsum(vtx)
  for (; m < to; m++) {
    const x = scoreAt<T>(row, m)
    if (isNaN(x) || !keep) continue
    if (months) {
      setF(monthCount, m, getF(monthCount, m) + 1.0)
      setF(monthSum, m, getF(monthSum, m) + x)
    }
    if (slopes) {
      const tm = <f64>m
      n += 1.0
      st += tm
      sx += x
      stt += tm * tm
      stx += tm * x
    }
  }
  rowN = n
  rowT = st
  rowX = sx
  rowTT = stt
  rowTX = stx
}
