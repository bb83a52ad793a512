/**
 * Twin of assembly/kernels/panel.ts (same contract), over either storage of the panel (wide f32 or
 * tenths: src/kernels/tenths.ts), read through `scoreReader`. The WASM side sums two months per
 * step and folds month sums into groups; for one-decimal scores stored as f32 every such sum is
 * exact in f64, so the results are the same bits.
 */
import { scoreReader } from "../tenths.ts"
import { atLeast, atMost } from "../thresholds.ts"

type PanelData = Float32Array | Uint8Array

/** maskOut[p] = maskIn[p] & (lo ≤ mean of the patient's present `axis` scores in months [from, to) ≤ hi). */
export const panelMeanMask = (
  panel: PanelData, nPatients: number, nMonths: number, axis: number, from: number, to: number,
  lo: number, hi: number, maskIn: Uint8Array, maskOut: Uint8Array
): void => {
  const score = scoreReader(panel)
  for (let p = 0; p < nPatients; p++) {
    let keep = 0
    if (maskIn[p] !== 0) {
      const base = (axis * nPatients + p) * nMonths
      let n = 0
      let s = 0
      for (let m = from; m < to; m++) {
        const x = score(base + m)
        if (Number.isNaN(x)) continue
        n++
        s += x
      }
      if (n > 0) {
        const mean = s / n
        keep = atLeast(mean, lo) && atMost(mean, hi) ? 1 : 0
      }
    }
    maskOut[p] = keep
  }
}

/** Per axis: per-group count and sum of present scores, and the count, Σ and Σ² of per-patient OLS slopes. */
export const panelTrend = (
  panel: PanelData, nPatients: number, nMonths: number, axes: Int32Array, from: number, to: number,
  monthGroup: Int32Array, nGroups: number, mask: Uint8Array,
  outCount: Float64Array, outSum: Float64Array, outSlope: Float64Array
): void => periodScan(panel, nPatients, nMonths, axes, from, to, monthGroup, nGroups, mask, outCount, outSum, outSlope)

/** panelTrend's per-group counts and sums without the slopes. */
export const panelSums = (
  panel: PanelData, nPatients: number, nMonths: number, axes: Int32Array, from: number, to: number,
  monthGroup: Int32Array, nGroups: number, mask: Uint8Array,
  outCount: Float64Array, outSum: Float64Array
): void => periodScan(panel, nPatients, nMonths, axes, from, to, monthGroup, nGroups, mask, outCount, outSum, undefined)

const periodScan = (
  panel: PanelData, nPatients: number, nMonths: number, axes: Int32Array, from: number, to: number,
  monthGroup: Int32Array, nGroups: number, mask: Uint8Array,
  outCount: Float64Array, outSum: Float64Array, outSlope: Float64Array | undefined
): void => {
  const score = scoreReader(panel)
  outCount.fill(0)
  outSum.fill(0)
  outSlope?.fill(0)
  for (let k = 0; k < axes.length; k++) {
    const axis = axes[k]!
    let sn = 0
    let ss = 0
    let sq = 0
    for (let p = 0; p < nPatients; p++) {
      if (mask[p] === 0) continue
      const base = (axis * nPatients + p) * nMonths
      let n = 0
      let st = 0
      let sx = 0
      let stt = 0
      let stx = 0
      for (let m = from; m < to; m++) {
        const x = score(base + m)
        if (Number.isNaN(x)) continue
        const g = monthGroup[m]!
        if (g >= 0 && g < nGroups) {
          const at = k * nGroups + g
          outCount[at] = outCount[at]! + 1
          outSum[at] = outSum[at]! + x
        }
        n += 1
        st += m
        sx += x
        stt += m * m
        stx += m * x
      }
      const denom = n * stt - st * st
      if (n >= 3 && denom > 0) {
        const slope = (n * stx - st * sx) / denom
        sn += 1
        ss += slope
        sq += slope * slope
      }
    }
    if (outSlope === undefined) continue
    outSlope[k * 3] = sn
    outSlope[k * 3 + 1] = ss
    outSlope[k * 3 + 2] = sq
  }
}

/** One patient's count, mean and OLS slope of one axis's present scores over months [from, end), written at `at`. */
const patientWindow = (
  score: (i: number) => number, nPatients: number, nMonths: number, axis: number, p: number, from: number, end: number,
  outN: Float64Array, outMean: Float64Array, outSlope: Float64Array, at: number
): void => {
  let n = 0
  let st = 0
  let sx = 0
  let stt = 0
  let stx = 0
  const base = (axis * nPatients + p) * nMonths
  for (let m = from; m < end; m++) {
    const x = score(base + m)
    if (Number.isNaN(x)) continue
    n += 1
    st += m
    sx += x
    stt += m * m
    stx += m * x
  }
  const denom = n * stt - st * st
  outN[at] = n
  outMean[at] = n > 0 ? sx / n : Number.NaN
  outSlope[at] = n >= 3 && denom > 0 ? (n * stx - st * sx) / denom : Number.NaN
}

/** Per selected patient and axis over its own window [from[p], to[p]): count, mean and OLS slope of present scores. */
export const panelWindows = (
  panel: PanelData, nPatients: number, nMonths: number, axes: Int32Array, from: Int32Array, to: Int32Array, mask: Uint8Array,
  outN: Float64Array, outMean: Float64Array, outSlope: Float64Array
): void => {
  const score = scoreReader(panel)
  for (let k = 0; k < axes.length; k++) {
    for (let p = 0; p < nPatients; p++) {
      const selected = mask[p] !== 0
      patientWindow(score, nPatients, nMonths, axes[k]!, p, selected ? from[p]! : 0, selected ? to[p]! : 0, outN, outMean, outSlope, k * nPatients + p)
    }
  }
}

/** panelWindows for the listed patients only: entry k × count + j for patients[j] over [from[j], to[j]). */
export const panelWindowsOf = (
  panel: PanelData, nPatients: number, nMonths: number, axes: Int32Array, patients: Int32Array, from: Int32Array, to: Int32Array,
  outN: Float64Array, outMean: Float64Array, outSlope: Float64Array
): void => {
  const count = patients.length
  const score = scoreReader(panel)
  for (let k = 0; k < axes.length; k++) {
    for (let j = 0; j < count; j++) patientWindow(score, nPatients, nMonths, axes[k]!, patients[j]!, from[j]!, to[j]!, outN, outMean, outSlope, k * count + j)
  }
}
