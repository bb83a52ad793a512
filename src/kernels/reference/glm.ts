/**
 * Twin of assembly/kernels/glm.ts: IRLS for Poisson (log) and binomial (logit) GLMs, in the same
 * operation order (two-lane dot products, (w·x_j)·x_k accumulation, the same Cholesky).
 */
import { expK } from "./common.ts"

const POISSON = 0
const ETA_LIMIT = 30

const rowDot = (x: Float64Array, base: number, p: number, beta: Float64Array): number => {
  let s0 = 0
  let s1 = 0
  let k = 0
  for (; k + 2 <= p; k += 2) {
    s0 += x[base + k]! * beta[k]!
    s1 += x[base + k + 1]! * beta[k + 1]!
  }
  let s = s0 + s1
  if (k < p) s += x[base + k]! * beta[k]!
  return s
}

const cholesky = (a: Float64Array, p: number): boolean => {
  for (let j = 0; j < p; j++) {
    const diag = a[j * p + j]!
    let s = diag
    for (let k = 0; k < j; k++) s -= a[j * p + k]! * a[j * p + k]!
    if (!(s > 1e-12 * diag) || !(diag > 0)) return false
    const l = Math.sqrt(s)
    a[j * p + j] = l
    for (let i = j + 1; i < p; i++) {
      let t = a[i * p + j]!
      for (let k = 0; k < j; k++) t -= a[i * p + k]! * a[j * p + k]!
      a[i * p + j] = t / l
    }
  }
  return true
}

const cholSolve = (a: Float64Array, p: number, b: Float64Array): void => {
  for (let i = 0; i < p; i++) {
    let t = b[i]!
    for (let k = 0; k < i; k++) t -= a[i * p + k]! * b[k]!
    b[i] = t / a[i * p + i]!
  }
  for (let i = p - 1; i >= 0; i--) {
    let t = b[i]!
    for (let k = i + 1; k < p; k++) t -= a[k * p + i]! * b[k]!
    b[i] = t / a[i * p + i]!
  }
}

/** See assembly/kernels/glm.ts fitGlm. Returns the status (0 ok, −1 not positive definite). */
export const fitGlm = (
  x: Float64Array, y: Float64Array, offset: Float64Array, n: number, p: number, family: number, maxIter: number,
  outBeta: Float64Array, outCov: Float64Array, outInfo: Float64Array
): number => {
  const a = new Float64Array(p * p)
  const b = new Float64Array(p)
  const next = new Float64Array(p)
  outBeta.fill(0)
  let iterations = 0
  let converged = false
  for (let iter = 0; iter < maxIter; iter++) {
    a.fill(0)
    b.fill(0)
    for (let i = 0; i < n; i++) {
      const base = i * p
      const yi = y[i]!
      const oi = offset[i]!
      let eta: number
      let mu: number
      if (iter === 0) {
        mu = family === POISSON ? yi + 0.1 : (yi + 0.5) * 0.5
        eta = family === POISSON ? Math.log(mu) : Math.log(mu / (1 - mu))
      } else {
        eta = oi + rowDot(x, base, p, outBeta)
        if (eta > ETA_LIMIT) eta = ETA_LIMIT
        if (eta < -ETA_LIMIT) eta = -ETA_LIMIT
        mu = family === POISSON ? expK(eta) : 1 / (1 + expK(-eta))
      }
      const w = family === POISSON ? mu : mu * (1 - mu)
      const z = eta - oi + (yi - mu) / w
      const wz = w * z
      for (let j = 0; j < p; j++) {
        const xj = x[base + j]!
        if (xj === 0) continue
        const s = w * xj
        const row = j * p
        for (let k = 0; k <= j; k++) a[row + k]! += s * x[base + k]!
        b[j]! += wz * xj
      }
    }
    if (!cholesky(a, p)) {
      outInfo[0] = iter + 1
      outInfo[1] = 0
      outInfo[2] = -1
      return -1
    }
    next.set(b)
    cholSolve(a, p, next)
    let moved = false
    for (let j = 0; j < p; j++) {
      const nb = next[j]!
      if (Math.abs(nb - outBeta[j]!) > 1e-10 * (Math.abs(nb) + 1)) moved = true
      outBeta[j] = nb
    }
    iterations = iter + 1
    if (iter > 0 && !moved) {
      converged = true
      break
    }
  }
  for (let c = 0; c < p; c++) {
    for (let j = 0; j < p; j++) next[j] = j === c ? 1 : 0
    cholSolve(a, p, next)
    for (let j = 0; j < p; j++) outCov[j * p + c] = next[j]!
  }
  outInfo[0] = iterations
  outInfo[1] = converged ? 1 : 0
  outInfo[2] = 0
  return 0
}

/** out[i] = x_i·β. */
export const linearPredictor = (x: Float64Array, n: number, p: number, beta: Float64Array, out: Float64Array): void => {
  for (let i = 0; i < n; i++) out[i] = rowDot(x, i * p, p, beta)
}
