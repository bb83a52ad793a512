// The 28 temporal decay rules, evaluated for many patients at once (docs/temporal.md has the
// table with every threshold). Twin: src/kernels/reference/decayRules.ts (same order of tests).
// Single-axis rules run per axis on its present points (NaN skipped, t = index); a rule fires for
// the patient when it fires on any axis. Multi-axis rules (14–17, 27, 28) use each axis's OLS
// slope; an axis is "declining" with ≥ 3 points and slope < −0.05 per interval.
import { getF, setF, compact, meanRange, sdRange, slopeRange, pearsonDense, select, atLeast, atMost, below, above } from "./common"

const DECLINE_SLOPE: f64 = -0.05

function tCrit(df: i32): f64 {
  if (df > 120) return 1.98
  if (df > 60) return 2.0
  if (df > 40) return 2.021
  if (df > 30) return 2.042
  switch (df) {
    case 1: return 12.706
    case 2: return 4.303
    case 3: return 3.182
    case 4: return 2.776
    case 5: return 2.571
    case 6: return 2.447
    case 7: return 2.365
    case 8: return 2.306
    case 9: return 2.262
    case 10: return 2.228
    case 11: return 2.201
    case 12: return 2.179
    case 13: return 2.16
    case 14: return 2.145
    case 15: return 2.131
    case 16: return 2.12
    case 17: return 2.11
    case 18: return 2.101
    case 19: return 2.093
    case 20: return 2.086
    case 21: return 2.08
    case 22: return 2.074
    case 23: return 2.069
    case 24: return 2.064
    case 25: return 2.06
    case 26: return 2.056
    case 27: return 2.052
    case 28: return 2.048
    case 29: return 2.045
    default: return 2.042
  }
}

let lfSlope: f64 = NaN
let lfR2: f64 = NaN

/** Log-linear fit of ln v on t (all v > 0, else NaN); result in lfSlope, lfR2. */
function logFit(v: usize, t: usize, m: i32, lv: usize): void {
  lfSlope = NaN
  lfR2 = NaN
  for (let i = 0; i < m; i++) {
    const x = getF(v, i)
    if (!(x > 0.0)) return
    setF(lv, i, Math.log(x))
  }
  const b = slopeRange(t, lv, 0, m)
  if (isNaN(b)) return
  const my = meanRange(lv, 0, m)
  const mt = meanRange(t, 0, m)
  let ssr = 0.0
  let sst = 0.0
  for (let i = 0; i < m; i++) {
    const fit = my + b * (getF(t, i) - mt)
    const r = getF(lv, i) - fit
    ssr += r * r
    const d = getF(lv, i) - my
    sst += d * d
  }
  lfSlope = b
  lfR2 = sst > 0.0 ? 1.0 - ssr / sst : NaN
}

/** Median of a[0..m) via quickselect on a copy in tmp (the same value a sort would give). */
function median(a: usize, m: i32, tmp: usize): f64 {
  for (let i = 0; i < m; i++) setF(tmp, i, getF(a, i))
  const k = (m - 1) >> 1
  select(tmp, 0, m - 1, k)
  const lo = getF(tmp, k)
  if (m % 2 == 1) return lo
  let hi = getF(tmp, k + 1)
  for (let i = k + 2; i < m; i++) if (getF(tmp, i) < hi) hi = getF(tmp, i)
  return 0.5 * (lo + hi)
}

function singleAxisMask(v: usize, t: usize, m: i32, s1: usize, s2: usize): i32 {
  let mask = 0
  if (m == 0) return 0
  const last = getF(v, m - 1)
  const slope = slopeRange(t, v, 0, m)
  // 01
  let run = 0
  let maxRun = 0
  for (let i = 0; i + 1 < m; i++) {
    run = getF(v, i + 1) < getF(v, i) ? run + 1 : 0
    if (run > maxRun) maxRun = run
  }
  if (maxRun >= 3) mask |= 1 << 0
  // 02
  let sharpAt = -1
  for (let i = 0; i + 1 < m; i++) {
    if (atMost(getF(v, i + 1) - getF(v, i), -1.5)) {
      sharpAt = i
      break
    }
  }
  if (sharpAt >= 0) mask |= 1 << 1
  // 03
  if (below(last, 3.0)) mask |= 1 << 2
  // 04
  if (m >= 4) {
    const q = max<i32>(2, m / 3)
    const mu = meanRange(v, 0, q)
    const sd = sdRange(v, 0, q)
    if (below(last, mu - (sd > 0.25 ? sd : 0.25))) mask |= 1 << 3
  }
  const h = m / 2
  const firstHalf = m >= 6 ? slopeRange(t, v, 0, h) : NaN
  const secondHalf = m >= 6 ? slopeRange(t, v, h, m) : NaN
  // 05
  if (m >= 6 && below(secondHalf, -0.1) && below(secondHalf, firstHalf - 0.1)) mask |= 1 << 4
  // 06, 11
  if (m >= 4) {
    logFit(v, t, m, s1)
    if (below(lfSlope, -0.02) && lfR2 >= 0.9) mask |= 1 << 5
    if (below(lfSlope, 0.0) && Math.log(2.0) / -lfSlope < 6.0 && atLeast(getF(v, 0) - last, 1.0)) mask |= 1 << 10
  }
  const q3 = m / 3
  // 07
  if (m >= 6) {
    let early = -Infinity
    for (let i = 0; i < q3; i++) if (getF(v, i) > early) early = getF(v, i)
    let lo = Infinity
    let hi = -Infinity
    for (let i = m - q3; i < m; i++) {
      const x = getF(v, i)
      if (x < lo) lo = x
      if (x > hi) hi = x
    }
    if (atLeast(early - meanRange(v, m - q3, m), 1.0) && atMost(hi - lo, 0.5)) mask |= 1 << 6
  }
  // 08
  if (m >= 7) {
    for (let i = 0; i + 1 < m; i++) setF(s2, i, getF(v, i + 1) - getF(v, i))
    const k = (2 * (m - 1)) / 3
    if (m - 1 - k >= 2) {
      const sa = sdRange(s2, 0, k)
      const sb = sdRange(s2, k, m - 1)
      if (above(sb, 2.0 * sa) && above(sb, 0.5)) mask |= 1 << 7
    }
  }
  let iMin = 0
  for (let i = 1; i < m; i++) if (getF(v, i) < getF(v, iMin)) iMin = i
  let peak = -Infinity
  for (let i = 0; i <= iMin; i++) if (getF(v, i) > peak) peak = getF(v, i)
  const drop = peak - getF(v, iMin)
  const recovered = last - getF(v, iMin)
  // 09
  if (m >= 6 && iMin < m - q3 && atLeast(drop, 1.0) && atLeast(recovered, 0.1) && below(recovered, 0.3 * drop) && atMost(slopeRange(t, v, m - q3, m), 0.02)) {
    mask |= 1 << 8
  }
  // 10
  if (m >= 4 && iMin < m - 1 && atLeast(drop, 1.0) && atLeast(recovered, 1.0)) mask |= 1 << 9
  // 12
  if (m >= 3 && atLeast(last, 3.0) && below(last + 6.0 * slope, 3.0)) mask |= 1 << 11
  // 13
  if (m >= 4 && below(slope, 0.0)) {
    const mt = meanRange(t, 0, m)
    const mv = meanRange(v, 0, m)
    let sxx = 0.0
    let ssr = 0.0
    for (let i = 0; i < m; i++) {
      const dt = getF(t, i) - mt
      sxx += dt * dt
      const r = getF(v, i) - (mv + slope * dt)
      ssr += r * r
    }
    const se = Math.sqrt(ssr / <f64>(m - 2) / sxx)
    if (se == 0.0 || slope / se < -tCrit(m - 2)) mask |= 1 << 12
  }
  // 18
  if (m >= 6) {
    for (let k = 3; k <= m - 3; k++) {
      const a = meanRange(v, 0, k)
      const b = meanRange(v, k, m)
      const sa = sdRange(v, 0, k)
      const sb = sdRange(v, k, m)
      const pooled = Math.sqrt((<f64>(k - 1) * sa * sa + <f64>(m - k - 1) * sb * sb) / <f64>(m - 2))
      if (atLeast(a - b, 1.5) && atMost(pooled, 0.6) && atMost(pooled, 0.25 * (a - b))) {
        mask |= 1 << 17
        break
      }
    }
  }
  // 19
  if (m >= 6) {
    let flips = 0
    let absSum = 0.0
    let prev = 0
    for (let i = 0; i + 1 < m; i++) {
      const d = getF(v, i + 1) - getF(v, i)
      absSum += Math.abs(d)
      const sign = d > 0.0 ? 1 : d < 0.0 ? -1 : 0
      if (sign != 0) {
        if (prev != 0 && sign != prev) flips++
        prev = sign
      }
    }
    if (atLeast(<f64>flips, 0.6 * <f64>(m - 2)) && atLeast(absSum / <f64>(m - 1), 0.5)) mask |= 1 << 18
  }
  // 20
  if (m >= 3 && atMost(getF(v, m - 1), 1.0) && atMost(getF(v, m - 2), 1.0) && atMost(getF(v, m - 3), 1.0)) mask |= 1 << 19
  // 21
  if (m >= 3) {
    const q = max<i32>(1, q3)
    let top = -Infinity
    for (let i = 0; i < q; i++) if (getF(v, i) > top) top = getF(v, i)
    if (atLeast(top, 8.0) && atMost(last, top - 1.5) && below(last, 7.0)) mask |= 1 << 20
  }
  // 22
  if (m >= 6 && atLeast(slope, -0.1) && below(slope, -0.02)) {
    let notRising = 0
    for (let i = 0; i + 1 < m; i++) if (getF(v, i + 1) <= getF(v, i)) notRising++
    if (atLeast(<f64>notRising, 0.6 * <f64>(m - 1)) && atMost(slope * (getF(t, m - 1) - getF(t, 0)), -0.5)) mask |= 1 << 21
  }
  // 23
  for (let i = 0; i + 4 < m; i++) {
    const d = getF(v, i + 1) - getF(v, i)
    if (atMost(d, -1.5)) {
      let best = -Infinity
      for (let j = i + 2; j <= i + 4; j++) if (getF(v, j) > best) best = getF(v, j)
      if (below(best - getF(v, i + 1), 0.5 * -d)) {
        mask |= 1 << 22
        break
      }
    }
  }
  // 24
  if (m >= 6) {
    const k = (2 * m) / 3
    if (m - k >= 2) {
      const sa = sdRange(v, 0, k)
      const sb = sdRange(v, k, m)
      if (atLeast(sa, 0.5) && below(sb, 0.25 * sa)) mask |= 1 << 23
    }
  }
  // 25
  if (m >= 5) {
    const med = median(v, m, s1)
    for (let i = 0; i < m; i++) setF(s2, i, Math.abs(getF(v, i) - med))
    const mad = median(s2, m, s1)
    if (above(mad, 0.0)) {
      for (let i = m - 3; i < m; i++) {
        if ((getF(v, i) - med) / (1.4826 * mad) < -3.5) {
          mask |= 1 << 24
          break
        }
      }
    }
  }
  // 26
  if (m >= 6 && above(firstHalf, 0.05) && below(secondHalf, -0.05)) mask |= 1 << 25
  return mask
}

/**
 * data: nPatients × nAxes × nPoints; axisCodes: i32 canonical index of each axis (0 = PO … 7 = PV).
 * outMask (i32 per patient): every rule fired; outAxisMask (i32 per patient per axis): single-axis rules.
 * scratch: at least (2·nAxes·nPoints + 4·nPoints + 2·nAxes) × 8 bytes.
 */
export function evaluateRules(
  data: usize, nPatients: i32, nAxes: i32, nPoints: i32, axisCodes: usize,
  outMask: usize, outAxisMask: usize, scratch: usize
): void {
  const vals = scratch
  const ts = vals + (<usize>(nAxes * nPoints) << 3)
  const s1 = ts + (<usize>(nAxes * nPoints) << 3)
  const s2 = s1 + (<usize>nPoints << 3)
  const px = s2 + (<usize>nPoints << 3)
  const py = px + (<usize>nPoints << 3)
  const ms = py + (<usize>nPoints << 3)
  const slopes = ms + (<usize>nAxes << 3)
  for (let p = 0; p < nPatients; p++) {
    let mask = 0
    for (let a = 0; a < nAxes; a++) {
      const v = vals + (<usize>(a * nPoints) << 3)
      const t = ts + (<usize>(a * nPoints) << 3)
      const m = compact(data + (<usize>((p * nAxes + a) * nPoints) << 3), nPoints, v, t)
      setF(ms, a, <f64>m)
      setF(slopes, a, slopeRange(t, v, 0, m))
      const am = singleAxisMask(v, t, m, s1, s2)
      store<i32>(outAxisMask + (<usize>(p * nAxes + a) << 2), am)
      mask |= am
    }
    // 14
    for (let a = 0; a < nAxes && (mask & (1 << 13)) == 0; a++) {
      if (!declining(ms, slopes, a)) continue
      for (let b = a + 1; b < nAxes; b++) {
        if (!declining(ms, slopes, b)) continue
        let m = 0
        for (let i = 0; i < nPoints; i++) {
          const x = getF(data, (p * nAxes + a) * nPoints + i)
          const y = getF(data, (p * nAxes + b) * nPoints + i)
          if (!isNaN(x) && !isNaN(y)) {
            setF(px, m, x)
            setF(py, m, y)
            m++
          }
        }
        if (pearsonDense(px, py, m) >= 0.7) {
          mask |= 1 << 13
          break
        }
      }
    }
    // 15
    let nDeclining = 0
    for (let a = 0; a < nAxes; a++) if (declining(ms, slopes, a)) nDeclining++
    if (nDeclining >= 3) mask |= 1 << 14
    // 16, 17
    const po = codeAt(axisCodes, nAxes, 0)
    const nm = codeAt(axisCodes, nAxes, 1)
    const er = codeAt(axisCodes, nAxes, 2)
    const rs = codeAt(axisCodes, nAxes, 4)
    if (po >= 0 && nm >= 0 && declining(ms, slopes, po) && declining(ms, slopes, nm)) mask |= 1 << 15
    if (er >= 0 && rs >= 0 && declining(ms, slopes, er) && declining(ms, slopes, rs)) mask |= 1 << 16
    // 27
    if (nAxes >= 2) {
      for (let a = 0; a < nAxes; a++) {
        if (!declining(ms, slopes, a)) continue
        let sum = 0.0
        let n = 0
        for (let b = 0; b < nAxes; b++) {
          if (b != a && getF(ms, b) >= 2.0 && !isNaN(getF(slopes, b))) {
            sum += getF(slopes, b)
            n++
          }
        }
        if (n > 0 && atLeast(sum / <f64>n, 0.02)) {
          mask |= 1 << 26
          break
        }
      }
    }
    // 28
    let lastSum = 0.0
    let lastN = 0
    for (let a = 0; a < nAxes; a++) {
      const m = <i32>getF(ms, a)
      if (m > 0) {
        lastSum += getF(vals, a * nPoints + m - 1)
        lastN++
      }
    }
    if (lastN >= 2 && below(lastSum / <f64>lastN, 4.0)) mask |= 1 << 27
    store<i32>(outMask + (<usize>p << 2), mask)
  }
}

@inline function declining(ms: usize, slopes: usize, a: i32): bool {
  return getF(ms, a) >= 3.0 && below(getF(slopes, a), DECLINE_SLOPE)
}

function codeAt(codes: usize, nAxes: i32, code: i32): i32 {
  for (let a = 0; a < nAxes; a++) if (load<i32>(codes + (<usize>a << 2)) == code) return a
  return -1
}
