// Kernels over the axis panel: f32 scores laid out axis-major, panel[(axis × nPatients + patient) ×
// nMonths + month], NaN where a month or a value is missing. Twin: src/kernels/reference/panel.ts.
import { getF, getI, setF } from "./common"

@inline function score(panel: usize, row: i32, nMonths: i32, m: i32): f64 {
  return <f64>load<f32>(panel + ((<usize>row * <usize>nMonths + <usize>m) << 2))
}

/**
 * maskOut[p] = maskIn[p] & (lo ≤ mean of the patient's present scores of `axis` in months [from, to) ≤ hi);
 * a patient with no score in the range is never selected. In place allowed.
 */
export function panelMeanMask(
  panel: usize, nPatients: i32, nMonths: i32, axis: i32, from: i32, to: i32, lo: f64, hi: f64, maskIn: usize, maskOut: usize
): void {
  for (let p = 0; p < nPatients; p++) {
    let keep: u8 = 0
    if (load<u8>(maskIn + <usize>p) != 0) {
      const row = axis * nPatients + p
      let n = 0
      let s = 0.0
      for (let m = from; m < to; m++) {
        const x = score(panel, row, nMonths, m)
        if (isNaN(x)) continue
        n++
        s += x
      }
      if (n > 0) {
        const mean = s / <f64>n
        keep = mean >= lo && mean <= hi ? 1 : 0
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
export function panelTrend(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outCount: usize, outSum: usize, outSlope: usize
): void {
  for (let i = 0; i < nAxes * nGroups; i++) {
    setF(outCount, i, 0.0)
    setF(outSum, i, 0.0)
  }
  for (let i = 0; i < nAxes * 3; i++) setF(outSlope, i, 0.0)
  for (let k = 0; k < nAxes; k++) {
    const axis = getI(axes, k)
    let sn = 0.0
    let ss = 0.0
    let sq = 0.0
    for (let p = 0; p < nPatients; p++) {
      if (load<u8>(mask + <usize>p) == 0) continue
      const row = axis * nPatients + p
      let n = 0.0
      let st = 0.0
      let sx = 0.0
      let stt = 0.0
      let stx = 0.0
      for (let m = from; m < to; m++) {
        const x = score(panel, row, nMonths, m)
        if (isNaN(x)) continue
        const g = getI(monthGroup, m)
        if (g >= 0 && g < nGroups) {
          const at = k * nGroups + g
          setF(outCount, at, getF(outCount, at) + 1.0)
          setF(outSum, at, getF(outSum, at) + x)
        }
        const t = <f64>m
        n += 1.0
        st += t
        sx += x
        stt += t * t
        stx += t * x
      }
      const denom = n * stt - st * st
      if (n >= 3.0 && denom > 0.0) {
        const slope = (n * stx - st * sx) / denom
        sn += 1.0
        ss += slope
        sq += slope * slope
      }
    }
    setF(outSlope, k * 3, sn)
    setF(outSlope, k * 3 + 1, ss)
    setF(outSlope, k * 3 + 2, sq)
  }
}
