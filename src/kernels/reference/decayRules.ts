/**
 * Twin of assembly/kernels/decay-rules.ts: the 28 temporal decay rules (docs/temporal.md has the
 * table). Single-axis rules (all but 14–17, 27, 28) are evaluated per axis on its present points
 * (NaN skipped, t = index); a rule fires for the patient when it fires on any axis.
 * Multi-axis rules use each axis's OLS slope (a "declining" axis has slope < −0.05 per interval).
 */
import { atLeast, atMost, above, below } from "../thresholds.ts"
import { compact, meanRange, pearsonDense, sdRange, slopeRange } from "./common.ts"

export { RULE_NAMES } from "../../plugin/names.ts"


/** Two-sided 5 % critical values of Student's t for df = 1..30 (then 40, 60, 120 by range). */
export const T_CRIT = [
  12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12,
  2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042
]
/** Critical t for df, conservative between table rows (uses the smaller df's value). */
export const tCrit = (df: number): number =>
  df <= 30 ? T_CRIT[df - 1]! : df <= 40 ? 2.042 : df <= 60 ? 2.021 : df <= 120 ? 2.0 : 1.98

/** Slope below which an axis counts as declining (points per interval). */
export const DECLINE_SLOPE = -0.05

/** Log-linear fit of ln v on t over all points (all must be > 0): [slope, R²], or NaN. */
const logFit = (v: Float64Array, t: Float64Array, m: number, lv: Float64Array): [number, number] => {
  for (let i = 0; i < m; i++) {
    if (!(v[i]! > 0)) return [NaN, NaN]
    lv[i] = Math.log(v[i]!)
  }
  const b = slopeRange(t, lv, 0, m)
  if (Number.isNaN(b)) return [NaN, NaN]
  const my = meanRange(lv, 0, m)
  const mt = meanRange(t, 0, m)
  let ssr = 0
  let sst = 0
  for (let i = 0; i < m; i++) {
    const fit = my + b * (t[i]! - mt)
    const r = lv[i]! - fit
    ssr += r * r
    const d = lv[i]! - my
    sst += d * d
  }
  return [b, sst > 0 ? 1 - ssr / sst : NaN]
}

/** Median of a[from..to) using `tmp` as scratch. */
const median = (a: Float64Array, m: number, tmp: Float64Array): number => {
  for (let i = 0; i < m; i++) tmp[i] = a[i]!
  const s = tmp.subarray(0, m).sort()
  return m % 2 === 1 ? s[(m - 1) >> 1]! : 0.5 * (s[(m >> 1) - 1]! + s[m >> 1]!)
}

/** One axis's present points and what several rules share about them. */
interface AxisPoints {
  readonly v: Float64Array
  readonly t: Float64Array
  readonly m: number
  /** Scratch of at least m entries each. */
  readonly s1: Float64Array
  readonly s2: Float64Array
  readonly last: number
  /** The OLS slope over all points, and over each half (NaN under 6 points). */
  readonly slope: number
  readonly firstHalf: number
  readonly secondHalf: number
  /** A third of the points, rounded down. */
  readonly q3: number
}

/** Rules 01–08 and 11: declines, drops, levels against baselines, decay fits, plateaus and volatility. */
const declineRules = (x: AxisPoints): number => {
  const { firstHalf, last, m, q3, s1, s2, secondHalf, slope, t, v } = x
  let mask = 0
  // 01 sustained_decline: at least 3 consecutive drops
  let run = 0
  let maxRun = 0
  for (let i = 0; i + 1 < m; i++) {
    run = v[i + 1]! < v[i]! ? run + 1 : 0
    if (run > maxRun) maxRun = run
  }
  if (maxRun >= 3) mask |= 1 << 0
  // 02 sharp_drop: one step of −1.5 or worse
  let sharpAt = -1
  for (let i = 0; i + 1 < m; i++) {
    if (atMost(v[i + 1]! - v[i]!, -1.5)) {
      sharpAt = i
      break
    }
  }
  if (sharpAt >= 0) mask |= 1 << 1
  // 03 below_critical: latest value under 3
  if (below(last, 3)) mask |= 1 << 2
  // 04 below_baseline: latest below the first third's mean minus max(SD, 0.25)
  if (m >= 4) {
    const q = Math.max(2, Math.floor(m / 3))
    const mu = meanRange(v, 0, q)
    const sd = sdRange(v, 0, q)
    if (below(last, mu - (sd > 0.25 ? sd : 0.25))) mask |= 1 << 3
  }
  // 05 accelerating_decline: second-half slope below −0.1 and below the first half's by 0.1
  if (m >= 6 && below(secondHalf, -0.1) && below(secondHalf, firstHalf - 0.1)) mask |= 1 << 4
  // 06 exponential_decay_fit and 11 short_half_life: log-linear fit
  if (m >= 4) {
    const [lb, r2] = logFit(v, t, m, s1)
    if (below(lb, -0.02) && r2 >= 0.9) mask |= 1 << 5
    if (below(lb, 0) && Math.log(2) / -lb < 6 && atLeast(v[0]! - last, 1)) mask |= 1 << 10
  }
  // 07 plateau_after_decline: early max − late mean ≥ 1 and the last third within a 0.5 band
  if (m >= 6) {
    let early = -Infinity
    for (let i = 0; i < q3; i++) if (v[i]! > early) early = v[i]!
    let lo = Infinity
    let hi = -Infinity
    for (let i = m - q3; i < m; i++) {
      if (v[i]! < lo) lo = v[i]!
      if (v[i]! > hi) hi = v[i]!
    }
    if (atLeast(early - meanRange(v, m - q3, m), 1) && atMost(hi - lo, 0.5)) mask |= 1 << 6
  }
  // 08 volatility_spike: SD of steps in the last third > 2× earlier and > 0.5
  if (m >= 7) {
    for (let i = 0; i + 1 < m; i++) s2[i] = v[i + 1]! - v[i]!
    const k = Math.floor((2 * (m - 1)) / 3)
    if (m - 1 - k >= 2) {
      const sa = sdRange(s2, 0, k)
      const sb = sdRange(s2, k, m - 1)
      if (above(sb, 2 * sa) && above(sb, 0.5)) mask |= 1 << 7
    }
  }
  return mask
}

/** Rules 09, 10, 12 and 13: recovery after the minimum, projection and the linear decline's significance. */
const recoveryRules = (x: AxisPoints): number => {
  const { last, m, q3, slope, t, v } = x
  let mask = 0
  // minimum and the peak before it (09, 10)
  let iMin = 0
  for (let i = 1; i < m; i++) if (v[i]! < v[iMin]!) iMin = i
  let peak = -Infinity
  for (let i = 0; i <= iMin; i++) if (v[i]! > peak) peak = v[i]!
  const drop = peak - v[iMin]!
  const recovered = last - v[iMin]!
  // 09 recovery_stalled: a drop ≥ 1 bottomed out before the last third; recovery started (≥ 0.1) but
  // is under 30 % of the drop and the last third is flat or falling (slope ≤ 0.02)
  if (m >= 6 && iMin < m - q3 && atLeast(drop, 1) && atLeast(recovered, 0.1) && below(recovered, 0.3 * drop) && atMost(slopeRange(t, v, m - q3, m), 0.02)) {
    mask |= 1 << 8
  }
  // 10 rebound: a drop ≥ 1, then the latest value ≥ 1 above the minimum
  if (m >= 4 && iMin < m - 1 && atLeast(drop, 1) && atLeast(recovered, 1)) mask |= 1 << 9
  // 12 projected_critical: latest ≥ 3 but the linear trend reaches < 3 within 6 intervals
  if (m >= 3 && atLeast(last, 3) && below(last + 6 * slope, 3)) mask |= 1 << 11
  // 13 significant_linear_decline: OLS slope < 0 with t-test p < 0.05 (two-sided)
  if (m >= 4 && below(slope, 0)) {
    const mt = meanRange(t, 0, m)
    const mv = meanRange(v, 0, m)
    let sxx = 0
    let ssr = 0
    for (let i = 0; i < m; i++) {
      const dt = t[i]! - mt
      sxx += dt * dt
      const r = v[i]! - (mv + slope * dt)
      ssr += r * r
    }
    const se = Math.sqrt(ssr / (m - 2) / sxx)
    if (se === 0 || slope / se < -tCrit(m - 2)) mask |= 1 << 12
  }
  return mask
}

/** Rules 18–26: step changes, oscillation, floor and ceiling, erosion, missed recovery, variance collapse, outliers and reversal. */
const patternRules = (x: AxisPoints): number => {
  const { firstHalf, last, m, q3, s1, s2, secondHalf, slope, t, v } = x
  let mask = 0
  // 18 step_change: a split with ≥ 3 points a side, mean drop ≥ 1.5, and within-segment pooled SD
  // ≤ 0.6 and ≤ 25 % of the drop (so a steady linear decline, whose halves spread ~29 % of the gap, does not count)
  if (m >= 6) {
    for (let k = 3; k <= m - 3; k++) {
      const a = meanRange(v, 0, k)
      const b = meanRange(v, k, m)
      const sa = sdRange(v, 0, k)
      const sb = sdRange(v, k, m)
      const pooled = Math.sqrt(((k - 1) * sa * sa + (m - k - 1) * sb * sb) / (m - 2))
      if (atLeast(a - b, 1.5) && atMost(pooled, 0.6) && atMost(pooled, 0.25 * (a - b))) {
        mask |= 1 << 17
        break
      }
    }
  }
  // 19 oscillation: step signs flip at ≥ 60 % of opportunities and mean |step| ≥ 0.5
  if (m >= 6) {
    let flips = 0
    let absSum = 0
    let prev = 0
    for (let i = 0; i + 1 < m; i++) {
      const d = v[i + 1]! - v[i]!
      absSum += Math.abs(d)
      const sign = d > 0 ? 1 : d < 0 ? -1 : 0
      if (sign !== 0) {
        if (prev !== 0 && sign !== prev) flips++
        prev = sign
      }
    }
    if (atLeast(flips, 0.6 * (m - 2)) && atLeast(absSum / (m - 1), 0.5)) mask |= 1 << 18
  }
  // 20 floor_effect: the last three values all ≤ 1
  if (m >= 3 && atMost(v[m - 1]!, 1) && atMost(v[m - 2]!, 1) && atMost(v[m - 3]!, 1)) mask |= 1 << 19
  // 21 ceiling_loss: first third reached ≥ 8; latest is ≥ 1.5 below that and under 7
  if (m >= 3) {
    const q = Math.max(1, q3)
    let top = -Infinity
    for (let i = 0; i < q; i++) if (v[i]! > top) top = v[i]!
    if (atLeast(top, 8) && atMost(last, top - 1.5) && below(last, 7)) mask |= 1 << 20
  }
  // 22 slow_erosion: slope in [−0.1, −0.02), ≥ 60 % of steps not rising, fitted loss ≥ 0.5
  if (m >= 6 && atLeast(slope, -0.1) && below(slope, -0.02)) {
    let notRising = 0
    for (let i = 0; i + 1 < m; i++) if (v[i + 1]! <= v[i]!) notRising++
    if (atLeast(notRising, 0.6 * (m - 1)) && atMost(slope * (t[m - 1]! - t[0]!), -0.5)) mask |= 1 << 21
  }
  // 23 missed_recovery_window: after a step of −1.5 or worse, the next 3 points regain < 50 % of it
  for (let i = 0; i + 4 < m; i++) {
    const d = v[i + 1]! - v[i]!
    if (atMost(d, -1.5)) {
      let best = -Infinity
      for (let j = i + 2; j <= i + 4; j++) if (v[j]! > best) best = v[j]!
      if (below(best - v[i + 1]!, 0.5 * -d)) {
        mask |= 1 << 22
        break
      }
    }
  }
  // 24 variance_collapse: SD of the last third < 25 % of the earlier SD, which was ≥ 0.5
  if (m >= 6) {
    const k = Math.floor((2 * m) / 3)
    if (m - k >= 2) {
      const sa = sdRange(v, 0, k)
      const sb = sdRange(v, k, m)
      if (atLeast(sa, 0.5) && below(sb, 0.25 * sa)) mask |= 1 << 23
    }
  }
  // 25 outlier_low: one of the last 3 values has robust z < −3.5 (median/MAD)
  if (m >= 5) {
    const med = median(v, m, s1)
    for (let i = 0; i < m; i++) s2[i] = Math.abs(v[i]! - med)
    const mad = median(s2, m, s1)
    if (above(mad, 0)) {
      for (let i = m - 3; i < m; i++) {
        if ((v[i]! - med) / (1.4826 * mad) < -3.5) {
          mask |= 1 << 24
          break
        }
      }
    }
  }
  // 26 trend_reversal_down: first half rising (> 0.05), second half falling (< −0.05)
  if (m >= 6 && above(firstHalf, 0.05) && below(secondHalf, -0.05)) mask |= 1 << 25
  return mask
}

/** Mask of the single-axis rules that fire on one axis's present points. */
export const singleAxisMask = (v: Float64Array, t: Float64Array, m: number, s1: Float64Array, s2: Float64Array): number => {
  if (m === 0) return 0
  const h = Math.floor(m / 2)
  const x: AxisPoints = {
    v,
    t,
    m,
    s1,
    s2,
    last: v[m - 1]!,
    slope: slopeRange(t, v, 0, m),
    firstHalf: m >= 6 ? slopeRange(t, v, 0, h) : NaN,
    secondHalf: m >= 6 ? slopeRange(t, v, h, m) : NaN,
    q3: Math.floor(m / 3)
  }
  return declineRules(x) | recoveryRules(x) | patternRules(x)
}

/**
 * data: nPatients × nAxes × nPoints; axisCodes: canonical index (0 = PO … 7 = PV) of each axis.
 * outMask[p]: all rules fired for patient p; outAxisMask[p·nAxes + a]: single-axis rules on axis a.
 */
export const evaluateRules = (
  data: Float64Array, nPatients: number, nAxes: number, nPoints: number, axisCodes: Int32Array,
  outMask: Int32Array, outAxisMask: Int32Array
): void => {
  const vals = new Float64Array(nAxes * nPoints)
  const ts = new Float64Array(nAxes * nPoints)
  const ms = new Int32Array(nAxes)
  const slopes = new Float64Array(nAxes)
  const s1 = new Float64Array(nPoints)
  const s2 = new Float64Array(nPoints)
  const px = new Float64Array(nPoints)
  const py = new Float64Array(nPoints)
  for (let p = 0; p < nPatients; p++) {
    let mask = 0
    for (let a = 0; a < nAxes; a++) {
      const v = vals.subarray(a * nPoints, (a + 1) * nPoints)
      const t = ts.subarray(a * nPoints, (a + 1) * nPoints)
      const m = compact(data.subarray((p * nAxes + a) * nPoints, (p * nAxes + a + 1) * nPoints), v, t)
      ms[a] = m
      slopes[a] = slopeRange(t, v, 0, m)
      const am = singleAxisMask(v, t, m, s1, s2)
      outAxisMask[p * nAxes + a] = am
      mask |= am
    }
    const declining = (a: number) => ms[a]! >= 3 && below(slopes[a]!, DECLINE_SLOPE)
    const codeAt = (code: number) => {
      for (let a = 0; a < nAxes; a++) if (axisCodes[a] === code) return a
      return -1
    }
    // 14 correlated_axis_drag: two declining axes correlated r ≥ 0.7 (pairwise-complete points)
    for (let a = 0; a < nAxes && (mask & (1 << 13)) === 0; a++) {
      if (!declining(a)) continue
      for (let b = a + 1; b < nAxes; b++) {
        if (!declining(b)) continue
        let m = 0
        for (let i = 0; i < nPoints; i++) {
          const x = data[(p * nAxes + a) * nPoints + i]!
          const y = data[(p * nAxes + b) * nPoints + i]!
          if (!Number.isNaN(x) && !Number.isNaN(y)) {
            px[m] = x
            py[m] = y
            m++
          }
        }
        if (pearsonDense(px, py, m) >= 0.7) {
          mask |= 1 << 13
          break
        }
      }
    }
    // 15 multi_axis_decline: three or more declining axes
    let nDeclining = 0
    for (let a = 0; a < nAxes; a++) if (declining(a)) nDeclining++
    if (nDeclining >= 3) mask |= 1 << 14
    // 16 somatic_pair_decline (PO and NM), 17 resilience_pair_decline (ER and RS)
    const po = codeAt(0)
    const nm = codeAt(1)
    const er = codeAt(2)
    const rs = codeAt(4)
    if (po >= 0 && nm >= 0 && declining(po) && declining(nm)) mask |= 1 << 15
    if (er >= 0 && rs >= 0 && declining(er) && declining(rs)) mask |= 1 << 16
    // 27 divergence_from_other_axes: one axis declining while the others' mean slope ≥ +0.02
    if (nAxes >= 2) {
      for (let a = 0; a < nAxes; a++) {
        if (!declining(a)) continue
        let sum = 0
        let n = 0
        for (let b = 0; b < nAxes; b++) {
          if (b !== a && ms[b]! >= 2 && !Number.isNaN(slopes[b]!)) {
            sum += slopes[b]!
            n++
          }
        }
        if (n > 0 && atLeast(sum / n, 0.02)) {
          mask |= 1 << 26
          break
        }
      }
    }
    // 28 composite_low: mean of the latest values across ≥ 2 axes under 4
    let lastSum = 0
    let lastN = 0
    for (let a = 0; a < nAxes; a++) {
      if (ms[a]! > 0) {
        lastSum += vals[a * nPoints + ms[a]! - 1]!
        lastN++
      }
    }
    if (lastN >= 2 && below(lastSum / lastN, 4)) mask |= 1 << 27
    outMask[p] = mask
  }
}
