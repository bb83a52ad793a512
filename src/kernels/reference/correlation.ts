/** Twin of assembly/kernels/correlation.ts (same contract, same operation order). */
import { erfc, pearsonDense, rankAverage } from "./common.ts"

/** See the WASM kernel: data [series][axis][point]; outputs nSeries × nPairs; outSpearman undefined = Pearson only. */
export const correlationMatrix = (
  data: Float64Array, nSeries: number, nAxes: number, nPoints: number,
  outPearson: Float64Array, outSpearman: Float64Array | undefined, outCount: Float64Array
): void => {
  const vx = new Float64Array(nPoints)
  const vy = new Float64Array(nPoints)
  const rx = new Float64Array(nPoints)
  const ry = new Float64Array(nPoints)
  const nPairs = (nAxes * (nAxes - 1)) >> 1
  for (let s = 0; s < nSeries; s++) {
    const base = s * nAxes * nPoints
    let p = 0
    for (let a = 0; a < nAxes; a++) {
      for (let b = a + 1; b < nAxes; b++) {
        let m = 0
        for (let t = 0; t < nPoints; t++) {
          const u = data[base + a * nPoints + t]!
          const v = data[base + b * nPoints + t]!
          if (!Number.isNaN(u) && !Number.isNaN(v)) {
            vx[m] = u
            vy[m] = v
            m++
          }
        }
        const o = s * nPairs + p
        outCount[o] = m
        outPearson[o] = pearsonDense(vx, vy, m)
        if (outSpearman === undefined) {
          // Pearson only.
        } else if (m >= 3) {
          rankAverage(vx, m, rx)
          rankAverage(vy, m, ry)
          outSpearman[o] = pearsonDense(rx, ry, m)
        } else outSpearman[o] = NaN
        p++
      }
    }
  }
}

/** See the WASM kernel: best lag of x leading y, its r, Bonferroni-corrected Fisher-z p, pairs used. */
export const laggedXcorr = (
  xs: Float64Array, ys: Float64Array, nSeries: number, n: number, maxLag: number,
  outLag: Float64Array, outR: Float64Array, outP: Float64Array, outN: Float64Array
): void => {
  const vx = new Float64Array(n)
  const vy = new Float64Array(n)
  for (let s = 0; s < nSeries; s++) {
    let bestLag = -1
    let bestR = NaN
    let bestM = 0
    const x = xs.subarray(s * n, (s + 1) * n)
    const y = ys.subarray(s * n, (s + 1) * n)
    // Without gaps every lag's pairs are the two series shifted: correlate the views directly.
    let complete = true
    for (let t = 0; t < n && complete; t++) complete = !Number.isNaN(x[t]!) && !Number.isNaN(y[t]!)
    for (let lag = 0; lag <= maxLag; lag++) {
      let m = 0
      let r: number
      if (complete) {
        m = Math.max(0, n - lag)
        r = pearsonDense(x, y.subarray(lag), m)
      } else {
        for (let t = 0; t + lag < n; t++) {
          const u = x[t]!
          const v = y[t + lag]!
          if (!Number.isNaN(u) && !Number.isNaN(v)) {
            vx[m] = u
            vy[m] = v
            m++
          }
        }
        r = pearsonDense(vx, vy, m)
      }
      if (!Number.isNaN(r) && (bestLag < 0 || r > bestR)) {
        bestLag = lag
        bestR = r
        bestM = m
      }
    }
    outLag[s] = bestLag
    outR[s] = bestR
    outN[s] = bestM
    if (bestLag < 0) outP[s] = NaN
    else if (Math.abs(bestR) >= 1) outP[s] = 0
    else {
      const z = 0.5 * Math.log((1 + bestR) / (1 - bestR)) * Math.sqrt(bestM - 3)
      const p = erfc(Math.abs(z) / Math.SQRT2) * (maxLag + 1)
      outP[s] = p > 1 ? 1 : p
    }
  }
}
