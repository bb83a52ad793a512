// Correlation kernels: pairwise Pearson and Spearman for every pair of up to 8 axes, and lagged
// cross-correlation of two series. Batch APIs: many series per call; missing points are NaN and are
// skipped pairwise (a pair of points is used when both are present).
//
// Pearson: two-pass (means first, then centred sums), exact up to rounding.
// Spearman: Pearson of average ranks (ties share their mean rank) of the pairwise-complete points.
// Both give NaN with fewer than 3 complete pairs or when either side has no variance.
import { getF, setF, pearsonDense, rankAverage, erfc } from "./common"

/**
 * data: nSeries × nAxes × nPoints f64 ([series][axis][point]).
 * Outputs, nSeries × nPairs each (pairs (i,j), i<j, in row order (0,1),(0,2)…(1,2)…):
 * outPearson, outSpearman, outCount (complete pairs used, as f64). outSpearman = 0: Pearson only
 * (the ranks, most of the work, are skipped).
 * scratch: at least nPoints × 36 bytes (four f64 arrays and one i32 array).
 */
export function correlationMatrix(
  data: usize, nSeries: i32, nAxes: i32, nPoints: i32,
  outPearson: usize, outSpearman: usize, outCount: usize, scratch: usize
): void {
  const vx = scratch
  const vy = vx + (<usize>nPoints << 3)
  const rx = vy + (<usize>nPoints << 3)
  const ry = rx + (<usize>nPoints << 3)
  const idx = ry + (<usize>nPoints << 3)
  const nPairs = (nAxes * (nAxes - 1)) >> 1
  for (let s = 0; s < nSeries; s++) {
    const base = data + (<usize>(s * nAxes * nPoints) << 3)
    let p = 0
    for (let a = 0; a < nAxes; a++) {
      const xa = base + (<usize>(a * nPoints) << 3)
      for (let b = a + 1; b < nAxes; b++) {
        const xb = base + (<usize>(b * nPoints) << 3)
        let m = 0
        for (let t = 0; t < nPoints; t++) {
          const u = getF(xa, t)
          const v = getF(xb, t)
          if (!isNaN(u) && !isNaN(v)) {
            setF(vx, m, u)
            setF(vy, m, v)
            m++
          }
        }
        const o = s * nPairs + p
        setF(outCount, o, <f64>m)
        setF(outPearson, o, pearsonDense(vx, vy, m))
        if (outSpearman == 0) {
          // Pearson only.
        } else if (m >= 3) {
          rankAverage(vx, m, rx, idx)
          rankAverage(vy, m, ry, idx)
          setF(outSpearman, o, pearsonDense(rx, ry, m))
        } else {
          setF(outSpearman, o, NaN)
        }
        p++
      }
    }
  }
}

/**
 * Lagged cross-correlation: for each series pair (x leads y), Pearson r between x[t] and y[t+L]
 * for L = 0..maxLag (pairwise-complete points). Reports the lag with the largest r, that r, the
 * number of pairs it used, and a two-sided p-value: Fisher z = atanh(r)·√(m−3), p = erfc(|z|/√2),
 * Bonferroni-corrected for the maxLag+1 lags tried (p × (maxLag+1), capped at 1).
 * xs, ys: nSeries × n f64. Outputs nSeries f64 each: outLag (−1 if no lag had 3 pairs), outR, outP, outN.
 * scratch: at least n × 16 bytes.
 */
export function laggedXcorr(
  xs: usize, ys: usize, nSeries: i32, n: i32, maxLag: i32,
  outLag: usize, outR: usize, outP: usize, outN: usize, scratch: usize
): void {
  const vx = scratch
  const vy = vx + (<usize>n << 3)
  for (let s = 0; s < nSeries; s++) {
    const x = xs + (<usize>(s * n) << 3)
    const y = ys + (<usize>(s * n) << 3)
    let bestLag = -1
    let bestR = NaN
    let bestM = 0
    // Without gaps every lag's pairs are the two series shifted: correlate them in place.
    let complete = true
    for (let t = 0; t < n && complete; t++) complete = !isNaN(getF(x, t)) && !isNaN(getF(y, t))
    for (let lag = 0; lag <= maxLag; lag++) {
      let m = 0
      let r: f64
      if (complete) {
        m = n - lag > 0 ? n - lag : 0
        r = pearsonDense(x, y + (<usize>lag << 3), m)
      } else {
        for (let t = 0; t + lag < n; t++) {
          const u = getF(x, t)
          const v = getF(y, t + lag)
          if (!isNaN(u) && !isNaN(v)) {
            setF(vx, m, u)
            setF(vy, m, v)
            m++
          }
        }
        r = pearsonDense(vx, vy, m)
      }
      if (!isNaN(r) && (bestLag < 0 || r > bestR)) {
        bestLag = lag
        bestR = r
        bestM = m
      }
    }
    setF(outLag, s, <f64>bestLag)
    setF(outR, s, bestR)
    setF(outN, s, <f64>bestM)
    if (bestLag < 0) {
      setF(outP, s, NaN)
    } else if (Math.abs(bestR) >= 1.0) {
      setF(outP, s, 0.0)
    } else {
      const z = 0.5 * Math.log((1.0 + bestR) / (1.0 - bestR)) * Math.sqrt(<f64>(bestM - 3))
      const p = erfc(Math.abs(z) / Math.SQRT2) * <f64>(maxLag + 1)
      setF(outP, s, p > 1.0 ? 1.0 : p)
    }
  }
}
