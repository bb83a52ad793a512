/**
 * Random-effects pooling of proportions by the binomial-normal model (a logistic GLMM; Stijnen,
 * Hamza & Özdemir, Stat Med 2010;29:3046): study i's events x_i ~ Binomial(n_i, p_i),
 * logit p_i = μ + τ·u_i, u_i ~ N(0, 1). μ and τ by maximum likelihood, the marginal likelihood of
 * each study by an adaptive trapezoid rule around its mode; the 95 % interval of μ by profile likelihood;
 * everything back-transformed with expit, so the pooled rate and its interval stay inside [0, 1].
 *
 * Why not inverse-variance pooling of x/n (or of its logit / double arcsine): with the generated
 * registries' 10–60 implants per study and rates of 0.5–8 %, most studies have 0 or 1 events; a
 * study's own proportion then sets its weight, and the pooled value is biased (see docs/analytics.md
 * for the coverage of each method under the generator's process).
 */
import { maximise } from "./maximise.ts"

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
/** The integrand is neglected where its log is more than this below its maximum (e^−30 ≈ 1e−13). */
const DROP = 30
/** The integration interval's ends are placed within this of where g crosses top − DROP. */
const END_STEP = 0.01
/** The trapezoid rule's step is halved until the integral changes by less than this, relative. */
const QUADRATURE_TOLERANCE = 1e-8
/** The quadrature's nodes between two exponentials of e^{−|η|} (the others follow by a factor). */
const ANCHOR = 16
/** The τ grid searched before Brent's method refines the best cell: 0, 0.2, …, TAU_MAX. */
const TAU_GRID_STEP = 0.2
/** Brent's tolerance on τ; Newton on μ stops when a step is below MU_TOLERANCE. */
const TAU_TOLERANCE = 1e-7
const MU_TOLERANCE = 1e-10
/** A Newton step on μ below this is the last one: the next would be below MU_TOLERANCE. */
const NEWTON_FINAL_STEP = 1e-6
/** The profile interval's ends are found to this, in μ or in the profile's drop. */
const BOUND_TOLERANCE = 1e-6

/** log(1 + e^z) without overflow. */
const softplus = (z: number) => (z > 0 ? z + Math.log1p(Math.exp(-z)) : Math.log1p(Math.exp(z)))
const expitOf = (z: number) => 1 / (1 + Math.exp(-z))
const LOG_SQRT_2PI = 0.5 * Math.log(2 * Math.PI)

/** The log-likelihood and its first two derivatives in μ, summed over studies. */
interface LogLik {
  value: number
  slope: number
  bend: number
}

/** Trapezoid sums over the points added at one step size: Σ w, Σ w·r, Σ w·r², Σ w·n·p(1 − p), with w = e^{g(u) − g(û)} and r = x − n·p. */
interface Sums {
  s0: number
  s1: number
  s2: number
  spread: number
}

/**
 * Adds study i's log marginal likelihood log ∫ Binomial(x | n, expit(μ + τu)) φ(u) du (without the
 * binomial coefficient) to `into`, with its derivatives in μ: the posterior mean of x − n·p and
 * Var(x − n·p) − E[n·p(1 − p)].
 *
 * g(u) = x log p + (n − x) log(1 − p) − u²/2 is concave, so it rises to one mode û and falls on
 * both sides. Newton (kept inside the bracket [τ(x − n), τx] where g′ changes sign) finds û; the
 * interval [a, b] reaches to where g has dropped by DROP on both sides (as g″ ≤ −1, the part outside
 * is below e^{−DROP}·√(π/2) of the peak); the trapezoid rule over [a, b]
 * then halves its step until the integral changes by less than QUADRATURE_TOLERANCE relative. For
 * an integrand analytic in a strip around the real line the trapezoid rule's error falls
 * geometrically as the step shrinks (Trefethen & Weideman, SIAM Review 2014;56:385), and the halving
 * check holds however wide or one-sided the integrand is (large τ, no events).
 */
const addStudy = (x: number, n: number, mu: number, tau: number, into: LogLik): void => {
  if (tau === 0) {
    const p = expitOf(mu)
    into.value += -x * softplus(-mu) - (n - x) * softplus(mu)
    into.slope += x - n * p
    into.bend -= n * p * (1 - p)
    return
  }
  // log p = η − softplus(η), log(1 − p) = −softplus(η): g = xη − n·softplus(η) − u²/2.
  const g = (u: number) => {
    const eta = mu + tau * u
    return x * eta - n * softplus(eta) - 0.5 * u * u
  }
  let lo = tau * (x - n)
  let hi = tau * x
  let u = Math.max(lo, Math.min(hi, 0))
  let curvature = 1
  for (let iter = 0; iter < 200; iter++) {
    const p = expitOf(mu + tau * u)
    const slope = tau * (x - n * p) - u
    curvature = tau * tau * n * p * (1 - p) + 1
    if (slope > 0) lo = u
    else hi = u
    let next = u + slope / curvature
    if (!(next > lo && next < hi)) next = (lo + hi) / 2
    const done = Math.abs(next - u) < 1e-12 * (1 + Math.abs(u)) || hi - lo < 1e-12 * (1 + Math.abs(u))
    u = next
    if (done) break
  }
  const top = g(u)
  // g″ ≤ −1 everywhere (the normal density's part), so g is below top − DROP at √(2·DROP) from the
  // mode. From there Newton on g(u) = top − DROP moves inwards and, g being concave, never past the
  // crossing; it stops within END_STEP of it.
  const end = (side: -1 | 1) => {
    let at = u + side * Math.sqrt(2 * DROP)
    for (let iter = 0; iter < 50; iter++) {
      const slope = tau * (x - n * expitOf(mu + tau * at)) - at
      const step = (top - DROP - g(at)) / slope
      if (!(Math.abs(step) > END_STEP)) break
      at += step
    }
    return at
  }
  const a = end(-1)
  const b = end(1)
  const sums: Sums = { s0: 0, s1: 0, s2: 0, spread: 0 }
  // A first step of 1 / √curvature: on a normal integrand the trapezoid rule's error is then about
  // e^{−2π²} ≈ 3e−9 (it is e^{−2π²σ²/h²}), below the tolerance, so one halving usually confirms it.
  let intervals = Math.max(8, Math.ceil(((b - a) * Math.sqrt(curvature))))
  let h = (b - a) / intervals
  // The nodes a + (i + offset)·h, i < count. They are where the fit spends its time, on
  // transcendentals. softplus(η) and p = expit(η) share e = e^{−|η|}: softplus = max(η, 0) + log1p(e),
  // p = 1/(1 + e) or e/(1 + e), p(1 − p) = e/(1 + e)² (no cancellation in 1 − p near 1). And η is
  // linear in u, so from one node to the next e moves by the factor e^{±τh}: a multiplication, not an
  // exponential, anchored anew by exp where η changes sign and every ANCHOR nodes, which keeps its
  // rounding within about ANCHOR ulps. A node costs two transcendentals, the weight's exp and log1p.
  const addNodes = (offset: number, count: number) => {
    const rise = Math.exp(tau * h)
    const fall = Math.exp(-tau * h)
    let e = 0
    let below = false
    for (let i = 0; i < count; i++) {
      const at = a + (i + offset) * h
      const eta = mu + tau * at
      if (i % ANCHOR === 0 || (eta < 0) !== below) {
        below = eta < 0
        e = Math.exp(-Math.abs(eta))
      }
      const sp = (eta > 0 ? eta : 0) + Math.log1p(e)
      const q = 1 / (1 + e)
      const p = eta > 0 ? q : e * q
      const w = Math.exp(x * eta - n * sp - 0.5 * at * at - top)
      const r = x - n * p
      sums.s0 += w
      sums.s1 += w * r
      sums.s2 += w * r * r
      sums.spread += w * n * e * q * q
      // Nodes rise in u and τ > 0: below zero |η| falls and e grows; above, e falls.
      e *= below ? rise : fall
    }
  }
  addNodes(0, intervals + 1)
  for (let previous = sums.s0 * h, previousMean = sums.s1 / sums.s0; intervals < 1 << 16; ) {
    addNodes(0.5, intervals)
    intervals *= 2
    h /= 2
    const integral = sums.s0 * h
    const mean = sums.s1 / sums.s0
    if (Math.abs(integral - previous) <= QUADRATURE_TOLERANCE * integral && Math.abs(mean - previousMean) <= QUADRATURE_TOLERANCE * (1 + n)) break
    previous = integral
    previousMean = mean
  }
  const mean = sums.s1 / sums.s0
  // ∫ e^{g(u)} du / √(2π) = e^{g(û)} · h Σ w / √(2π).
  into.value += top + Math.log(sums.s0 * h) - LOG_SQRT_2PI
  into.slope += mean
  into.bend += sums.s2 / sums.s0 - mean * mean - sums.spread / sums.s0
}

const evaluate = (studies: ReadonlyArray<StudyCount>, mu: number, tau: number): LogLik => {
  const out: LogLik = { value: 0, slope: 0, bend: 0 }
  for (const s of studies) addStudy(s.events, s.n, mu, tau, out)
  return out
}

/** The log-likelihood at (μ, τ), summed over studies, without the binomial coefficients. */
const logLik = (studies: ReadonlyArray<StudyCount>, mu: number, tau: number): number => evaluate(studies, mu, tau).value

/** The between-study SD's range: none to identify with a single study. */
const tauMax = (studies: ReadonlyArray<StudyCount>) => (studies.length > 1 ? TAU_MAX : 0)

/**
 * The maximum of f over τ ∈ [0, hi]: f on the grid 0, TAU_GRID_STEP, …, hi, then Brent's method
 * inside the two cells around the best grid point — a local search alone can stop on a lower
 * maximum of a profile with two. The refined point is kept only if it is at least the best grid value.
 */
const maximiseOverTau = (f: (tau: number) => number, hi: number): { readonly x: number; readonly value: number } => {
  if (hi === 0) return { x: 0, value: f(0) }
  const cells = Math.round(hi / TAU_GRID_STEP)
  let best = 0
  let bestValue = -Infinity
  for (let j = 0; j <= cells; j++) {
    const value = f((j / cells) * hi)
    if (value > bestValue) {
      best = j
      bestValue = value
    }
  }
  const refined = maximise(f, (Math.max(0, best - 1) / cells) * hi, (Math.min(cells, best + 1) / cells) * hi, TAU_TOLERANCE)
  return refined.value >= bestValue ? refined : { x: (best / cells) * hi, value: bestValue }
}

const expit = (x: number) => (x === Infinity ? 1 : x === -Infinity ? 0 : 1 / (1 + Math.exp(-x)))

/**
 * The μ maximising the log-likelihood for a given τ: the log-likelihood is concave in μ, so Newton
 * on its slope, kept inside the bracket where the slope changes sign (bisection when a step leaves it).
 * The slope, not the value, decides: it changes sign at the maximum even where the log-likelihood is flat.
 */
const bestMu = (studies: ReadonlyArray<StudyCount>, tau: number, start: number): { readonly mu: number; readonly value: number } => {
  let lo = -MU_LIMIT
  let hi = MU_LIMIT
  let mu = start
  let value = -Infinity
  let slopeLo = Number.NaN
  let slopeHi = Number.NaN
  for (let iter = 0; iter < 100; iter++) {
    const at = evaluate(studies, mu, tau)
    value = at.value
    if (at.slope > 0) {
      lo = mu
      slopeLo = at.slope
    } else {
      hi = mu
      slopeHi = at.slope
    }
    let next = at.bend < 0 ? mu - at.slope / at.bend : Number.NaN
    // Outside the bracket (or no usable curvature): the secant of the slope across the bracket once
    // both ends are known, else halving.
    if (!(next > lo && next < hi)) next = Number.isFinite(slopeLo) && Number.isFinite(slopeHi) ? lo + ((hi - lo) * slopeLo) / (slopeLo - slopeHi) : (lo + hi) / 2
    if (Math.abs(next - mu) < MU_TOLERANCE || hi - lo < MU_TOLERANCE) break
    // Newton converges quadratically: after a step this small the next would be below MU_TOLERANCE,
    // and the log-likelihood at `next` is the quadratic's, value − slope² / (2·bend).
    if (at.bend < 0 && Math.abs(next - mu) < NEWTON_FINAL_STEP) return { mu: next, value: value - (at.slope * at.slope) / (2 * at.bend) }
    mu = next
  }
  return { mu, value }
}

/** The profile log-likelihood of μ: the best log-likelihood over τ at that μ. */
const profile = (studies: ReadonlyArray<StudyCount>, mu: number): number => maximiseOverTau((tau) => logLik(studies, mu, tau), tauMax(studies)).value

/** The μ on the `direction` side of muHat where the profile has dropped HALF_CHI2_95 below top (±∞ when it never does). */
const profileBound = (studies: ReadonlyArray<StudyCount>, muHat: number, top: number, direction: -1 | 1, atMuHat = profile(studies, muHat)): number => {
  const excess = (mu: number) => top - profile(studies, mu) - HALF_CHI2_95
  let a = muHat
  let fa = top - atMuHat - HALF_CHI2_95
  let step = 0.25
  let b = muHat + direction * step
  let fb = excess(b)
  while (fb < 0) {
    a = b
    fa = fb
    if (Math.abs(b) >= MU_LIMIT) return direction * Infinity
    step *= 2
    b = Math.max(-MU_LIMIT, Math.min(MU_LIMIT, b + direction * step))
    fb = excess(b)
  }
  // Illinois regula falsi on excess(μ) = 0 between a (< 0) and b (≥ 0), until the bracket or the
  // excess is below BOUND_TOLERANCE.
  let side = 0
  for (let iter = 0; iter < 60 && Math.abs(b - a) > BOUND_TOLERANCE; iter++) {
    const c = b - (fb * (b - a)) / (fb - fa)
    const fc = excess(c)
    if (Math.abs(fc) < BOUND_TOLERANCE) return c
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
  // Newton on μ warm-starts from the last τ tried; τ by the grid, then Brent (maximiseOverTau).
  let start = Math.log(events / (total - events))
  const atTau = (tau: number) => {
    const best = bestMu(studies, tau, start)
    start = best.mu
    return best.value
  }
  const tau = maximiseOverTau(atTau, tauMax(studies)).x
  const { mu, value } = bestMu(studies, tau, start)
  return { estimate: expit(mu), mu, tau, k, logLik: value }
}

/** The fit and the 95 % profile-likelihood interval of the pooled rate (an end is 0 or 1 where the profile never drops far enough). */
export const binomialNormal = (studies: ReadonlyArray<StudyCount>): PooledProportion => {
  const fit = fitBinomialNormal(studies)
  if (!Number.isFinite(fit.mu)) {
    const direction = fit.mu < 0 ? 1 : -1
    const bound = expit(profileBound(studies, -direction * MU_LIMIT, 0, direction))
    return { ...fit, ciLow: direction > 0 ? 0 : bound, ciHigh: direction > 0 ? bound : 1 }
  }
  const atMuHat = profile(studies, fit.mu)
  const top = Math.max(fit.logLik, atMuHat)
  return { ...fit, ciLow: expit(profileBound(studies, fit.mu, top, -1, atMuHat)), ciHigh: expit(profileBound(studies, fit.mu, top, 1, atMuHat)) }
}
