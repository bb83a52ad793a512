/** Twin of assembly/kernels/cohort.ts (same contract and order of sums). */

/** maskOut[i] = maskIn[i] & (lo ≤ col[i] ≤ hi). */
export const maskRange = (col: Float64Array, lo: number, hi: number, maskIn: Uint8Array, maskOut: Uint8Array): void => {
  for (let i = 0; i < col.length; i++) {
    const x = col[i]!
    maskOut[i] = maskIn[i]! & (x >= lo && x <= hi ? 1 : 0)
  }
}

/** maskOut[i] = maskIn[i] & (col[i] is a code marked in `set`). */
export const maskInSet = (col: Int32Array, set: Uint8Array, maskIn: Uint8Array, maskOut: Uint8Array): void => {
  for (let i = 0; i < col.length; i++) {
    const c = col[i]!
    maskOut[i] = maskIn[i]! & (c >= 0 && c < set.length && set[c] !== 0 ? 1 : 0)
  }
}

/** Number of selected rows. */
/** maskOut[i] = maskIn[i] & (flags[i] ≠ 0). */
export const maskFlag = (flags: Uint8Array, maskIn: Uint8Array, maskOut: Uint8Array): void => {
  for (let i = 0; i < flags.length; i++) maskOut[i] = flags[i] !== 0 ? maskIn[i]! : 0
}

export const maskCount = (mask: Uint8Array): number => {
  let c = 0
  for (let i = 0; i < mask.length; i++) c += mask[i]!
  return c
}

/** Per-group count, sum (row order) and mean of selected present values. */
export const groupStats = (
  groups: Int32Array, values: Float64Array, mask: Uint8Array, nGroups: number,
  outCount: Float64Array, outSum: Float64Array, outMean: Float64Array
): void => {
  outCount.fill(0, 0, nGroups)
  outSum.fill(0, 0, nGroups)
  for (let i = 0; i < mask.length; i++) {
    if (mask[i] === 0) continue
    const g = groups[i]!
    const x = values[i]!
    if (g < 0 || g >= nGroups || Number.isNaN(x)) continue
    outCount[g] = outCount[g]! + 1
    outSum[g] = outSum[g]! + x
  }
  for (let g = 0; g < nGroups; g++) outMean[g] = outCount[g]! > 0 ? outSum[g]! / outCount[g]! : NaN
}

/** Type-7 quantiles of the selected present values; returns how many values were used. */
export const quantiles = (values: Float64Array, mask: Uint8Array, qs: Float64Array, out: Float64Array): number => {
  const picked: Array<number> = []
  for (let i = 0; i < values.length; i++) if (mask[i] !== 0 && !Number.isNaN(values[i]!)) picked.push(values[i]!)
  const sorted = Float64Array.from(picked).sort()
  const m = sorted.length
  for (let j = 0; j < qs.length; j++) {
    if (m === 0) {
      out[j] = NaN
      continue
    }
    const h = (m - 1) * qs[j]!
    const lo = Math.floor(h)
    const hi = lo + 1 < m ? lo + 1 : lo
    const a = sorted[lo]!
    out[j] = a + (h - lo) * (sorted[hi]! - a)
  }
  return m
}
