// Per-period patient moments over the axis panel (panel.ts's layout and storages): what a period
// mean's cluster-robust interval needs beyond panelSums' count and sum of scores — the patients
// scored in the period, and over them Σ Sᵢ², Σ Sᵢ·nᵢ and Σ nᵢ², where Sᵢ and nᵢ are patient i's
// sum and number of present scores in the period.
// Twin: src/kernels/reference/panelPeriods.ts.
import { getF, getI, setF } from "./common"
import { rowBytesOf, scoreAt } from "./panel-rows"

/** Eight selected flags at once: the scan skips eight unselected patients with one load. */
const NONE_SELECTED: u64 = 0

/**
 * For each axis k and group g (monthGroup[m] for months [from, to), −1 = none), over the selected
 * patients in patient order: out[0] the patients with a present score in the group, out[1] Σ Sᵢ²,
 * out[2] Σ Sᵢ·nᵢ, out[3] Σ nᵢ² — each nAxes × nGroups f64, axis-major. `scratch` holds
 * 2 × nGroups f64 (one patient's Sᵢ and nᵢ per group).
 */
function periods<T>(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outPatients: usize, outSS: usize, outSN: usize, outNN: usize, scratch: usize
): void {
  const rowBytes = rowBytesOf<T>(nMonths)
  const size = <usize>(nAxes * nGroups) << 3
  memory.fill(outPatients, 0, size)
  memory.fill(outSS, 0, size)
  memory.fill(outSN, 0, size)
  memory.fill(outNN, 0, size)
  const sums = scratch
  const counts = scratch + (<usize>nGroups << 3)
  for (let k = 0; k < nAxes; k++) {
    const axisBase = panel + <usize>(getI(axes, k) * nPatients) * rowBytes
    const at = k * nGroups
    for (let p = 0; p < nPatients; p++) {
      if ((p & 7) == 0 && p + 8 <= nPatients && load<u64>(mask + <usize>p) == NONE_SELECTED) {
        p += 7
        continue
      }
      if (load<u8>(mask + <usize>p) == 0) continue
      memory.fill(scratch, 0, <usize>nGroups << 4)
      const row = axisBase + <usize>p * rowBytes
      for (let m = from; m < to; m++) {
        const g = getI(monthGroup, m)
        const x = scoreAt<T>(row, m)
        if (g < 0 || g >= nGroups || isNaN(x)) continue
        setF(sums, g, getF(sums, g) + x)
        setF(counts, g, getF(counts, g) + 1.0)
      }
      for (let g = 0; g < nGroups; g++) {
        const n = getF(counts, g)
        if (n == 0.0) continue
        const s = getF(sums, g)
        setF(outPatients, at + g, getF(outPatients, at + g) + 1.0)
        setF(outSS, at + g, getF(outSS, at + g) + s * s)
        setF(outSN, at + g, getF(outSN, at + g) + s * n)
        setF(outNN, at + g, getF(outNN, at + g) + n * n)
      }
    }
  }
}

export function panelPeriods(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outPatients: usize, outSS: usize, outSN: usize, outNN: usize, scratch: usize
): void {
  periods<f32>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outPatients, outSS, outSN, outNN, scratch)
}
export function panelPeriodsTenths(
  panel: usize, nPatients: i32, nMonths: i32, axes: usize, nAxes: i32, from: i32, to: i32,
  monthGroup: usize, nGroups: i32, mask: usize, outPatients: usize, outSS: usize, outSN: usize, outNN: usize, scratch: usize
): void {
  periods<u8>(panel, nPatients, nMonths, axes, nAxes, from, to, monthGroup, nGroups, mask, outPatients, outSS, outSN, outNN, scratch)
}
