/**
 * Random-effects pooling of proportions by the binomial-normal model (a logistic GLMM; Stijnen,
 * Hamza & Özdemir, Stat Med 2010;29:3046): study i's events x_i ~ Binomial(n_i, p_i),
 * logit p_i = μ + τ·u_i, u_i ~ N(0, 1). μ and τ by maximum likelihood, the marginal likelihood of
 * each study by adaptive Gauss–Hermite quadrature; the 95 % interval of μ by profile likelihood;
 * everything back-transformed with expit, so the pooled rate and its interval stay inside [0, 1].
 *
 * Why not inverse-variance pooling of x/n (or of its logit / double arcsine): with the generated
 * registries' 10–60 implants per study and rates of 0.5–8 %, most studies have 0 or 1 events; a
 * study's own proportion then sets its weight, and the pooled value is biased (see docs/analytics.md
 * for the coverage of each method under the generator's process).
 */

/** One study's events among its implants. */
export interface StudyCount {
  readonly events: number
  readonly n: number
}

/** The fitted model: the pooled proportion, μ and τ, and the maximum log-likelihood (without binomial coefficients). */
export interface BinomialNormalFit {
  readonly estimate: number
  /** Logit of the pooled rate (−∞ / +∞ when no study / every study had events) and the between-study SD on that scale. */
  readonly mu: number
  readonly tau: number
  readonly k: number
  readonly logLik: number
}

/** The fit and the 95 % profile-likelihood interval of the pooled proportion. */
export interface PooledProportion extends BinomialNormalFit {
  readonly ciLow: number
  readonly ciHigh: number
}

/** Half the 0.95 quantile of χ²₁: a point is inside the 95 % profile interval while its log-likelihood is within this of the maximum. */
const HALF_CHI2_95 = 1.920729410347062
/** The logit scale searched: expit(±30) is 0 or 1 to 13 digits. */
const MU_LIMIT = 30
/** The largest between-study SD considered on the logit scale (rates spanning e^±8 around the median). */
const TAU_MAX = 4
const GOLDEN = (Math.sqrt(5) - 1) / 2

/** Nodes and weights of Q-point Gauss–Hermite quadrature (weight e^{−t²}), by Newton on the normalised Hermite recurrence. */
const gaussHermite = (q: number): { readonly t: Float64Array; readonly logW: Float64Array } => {
  const t = new Float64Array(q)
  const logW = new Float64Array(q)
  const half = Math.floor((q + 1) / 2)
  let z = 0
  for (let i = 0; i < half; i++) {
    // Initial guesses (Numerical Recipes §4.6), then Newton on the orthonormal polynomial.
    if (i === 0) z = Math.sqrt(2 * q + 1) - 1.85575 * Math.pow(2 * q + 1, -0.16667)
    else if (i === 1) z -= (1.14 * Math.pow(q, 0.426)) / z
    else if (i === 2) z = 1.86 * z - 0.86 * t[0]!
    else if (i === 3) z = 1.91 * z - 0.91 * t[1]!
    else z = 2 * z - t[i - 2]!
    let derivative = 0
    for (let iter = 0; iter < 100; iter++) {
      let p1 = Math.pow(Math.PI, -0.25)
      let p2 = 0
      for (let j = 1; j <= q; j++) {
        const p3 = p2
        p2 = p1
        p1 = z * Math.sqrt(2 / j) * p2 - Math.sqrt((j - 1) / j) * p3
      }
      derivative = Math.sqrt(2 * q) * p2
      const step = p1 / derivative
      z -= step
      if (Math.abs(step) < 1e-15) break
    }
    t[i] = z
    t[q - 1 - i] = -z
    logW[i] = logW[q - 1 - i] = Math.log(2 / (derivative * derivative))
  }
  return { t, logW }
}

const NODES = gaussHermite(12)
const LOG_SQRT_PI = 0.5 * Math.log(Math.PI)

/** log(1 + e^z) without overflow. */
const softplus = (z: number) => (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z)))

/** The log-likelihood and its first two derivatives in μ, summed over studies. */
interface LogLik {
  value: number
  slope: number
  bend: number
}

const terms = new Float64Array(NODES.t.length)
const rates = new Float64Array(NODES.t.length)

/**
 * Adds study i's log marginal likelihood log ∫ Binomial(x | n, expit(μ + τu)) φ(u) du (without the
 * binomial coefficient) to `into`, with its derivatives in μ: the posterior mean of x − n·p and
 * Var(x − n·p) − E[n·p(1 − p)] under the same quadrature.
 */
const addStudy = (x: number, n: number, mu: number, tau: number, into: LogLik): void => {
  // g(u) = x log p + (n − x) log(1 − p) − u²/2 is concave: Newton to its mode, then quadrature around it.
  let u = 0
  let curvature = 1
  for (let iter = 0; iter < 50; iter++) {
    const p = 1 / (1 + Math.exp(-(mu + tau * u)))
    const slope = tau * (x - n * p) - u
    curvature = tau * tau * n * p * (1 - p) + 1
    const step = slope / curvature
    u += step
    if (Math.abs(step) < 1e-10) break
  }
  const p = 1 / (1 + Math.exp(-(mu + tau * u)))
  curvature = tau * tau * n * p * (1 - p) + 1
  const scale = Math.SQRT2 / Math.sqrt(curvature)
  let top = -Infinity
  for (let j = 0; j < terms.length; j++) {
    const tj = NODES.t[j]!
    const uj = u + scale * tj
    const eta = mu + tau * uj
    rates[j] = 1 / (1 + Math.exp(-eta))
    terms[j] = NODES.logW[j]! + tj * tj - x * softplus(-eta) - (n - x) * softplus(eta) - 0.5 * uj * uj
    if (terms[j]! > top) top = terms[j]!
  }
  let sum = 0
  let mean = 0
  let square = 0
  let spread = 0
  for (let j = 0; j < terms.length; j++) {
    const w = Math.exp(terms[j]! - top)
    const r = x - n * rates[j]!
    sum += w
    mean += w * r
    square += w * r * r
    spread += w * n * rates[j]! * (1 - rates[j]!)
  }
  mean /= sum
  // ∫ e^{g(u)} du / √(2π) = (scale / √(2π)) Σ w_j e^{t_j²} e^{g(û + scale t_j)}.
  into.value += top + Math.log(sum) + Math.log(scale) - LOG_SQRT_PI - 0.5 * Math.log(2)
  into.slope += mean
  into.bend += square / sum - mean * mean - spread / sum
}

const evaluate = (studies: ReadonlyArray<StudyCount>, mu: number, tau: number): LogLik => {
  const out: LogLik = { value: 0, slope: 0, bend: 0 }
  for (const s of studies) addStudy(s.events, s.n, mu, tau, out)
  return out
}

const logLik = (studies: ReadonlyArray<StudyCount>, mu: number, tau: number): number => evaluate(studies, mu, tau).value

/** Brent's bounded maximisation of f on [lo, hi] (golden section with parabolic steps; Brent 1973, ch. 5); the ends are candidates too. */
const maximise = (f: (x: number) => number, lo: number, hi: number, tolerance: number): { readonly x: number; readonly value: number } => {
  if (hi <= lo) return { x: lo, value: f(lo) }
  const c = 1 - GOLDEN
  let a = lo
  let b = hi
  let x = a + c * (b - a)
  let w = x
  let v = x
  let fx = -f(x)
  let fw = fx
  let fv = fx
  let d = 0
  let e = 0
  for (let iter = 0; iter < 100; iter++) {
    const middle = (a + b) / 2
    const tol1 = 1e-10 * Math.abs(x) + tolerance / 3
    const tol2 = 2 * tol1
    if (Math.abs(x - middle) <= tol2 - (b - a) / 2) break
    let golden = true
    if (Math.abs(e) > tol1) {
      // Parabola through x, w, v.
      let r = (x - w) * (fx - fv)
      let q = (x - v) * (fx - fw)
      let p = (x - v) * q - (x - w) * r
      q = 2 * (q - r)
      if (q > 0) p = -p
      else q = -q
      r = e
      e = d
      if (Math.abs(p) < Math.abs(0.5 * q * r) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q
        const u = x + d
        if (u - a < tol2 || b - u < tol2) d = middle >= x ? tol1 : -tol1
        golden = false
      }
    }
    if (golden) {
      e = (x >= middle ? a : b) - x
      d = c * e
    }
    const u = Math.abs(d) >= tol1 ? x + d : x + (d > 0 ? tol1 : -tol1)
    const fu = -f(u)
    if (fu <= fx) {
      if (u >= x) a = x
      else b = x
      v = w
      fv = fw
      w = x
      fw = fx
      x = u
      fx = fu
    } else {
      if (u < x) a = u
      else b = u
      if (fu <= fw || w === x) {
        v = w
        fv = fw
        w = u
        fw = fu
      } else if (fu <= fv || v === x || v === w) {
        v = u
        fv = fu
      }
    }
  }
  let best = { x, value: -fx }
  for (const end of [lo, hi]) {
    const value = f(end)
    if (value > best.value) best = { x: end, value }
  }
  return best
}

/** The between-study SD's range: none to identify with a single study. */
const tauMax = (studies: ReadonlyArray<StudyCount>) => (studies.length > 1 ? TAU_MAX : 0)

const expit = (x: number) => (x === Infinity ? 1 : x === -Infinity ? 0 : 1 / (1 + Math.exp(-x)))

/**
 * The μ maximising the log-likelihood for a given τ: the log-likelihood is concave in μ, so Newton
 * on its slope, kept inside the bracket where the slope changes sign (bisection when a step leaves it).
 * The slope, not the value, decides: at large τ the quadrature's value is accurate to ~1e-5 only.
 */
const bestMu = (studies: ReadonlyArray<StudyCount>, tau: number, start: number): number => {
  let lo = -MU_LIMIT
  let hi = MU_LIMIT
  let mu = start
  for (let iter = 0; iter < 100; iter++) {
    const { slope, bend } = evaluate(studies, mu, tau)
    if (slope > 0) lo = mu
    else hi = mu
    let next = bend < 0 ? mu - slope / bend : (lo + hi) / 2
    if (!(next > lo && next < hi)) next = (lo + hi) / 2
    if (Math.abs(next - mu) < 1e-10 || hi - lo < 1e-10) return next
    mu = next
  }
  return mu
}

/** The profile log-likelihood of μ: the best log-likelihood over τ at that μ. */
const profile = (studies: ReadonlyArray<StudyCount>, mu: number): number => maximise((tau) => logLik(studies, mu, tau), 0, tauMax(studies), 1e-5).value

/** The μ on the `direction` side of muHat where the profile has dropped HALF_CHI2_95 below top (±∞ when it never does). */
const profileBound = (studies: ReadonlyArray<StudyCount>, muHat: number, top: number, direction: -1 | 1): number => {
  const excess = (mu: number) => top - profile(studies, mu) - HALF_CHI2_95
  let inside = muHat
  let step = 0.25
  let outside = muHat + direction * step
  while (excess(outside) < 0) {
    inside = outside
    if (Math.abs(outside) >= MU_LIMIT) return direction * Infinity
    step *= 2
    outside = Math.max(-MU_LIMIT, Math.min(MU_LIMIT, outside + direction * step))
  }
  // Illinois regula falsi on excess(μ) = 0 between inside (< 0) and outside (≥ 0).
  let fa = excess(inside)
  let fb = excess(outside)
  let a = inside
  let b = outside
  let side = 0
  for (let iter = 0; iter < 60 && Math.abs(b - a) > 1e-6; iter++) {
    const c = b - (fb * (b - a)) / (fb - fa)
    const fc = excess(c)
    if (fc >= 0) {
      b = c
      fb = fc
      if (side === -1) fa /= 2
      side = -1
    } else {
      a = c
      fa = fc
      if (side === 1) fb /= 2
      side = 1
    }
  }
  return (a + b) / 2
}

/** The maximum-likelihood fit of k ≥ 1 studies (each with n ≥ 1): μ, τ and the pooled rate expit(μ). */
export const fitBinomialNormal = (studies: ReadonlyArray<StudyCount>): BinomialNormalFit => {
  const k = studies.length
  const events = studies.reduce((a, s) => a + s.events, 0)
  const total = studies.reduce((a, s) => a + s.n, 0)
  // No events anywhere (or events everywhere): the likelihood rises without bound towards 0 (or 1),
  // where every τ fits equally well; the estimate is that end.
  if (events === 0) return { estimate: 0, mu: -Infinity, tau: 0, k, logLik: 0 }
  if (events === total) return { estimate: 1, mu: Infinity, tau: 0, k, logLik: 0 }
  // For each τ the log-likelihood is concave in μ (Prékopa: the integrand is log-concave in (μ, u));
  // Newton on μ warm-starts from the last τ tried, Brent searches τ.
  let start = Math.log(events / (total - events))
  const atTau = (tau: number) => {
    start = bestMu(studies, tau, start)
    return logLik(studies, start, tau)
  }
  const tau = maximise(atTau, 0, tauMax(studies), 1e-5).x
  const mu = bestMu(studies, tau, start)
  return { estimate: expit(mu), mu, tau, k, logLik: logLik(studies, mu, tau) }
}

/** The fit and the 95 % profile-likelihood interval of the pooled rate (an end is 0 or 1 where the profile never drops far enough). */
export const binomialNormal = (studies: ReadonlyArray<StudyCount>): PooledProportion => {
  const fit = fitBinomialNormal(studies)
  if (!Number.isFinite(fit.mu)) {
    const direction = fit.mu < 0 ? 1 : -1
    const bound = expit(profileBound(studies, -direction * MU_LIMIT, 0, direction))
    return { ...fit, ciLow: direction > 0 ? 0 : bound, ciHigh: direction > 0 ? bound : 1 }
  }
  const top = Math.max(fit.logLik, profile(studies, fit.mu))
  return { ...fit, ciLow: expit(profileBound(studies, fit.mu, top, -1)), ciHigh: expit(profileBound(studies, fit.mu, top, 1)) }
}
