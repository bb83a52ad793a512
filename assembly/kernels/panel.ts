// Kernels over the axis panel, laid out axis-major: panel[(axis × nPatients + patient) × nMonths +
// month]. Two storages of the same scores, each kernel compiled for both (a type parameter T):
// - f32 (wide): the score as an f32, NaN where a month or a value is missing;
// - u8 (tenths): the score × 10 as a byte, 0–100, and 255 where it is missing. A byte
//   decodes to <f32>(byte / 10) — f64 division, rounded once to f32 — which is exactly the f32 the
//   wide storage holds for the same one-decimal score (the loader stores a score as its f64 value
//   rounded to f32), so both storages give the same bits everywhere below.
// Twin: src/kernels/reference/panel.ts.
import { atLeast, atMost, getF, getI, hsum, setF } from "./common"
import { TENTHS } from "./tenths"
import { load2, PREFETCH_AHEAD, rowBytesOf, rowN, rowSums, rowT, rowTT, rowTX, rowX, scoreAt, touchRow } from "./panel-rows"

// Scores are one-decimal values stored as f32: every sum below (of scores, of month × score, over
// at most a few million terms) is exact in f64, so the two-lane order of the SIMD loops gives the
// same bits as the twin's sequential order.

/** Where the touched words go (touchRow, panel-rows.ts), so the loads are kept. */
let prefetchSink: u32 = 0

/**
 * maskOut[p] = maskIn[p] & (lo ≤ mean of the patient's present scores of `axis` in months [from, to) ≤ hi);
 * a patient with no score in the range is never selected. In place allowed.
 */
function meanMask<T>(
  panel: usize, nPatients: i32, nMonths: i32, axis: i32, from: i32, to: i32, lo: f64, hi: f64, maskIn: usize, maskOut: usize
): void {
  const one = f64x2.splat(1.0)
  for (let p = 0; p < nPatients; p++) {
    let keep: u8 = 0
    if (load<u8>(maskIn + <usize>p) != 0) {
      const row = panel + <usize>(axis * nPatients + p) * rowBytesOf<T>(nMonths)
      let vn = f64x2.splat(0.0)
      let vs = f64x2.splat(0.0)
      let m = from
      for (; m + 2 <= to; m += 2) {
        const x = load2<T>(row, m)
        const present = f64x2.eq(x, x)
        vn = f64x2.add(vn, v128.and(one, present))
        vs = f64x2.add(vs, v128.and(x, present))
      }
      let n = hsum(vn)
      let s = hsum(vs)
      for (; m < to; m++) {
        const x = scoreAt<T>(row, m)
        if (isNaN(x)) continue
        n += 1.0
        s += x
      }
      if (n > 0.0) {
        const mean = s / n
        keep = atLeast(mean, lo) && atMost(mean, hi) ? 1 : 0
      }
    }
    store<u8>(maskOut + <usize>p, keep)
  }
}

/**
 * For the selected patients and each of the nAxes axes (canonical indices at `axes`), over months
 * [from, to):
 * - per period group (monthGroup[m] in [0, nGroups), −1 = not reported): count and sum of present
 *   scores → outCount / outSum [axis × nGroups + group];
 * - each patient's least-squares slope of score on month (patients with ≥ 3 present months over
 *   at least 2 distinct months): outSlope[axis × 3 + 0, 1, 2] = number of patients, Σ slope, Σ slope².
 */
function trend<T>(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outCount: usize, outSum: usize, outSlope: usize, scratch: usize
): void {
  periodScan<T>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outCount, outSum, outSlope, scratch, true)
}

/**
 * panelTrend's period counts and sums without the per-patient slopes (about half of its work): for
 * a caller that has the slopes already, e.g. computed once per dataset with panelWindows.
 *
 * Over a wide panel a selection of at least a seventh of the patients is scanned whole, every
 * row, an unselected patient's scores masked to +0 (their lanes add nothing): reading rows here
 * and there costs more than reading all of them in order. A smaller selection skips the rows of
 * unselected patients (eight at a time over a zero word of the mask) and touches selected rows
 * ahead (PREFETCH_AHEAD). Over a tenths panel only the selected rows are read, each month's bytes
 * counted into a histogram (tenthsHistogramSums): a byte load and a counter per score, cheaper
 * than decoding each to f64 and adding it. Same bits every way: every sum here is exact.
 *
 * Over a tenths panel, given `everyone` (every patient's histograms: histogramRows; the caller
 * gives them for a selection of more than half), the selection is counted as everyone less the
 * unselected patients, whose rows alone are read: histogram counts are integers, so that gives
 * the selection's histogram exactly, and its sums the same bits as counting the selection
 * (tenthsHistogramSums) at any number of patients.
 */
function sums<T>(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outCount: usize, outSum: usize, scratch: usize, everyone: usize
): void {
  if (sizeof<T>() == 1) {
    periodScan<T>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outCount, outSum, 0, scratch, false, true, everyone)
    return
  }
  let selected = 0
  for (let p = 0; p < nPatients; p++) selected += <i32>(load<u8>(mask + <usize>p) != 0)
  if (<i64>selected * 7 >= <i64>nPatients) {
    periodScan<T>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outCount, outSum, 0, scratch, false, true)
  } else {
    periodScan<T>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outCount, outSum, 0, scratch, false, false)
  }
}

/**
 * The scan of panelTrend (slopes = true) and panelSums (slopes = false: outSlope unused); inlined
 * into each call, so each is its own loop. dense (sums only) = over a wide panel every row read,
 * unselected ones masked out, over a tenths panel the selected rows counted by histogram
 * (tenthsHistogramSums); otherwise unselected rows are skipped. everyone: see sums.
 */
@inline function periodScan<T>(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outCount: usize, outSum: usize, outSlope: usize, scratch: usize, slopes: bool,
  dense: bool = false, everyone: usize = 0
): void {
  // scratch: per-month count and sum of the current axis (nMonths f64 each), folded into groups at the end.
  const monthCount = scratch
  const monthSum = scratch + (<usize>nMonths << 3)
  const rowBytes = rowBytesOf<T>(nMonths)
  let touched: u32 = 0
  for (let i = 0; i < nAxes * nGroups; i++) {
    setF(outCount, i, 0.0)
    setF(outSum, i, 0.0)
  }
  for (let k = 0; k < nAxes; k++) {
    const axis = getI(axes, k)
    for (let m = 0; m < nMonths; m++) {
      setF(monthCount, m, 0.0)
      setF(monthSum, m, 0.0)
    }
    let sn = 0.0
    let ss = 0.0
    let sq = 0.0
    // When skipping rows, every PREFETCH_AHEAD selected patients the rows of the next PREFETCH_AHEAD
    // after those are touched (a cursor a little ahead on the mask; ranks count selected patients).
    const axisBase = panel + <usize>(axis * nPatients) * rowBytes
    if (sizeof<T>() == 1 && dense && !slopes) {
      const axisEveryone: usize = everyone == 0 ? 0 : everyone + (<usize>(axis * nMonths) << 10)
      tenthsHistogramSums(axisBase, nPatients, nMonths, from, to, mask, axisEveryone, monthCount, monthSum, scratch + (<usize>nMonths << 4))
      foldMonths(k, from, to, monthGroup, nGroups, monthCount, monthSum, outCount, outSum)
      continue
    }
    let cursor = 0
    let rank = 0
    let done = 0
    for (let p = 0; p < nPatients; p++) {
      // When skipping rows, eight unselected patients at a time where the mask has a zero word.
      if (!dense && (p & 7) == 0 && p + 8 <= nPatients && load<u64>(mask + <usize>p) == 0) {
        p += 7
        continue
      }
      const keep = load<u8>(mask + <usize>p) != 0
      if (!dense && !keep) continue
      if (!dense) {
        if ((done & (PREFETCH_AHEAD - 1)) == 0) {
          const upTo = done + 2 * PREFETCH_AHEAD
          while (rank < upTo && cursor < nPatients) {
            if ((cursor & 7) == 0 && cursor + 8 <= nPatients && load<u64>(mask + <usize>cursor) == 0) {
              cursor += 8
              continue
            }
            if (load<u8>(mask + <usize>cursor) != 0) {
              if (rank >= done + PREFETCH_AHEAD) touched ^= touchRow(axisBase + <usize>cursor * rowBytes, rowBytes)
              rank++
            }
            cursor++
          }
        }
        done++
      }
      rowSums<T>(axisBase + <usize>p * rowBytes, from, to, keep, dense, slopes, true, monthCount, monthSum)
      if (!slopes) continue
      const denom = rowN * rowTT - rowT * rowT
      if (rowN >= 3.0 && denom > 0.0) {
        const slope = (rowN * rowTX - rowT * rowX) / denom
        sn += 1.0
        ss += slope
        sq += slope * slope
      }
    }
    foldMonths(k, from, to, monthGroup, nGroups, monthCount, monthSum, outCount, outSum)
    if (!slopes) continue
    setF(outSlope, k * 3, sn)
    setF(outSlope, k * 3 + 1, ss)
    setF(outSlope, k * 3 + 2, sq)
  }
  prefetchSink = touched
}

/** Adds each month's count and sum (months [from, to)) to its period group's, for axis k. */
@inline function foldMonths(
  k: i32, from: i32, to: i32, monthGroup: usize, nGroups: i32, monthCount: usize, monthSum: usize, outCount: usize, outSum: usize
): void {
  for (let m = from; m < to; m++) {
    const g = getI(monthGroup, m)
    if (g < 0 || g >= nGroups) continue
    const at = k * nGroups + g
    setF(outCount, at, getF(outCount, at) + getF(monthCount, m))
    setF(outSum, at, getF(outSum, at) + getF(monthSum, m))
  }
}

/** Adds months [from, to) of the tenths row at `row` to their histograms (u32 × 256 per month at `hist`). */
@inline function countRow(row: usize, from: i32, to: i32, hist: usize): void {
  for (let m = from; m < to; m++) {
    const at = hist + ((<usize>m << 10) | (<usize>load<u8>(row + <usize>m) << 2))
    store<u32>(at, load<u32>(at) + 1)
  }
}

/** Eight mask bytes of 1: eight selected patients at once, none of them counted as unselected. */
const ALL_SELECTED: u64 = 0x0101010101010101

/**
 * panelSums' month counts and sums over a tenths panel's axis, by histogram: per month, how
 * many selected patients have each byte (u32 × 256 per month at `hist`), then count = the bins
 * 0–100 and sum = Σ bin × its score. The sum of the scores is exact in f64 either way up to a few
 * million patients (see the top of this file), so this gives the bits of summing score by score —
 * without decoding a score: a byte load and a counter per score instead of look-ups and f64 adds.
 * With `everyone` (the axis's histograms of every patient, 0 = none) the unselected patients are
 * counted instead and each bin taken from everyone's: the same counts, so the same sums.
 */
function tenthsHistogramSums(
  axisBase: usize, nPatients: i32, nMonths: i32, from: i32, to: i32, mask: usize, everyone: usize, monthCount: usize, monthSum: usize, hist: usize
): void {
  const rowBytes = <usize>nMonths
  memory.fill(hist, 0, <usize>nMonths << 10)
  if (everyone == 0) {
    for (let p = 0; p < nPatients; p++) {
      if ((p & 7) == 0 && p + 8 <= nPatients && load<u64>(mask + <usize>p) == 0) {
        p += 7
        continue
      }
      if (load<u8>(mask + <usize>p) == 0) continue
      countRow(axisBase + <usize>p * rowBytes, from, to, hist)
    }
  } else {
    for (let p = 0; p < nPatients; p++) {
      if ((p & 7) == 0 && p + 8 <= nPatients && load<u64>(mask + <usize>p) == ALL_SELECTED) {
        p += 7
        continue
      }
      if (load<u8>(mask + <usize>p) == 0) countRow(axisBase + <usize>p * rowBytes, from, to, hist)
    }
    for (let m = from; m < to; m++) {
      for (let c = 0; c <= 100; c++) {
        const at = (<usize>m << 10) | (<usize>c << 2)
        store<u32>(hist + at, load<u32>(everyone + at) - load<u32>(hist + at))
      }
    }
  }
  for (let m = from; m < to; m++) {
    const bins = hist + (<usize>m << 10)
    let n = 0.0
    let sum = 0.0
    for (let c = 0; c <= 100; c++) {
      const count = <f64>load<u32>(bins + (<usize>c << 2))
      n += count
      sum += count * load<f64>(TENTHS + (<usize>c << 3))
    }
    setF(monthCount, m, n)
    setF(monthSum, m, sum)
  }
}

/**
 * Adds the rows of patients [first, first + count) of a tenths panel's `axis` to its histograms at
 * `out`: per month, how many patients have each byte, u32 × 256 (panelSums' `everyone` is every
 * axis's, axis after axis). The caller zeroes `out` first and calls it a piece at a time, so no one
 * call runs long before V8 has its optimized code (a call runs to its end in the code it began in).
 */
function histogramRows(panel: usize, nPatients: i32, nMonths: i32, axis: i32, first: i32, count: i32, out: usize): void {
  const rowBytes = <usize>nMonths
  const axisBase = panel + <usize>(axis * nPatients) * rowBytes
  for (let p = first; p < first + count; p++) countRow(axisBase + <usize>p * rowBytes, 0, nMonths, out)
}

/**
 * One patient's statistics of one axis over months [from, end): the number of present scores, their
 * mean and the least-squares slope on month (NaN without a score, or for the slope with fewer than
 * 3 scores or a single month), written at index `at` of the three outputs.
 */
@inline function patientWindow<T>(
  panel: usize, nPatients: i32, nMonths: i32, axis: i32, p: i32, from: i32, end: i32,
  outN: usize, outMean: usize, outSlope: usize, at: i32
): void {
  rowSums<T>(panel + <usize>(axis * nPatients + p) * rowBytesOf<T>(nMonths), from, end, true, false, true, false, 0, 0)
  const denom = rowN * rowTT - rowT * rowT
  setF(outN, at, rowN)
  setF(outMean, at, rowN > 0.0 ? rowX / rowN : NaN)
  setF(outSlope, at, rowN >= 3.0 && denom > 0.0 ? (rowN * rowTX - rowT * rowX) / denom : NaN)
}

/**
 * Per selected patient and axis, over the patient's own month window [from[p], to[p]): see
 * patientWindow. Outputs are nAxes × nPatients f64, axis-major; unselected patients get 0 / NaN / NaN.
 */
function windows<T>(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: usize, to: usize, mask: usize,
  outN: usize, outMean: usize, outSlope: usize
): void {
  for (let k = 0; k < nAxes; k++) {
    const axis = getI(axes, k)
    for (let p = 0; p < nPatients; p++) {
      const selected = load<u8>(mask + <usize>p) != 0
      patientWindow<T>(panel, nPatients, nMonths, axis, p, selected ? getI(from, p) : 0, selected ? getI(to, p) : 0, outN, outMean, outSlope, k * nPatients + p)
    }
  }
}

/**
 * panelWindows for a list of patients (a cohort), with outputs for those only: nAxes × count f64,
 * axis-major, entry k × count + j for patients[j] over its window [from[j], to[j]) — the numbers
 * panelWindows gives those patients, without writing (and copying out) one entry per patient.
 */
function windowsOf<T>(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, patients: usize, count: i32, from: usize, to: usize,
  outN: usize, outMean: usize, outSlope: usize
): void {
  const rowBytes = rowBytesOf<T>(nMonths)
  let touched: u32 = 0
  for (let k = 0; k < nAxes; k++) {
    const axis = getI(axes, k)
    const axisBase = panel + <usize>(axis * nPatients) * rowBytes
    for (let j = 0; j < count; j++) {
      // Every PREFETCH_AHEAD patients, the rows of the next PREFETCH_AHEAD after those are touched:
      // their cache misses overlap (a cohort's rows are scattered; the hardware does not fetch them ahead).
      if ((j & (PREFETCH_AHEAD - 1)) == 0) {
        const end = min(j + 2 * PREFETCH_AHEAD, count)
        for (let a = j + PREFETCH_AHEAD; a < end; a++) touched ^= touchRow(axisBase + <usize>getI(patients, a) * rowBytes, rowBytes)
      }
      patientWindow<T>(panel, nPatients, nMonths, axis, getI(patients, j), getI(from, j), getI(to, j), outN, outMean, outSlope, k * count + j)
    }
  }
  prefetchSink = touched
}

// The exports: each kernel over a wide (f32) panel, and as `…Tenths` over a tenths (u8) panel.

export function panelMeanMask(panel: usize, nPatients: i32, nMonths: i32, axis: i32, from: i32, to: i32, lo: f64, hi: f64, maskIn: usize, maskOut: usize): void {
  meanMask<f32>(panel, nPatients, nMonths, axis, from, to, lo, hi, maskIn, maskOut)
}
export function panelMeanMaskTenths(panel: usize, nPatients: i32, nMonths: i32, axis: i32, from: i32, to: i32, lo: f64, hi: f64, maskIn: usize, maskOut: usize): void {
  meanMask<u8>(panel, nPatients, nMonths, axis, from, to, lo, hi, maskIn, maskOut)
}
export function panelTrend(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outCount: usize, outSum: usize, outSlope: usize, scratch: usize
): void {
  trend<f32>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outCount, outSum, outSlope, scratch)
}
export function panelTrendTenths(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outCount: usize, outSum: usize, outSlope: usize, scratch: usize
): void {
  trend<u8>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outCount, outSum, outSlope, scratch)
}
export function panelSums(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outCount: usize, outSum: usize, scratch: usize
): void {
  sums<f32>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outCount, outSum, scratch, 0)
}
export function panelSumsTenths(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outCount: usize, outSum: usize, scratch: usize, everyone: usize
): void {
  sums<u8>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outCount, outSum, scratch, everyone)
}
export function panelHistogramsTenths(panel: usize, nPatients: i32, nMonths: i32, axis: i32, first: i32, count: i32, out: usize): void {
  histogramRows(panel, nPatients, nMonths, axis, first, count, out)
}
export function panelWindows(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: usize, to: usize, mask: usize,
  outN: usize, outMean: usize, outSlope: usize
): void {
  windows<f32>(panel, nPatients, nMonths, axes, nAxes, from, to, mask, outN, outMean, outSlope)
}
export function panelWindowsTenths(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: usize, to: usize, mask: usize,
  outN: usize, outMean: usize, outSlope: usize
): void {
  windows<u8>(panel, nPatients, nMonths, axes, nAxes, from, to, mask, outN, outMean, outSlope)
}
export function panelWindowsOf(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, patients: usize, count: i32, from: usize, to: usize,
  outN: usize, outMean: usize, outSlope: usize
): void {
  windowsOf<f32>(panel, nPatients, nMonths, axes, nAxes, patients, count, from, to, outN, outMean, outSlope)
}
export function panelWindowsOfTenths(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, patients: usize, count: i32, from: usize, to: usize,
  outN: usize, outMean: usize, outSlope: usize
): void {
  windowsOf<u8>(panel, nPatients, nMonths, axes, nAxes, patients, count, from, to, outN, outMean, outSlope)
}
