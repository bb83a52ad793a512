// Generalized linear models by iteratively reweighted least squares (IRLS, Fisher scoring), the
// risk model's fitting and scoring kernels. Families with their canonical links: Poisson (log) and
// binomial (logit). Rows are dense f64, row-major (n × p); an offset is added to every linear
// predictor (log exposure for rates; zeros otherwise).
//
// Sums run on two lanes: the dot product x·β takes lane 0 = columns 0, 2, 4, … and lane 1 = the
// others, adds the lanes, then the odd tail; X'WX adds (w·x_j)·x_k per row and column pair k ≤ j
// (the lower triangle: all that the Cholesky factor and the solves read), skipping x_j = 0 (its
// terms are exact zeros). The TypeScript twin does the same operations in the same order.

import { expK, getF, hsum, setF } from "./common"

/** Family codes (the TS side names them). */
const POISSON: i32 = 0

/** Linear predictors are clamped here: e^±30 keeps the weights finite and non-zero. */
const ETA_LIMIT: f64 = 30.0

/** x_i·β for row i (p columns), in lane order. */
@inline function rowDot(x: usize, p: i32, beta: usize): f64 {
  let acc = f64x2.splat(0.0)
  let k = 0
  for (; k + 2 <= p; k += 2) acc = f64x2.add(acc, f64x2.mul(v128.load(x + (<usize>k << 3)), v128.load(beta + (<usize>k << 3))))
  let s = hsum(acc)
  if (k < p) s += getF(x, k) * getF(beta, k)
  return s
}

/**
 * Cholesky factor of the symmetric p × p matrix a (lower triangle read and overwritten with L).
 * Returns false when a is not positive definite (a pivot ≤ 1e-12 × its diagonal entry): a
 * constant or collinear column.
 */
function cholesky(a: usize, p: i32): bool {
  for (let j = 0; j < p; j++) {
    const diag = getF(a, j * p + j)
    let s = diag
    for (let k = 0; k < j; k++) s -= getF(a, j * p + k) * getF(a, j * p + k)
    if (!(s > 1e-12 * diag) || !(diag > 0.0)) return false
    const l = Math.sqrt(s)
    setF(a, j * p + j, l)
    for (let i = j + 1; i < p; i++) {
      let t = getF(a, i * p + j)
      for (let k = 0; k < j; k++) t -= getF(a, i * p + k) * getF(a, j * p + k)
      setF(a, i * p + j, t / l)
    }
  }
  return true
}

/** Solves L L' v = b in place (b becomes v), L the lower factor in a. */
function cholSolve(a: usize, p: i32, b: usize): void {
  for (let i = 0; i < p; i++) {
    let t = getF(b, i)
    for (let k = 0; k < i; k++) t -= getF(a, i * p + k) * getF(b, k)
    setF(b, i, t / getF(a, i * p + i))
  }
  for (let i = p - 1; i >= 0; i--) {
    let t = getF(b, i)
    for (let k = i + 1; k < p; k++) t -= getF(a, k * p + i) * getF(b, k)
    setF(b, i, t / getF(a, i * p + i))
  }
}

/**
 * Fits β of a GLM with canonical link by IRLS, starting from μ = y + 0.1 (Poisson) or (y + ½)/2
 * (binomial), as R's glm does. Stops when every coefficient moves less than 1e-10 × (|β| + 1), or
 * after maxIter steps.
 * x: n × p; y: n (counts, or 0/1); offset: n. outBeta: p; outCov: p × p, the inverse Fisher
 * information at the last step (the coefficients' covariance); outInfo: [iterations, converged
 * (1/0), deviance-free status: 0 ok, −1 information not positive definite].
 * scratch: (p × p + 2p) × 8 bytes. Returns the status.
 */
export function fitGlm(x: usize, y: usize, offset: usize, n: i32, p: i32, family: i32, maxIter: i32, outBeta: usize, outCov: usize, outInfo: usize, scratch: usize): i32 {
  const a = scratch
  const b = a + (<usize>(p * p) << 3)
  const next = b + (<usize>p << 3)
  for (let j = 0; j < p; j++) setF(outBeta, j, 0.0)
  let iterations = 0
  let converged = false
  const rowBytes = <usize>p << 3
  for (let iter = 0; iter < maxIter; iter++) {
    memory.fill(a, 0, <usize>(p * p) << 3)
    memory.fill(b, 0, <usize>p << 3)
    for (let i = 0; i < n; i++) {
      const row = x + <usize>i * rowBytes
      const yi = getF(y, i)
      const oi = getF(offset, i)
      let eta: f64
      let mu: f64
      let w: f64
      if (iter == 0) {
        mu = family == POISSON ? yi + 0.1 : (yi + 0.5) * 0.5
        eta = family == POISSON ? Math.log(mu) : Math.log(mu / (1.0 - mu))
      } else {
        eta = oi + rowDot(row, p, outBeta)
        if (eta > ETA_LIMIT) eta = ETA_LIMIT
        if (eta < -ETA_LIMIT) eta = -ETA_LIMIT
        mu = family == POISSON ? expK(eta) : 1.0 / (1.0 + expK(-eta))
      }
      w = family == POISSON ? mu : mu * (1.0 - mu)
      const z = eta - oi + (yi - mu) / w
      const wz = w * z
      for (let j = 0; j < p; j++) {
        const xj = getF(row, j)
        // A zero adds exact zeros (finite designs; a non-finite x still fails on its own diagonal).
        if (xj == 0.0) continue
        const s = w * xj
        const vs = f64x2.splat(s)
        const arow = a + <usize>(j * p) * 8
        // The lower triangle k ≤ j only: it is all the Cholesky factor and the solves read.
        let k = 0
        for (; k + 2 <= j + 1; k += 2) {
          const at = arow + (<usize>k << 3)
          v128.store(at, f64x2.add(v128.load(at), f64x2.mul(vs, v128.load(row + (<usize>k << 3)))))
        }
        if (k <= j) setF(arow, k, getF(arow, k) + s * getF(row, k))
        setF(b, j, getF(b, j) + wz * xj)
      }
    }
    if (!cholesky(a, p)) {
      setF(outInfo, 0, <f64>(iter + 1))
      setF(outInfo, 1, 0.0)
      setF(outInfo, 2, -1.0)
      return -1
    }
    memory.copy(next, b, <usize>p << 3)
    cholSolve(a, p, next)
    let moved = false
    for (let j = 0; j < p; j++) {
      const nb = getF(next, j)
      if (Math.abs(nb - getF(outBeta, j)) > 1e-10 * (Math.abs(nb) + 1.0)) moved = true
      setF(outBeta, j, nb)
    }
    iterations = iter + 1
    if (iter > 0 && !moved) {
      converged = true
      break
    }
  }
  // Covariance: the inverse of the last information matrix, one unit vector at a time.
  for (let c = 0; c < p; c++) {
    for (let j = 0; j < p; j++) setF(next, j, j == c ? 1.0 : 0.0)
    cholSolve(a, p, next)
    for (let j = 0; j < p; j++) setF(outCov, j * p + c, getF(next, j))
  }
  setF(outInfo, 0, <f64>iterations)
  setF(outInfo, 1, converged ? 1.0 : 0.0)
  setF(outInfo, 2, 0.0)
  return 0
}

/** out[i] = x_i·β for n rows of p columns (the linear predictor, without offset). */
export function linearPredictor(x: usize, n: i32, p: i32, beta: usize, out: usize): void {
  const rowBytes = <usize>p << 3
  for (let i = 0; i < n; i++) setF(out, i, rowDot(x + <usize>i * rowBytes, p, beta))
}
