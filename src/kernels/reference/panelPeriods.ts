/**
 * Twin of assembly/kernels/panel-periods.ts (same contract): per axis and period group, over the
 * selected patients in patient order, the patients with a present score in the group and Σ Sᵢ²,
 * Σ Sᵢ·nᵢ, Σ nᵢ² of their sums Sᵢ and counts nᵢ of present scores there. Patient by patient and
 * month by month in the same order as the WASM loop, so the same bits.
 */
import { scoreReader } from "../tenths.ts"

type PanelData = Float32Array | Uint8Array

export const panelPeriods = (
  panel: PanelData, nPatients: number, nMonths: number, axes: Int32Array, from: number, to: number,
  monthGroup: Int32Array, nGroups: number, mask: Uint8Array,
  outPatients: Float64Array, outSS: Float64Array, outSN: Float64Array, outNN: Float64Array
): void => {
  const score = scoreReader(panel)
  for (const out of [outPatients, outSS, outSN, outNN]) out.fill(0)
  const sums = new Float64Array(nGroups)
  const counts = new Float64Array(nGroups)
  for (let k = 0; k < axes.length; k++) {
    const at = k * nGroups
    for (let p = 0; p < nPatients; p++) {
      if (mask[p] === 0) continue
      sums.fill(0)
      counts.fill(0)
      const base = (axes[k]! * nPatients + p) * nMonths
      for (let m = from; m < to; m++) {
        const g = monthGroup[m]!
        const x = score(base + m)
        if (g < 0 || g >= nGroups || Number.isNaN(x)) continue
        sums[g] = sums[g]! + x
        counts[g] = counts[g]! + 1
      }
      for (let g = 0; g < nGroups; g++) {
        const n = counts[g]!
        if (n === 0) continue
        const s = sums[g]!
        outPatients[at + g] = outPatients[at + g]! + 1
        outSS[at + g] = outSS[at + g]! + s * s
        outSN[at + g] = outSN[at + g]! + s * n
        outNN[at + g] = outNN[at + g]! + n * n
      }
    }
  }
}
