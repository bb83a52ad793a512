/**
 * Distribution functions the analytics need for p-values (part of the plugin contract). Numerical
 * Recipes' methods (3rd ed., §6.1 and §6.4): Lanczos log-gamma, the incomplete beta function by its
 * continued fraction (modified Lentz), accurate to about 1e-12 relative.
 */

/** x rounded to `digits` decimals (half away from zero for positives, as Math.round). */
export const roundTo = (x: number, digits: number): number => {
  const f = 10 ** digits
  return Math.round(x * f) / f
}

/** ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9). */
export const logGamma = (x: number): number => {
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7]
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x)
  const z = x - 1
  let a = c[0]!
  const t = z + 7.5
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i)
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a)
}

/** Continued fraction of the incomplete beta function (modified Lentz). */
const betaFraction = (a: number, b: number, x: number): number => {
  const tiny = 1e-300
  let c = 1
  let d = 1 - ((a + b) * x) / (a + 1)
  if (Math.abs(d) < tiny) d = tiny
  d = 1 / d
  let h = d
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m
    let aa = (m * (b - m) * x) / ((a - 1 + m2) * (a + m2))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    h *= d * c
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + 1 + m2))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const del = d * c
    h *= del
    if (Math.abs(del - 1) < 1e-15) break
  }
  return h
}

/** Regularized incomplete beta I_x(a, b), 0 ≤ x ≤ 1. */
export const incompleteBeta = (x: number, a: number, b: number): number => {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x))
  return x < (a + 1) / (a + b + 2) ? (front * betaFraction(a, b, x)) / a : 1 - (front * betaFraction(b, a, 1 - x)) / b
}

/** Two-sided p-value of Student's t with `df` degrees of freedom: P(|T| ≥ |t|). NaN for df ≤ 0 or t NaN. */
export const studentTwoSidedP = (t: number, df: number): number => {
  if (!(df > 0) || Number.isNaN(t)) return Number.NaN
  if (!Number.isFinite(t)) return 0
  return incompleteBeta(df / (df + t * t), df / 2, 0.5)
}

/**
 * Two-sided p-value of a one-sample t-test of a mean against 0 from n, Σx and Σx²:
 * t = mean / (sd / √n) with n − 1 degrees of freedom. 1 (no evidence) with fewer than 2 values or
 * no spread around a zero mean; 0 with no spread around a non-zero mean.
 */
export const oneSampleTP = (n: number, sum: number, sumSq: number): number => {
  if (n < 2) return 1
  const mean = sum / n
  const variance = Math.max(0, (sumSq - (sum * sum) / n) / (n - 1))
  if (variance === 0) return mean === 0 ? 1 : 0
  return studentTwoSidedP(mean / Math.sqrt(variance / n), n - 1)
}

/**
 * The t quantile with two-sided tail `p` (P(|T| ≥ t) = p; 0.05 gives the 97.5th percentile) for
 * `df` degrees of freedom: studentTwoSidedP inverted by bisection to 1e-12. NaN for df ≤ 0 or p
 * outside (0, 1).
 */
export const studentTQuantile = (p: number, df: number): number => {
  if (!(df > 0) || !(p > 0 && p < 1)) return Number.NaN
  let lo = 0
  let hi = 1
  while (studentTwoSidedP(hi, df) > p) hi *= 2
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = 0.5 * (lo + hi)
    if (studentTwoSidedP(mid, df) > p) lo = mid
    else hi = mid
  }
  return 0.5 * (lo + hi)
}

/**
 * The upper tail of χ² with `df` degrees of freedom at x, P(X ≥ x): the regularized upper incomplete
 * gamma Q(df/2, x/2) by its series below a + 1 and its continued fraction above (Numerical Recipes
 * 3rd ed. §6.2), about 1e-14 relative. NaN for df ≤ 0 or x NaN.
 */
export const chiSquareUpperP = (x: number, df: number): number => {
  if (!(df > 0) || Number.isNaN(x)) return Number.NaN
  if (x <= 0) return 1
  const a = df / 2
  const z = x / 2
  const front = Math.exp(-z + a * Math.log(z) - logGamma(a))
  if (z < a + 1) {
    let term = 1 / a
    let sum = term
    for (let n = 1; n < 1000; n++) {
      term *= z / (a + n)
      sum += term
      if (Math.abs(term) < Math.abs(sum) * 1e-16) break
    }
    return Math.max(0, 1 - front * sum)
  }
  const tiny = 1e-300
  let b = z + 1 - a
  let c = 1 / tiny
  let d = 1 / b
  let h = d
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a)
    b += 2
    d = an * d + b
    if (Math.abs(d) < tiny) d = tiny
    c = b + an / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const del = d * c
    h *= del
    if (Math.abs(del - 1) < 1e-16) break
  }
  return front * h
}
