/**
 * The GLM kernels (IRLS, Poisson and logistic): WASM against the TypeScript twin on random designs,
 * closed-form answers (one binary covariate: the fitted coefficients are the group log rates and
 * log odds), recovery of known coefficients within their standard errors, and the failure on a
 * collinear design.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { type GlmFamily, makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"
import { mulberry32 } from "../support/random.ts"

const wasm = makeWasm(new Arena(instantiateCore()))
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)
const close = (a: number, b: number, tol: number) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b))

const poisson = (rand: () => number, mean: number) => {
  const l = Math.exp(-mean)
  let k = 0
  let prod = rand()
  while (prod > l) {
    k++
    prod *= rand()
  }
  return k
}

/** n rows: an intercept, then p − 1 normal-ish covariates; y drawn from the family with `beta`. */
const simulate = (seed: number, n: number, beta: ReadonlyArray<number>, family: GlmFamily, withOffset: boolean) => {
  const rand = mulberry32(seed)
  const p = beta.length
  const x = new Float64Array(n * p)
  const y = new Float64Array(n)
  const offset = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    x[i * p] = 1
    let eta = beta[0]!
    for (let j = 1; j < p; j++) {
      const v = (rand() + rand() + rand() - 1.5) * 2
      x[i * p + j] = v
      eta += beta[j]! * v
    }
    offset[i] = withOffset ? Math.log(0.5 + 2 * rand()) : 0
    eta += offset[i]!
    y[i] = family === "poisson" ? poisson(rand, Math.exp(eta)) : rand() < 1 / (1 + Math.exp(-eta)) ? 1 : 0
  }
  return { x, y, offset, n, p }
}

describe("fitGlm", () => {
  it("WASM and the TypeScript twin agree on random designs (β, covariance, iterations)", () => {
    fc.assert(fc.property(
      fc.integer({ min: 0, max: 2 ** 30 }),
      fc.integer({ min: 40, max: 400 }),
      fc.array(fc.double({ min: -0.8, max: 0.8, noNaN: true }), { minLength: 1, maxLength: 7 }),
      fc.constantFrom<GlmFamily>("poisson", "logistic"),
      fc.boolean(),
      (seed, n, beta, family, withOffset) => {
        const d = simulate(seed, n, beta, family, withOffset)
        const a = Effect.runSyncExit(wasm.fitGlm(d.x, d.y, d.offset, d.n, d.p, family))
        const b = Effect.runSyncExit(reference.fitGlm(d.x, d.y, d.offset, d.n, d.p, family))
        if (Exit.isFailure(a) || Exit.isFailure(b)) return Exit.isFailure(a) && Exit.isFailure(b)
        const [fa, fb] = [a.value, b.value]
        return fa.iterations === fb.iterations && fa.converged === fb.converged &&
          fa.beta.every((v, j) => close(v, fb.beta[j]!, 1e-9)) && fa.covariance.every((v, j) => close(v, fb.covariance[j]!, 1e-9))
      }
    ), { numRuns: 80 })
  })

  it("linearPredictor agrees with the twin and with a plain sum", () => {
    const d = simulate(7, 301, [0.2, -0.3, 0.5, 0.1, 0.7], "logistic", false)
    const beta = Float64Array.from([0.2, -0.3, 0.5, 0.1, 0.7])
    const a = run(wasm.linearPredictor(d.x, d.n, d.p, beta))
    const b = run(reference.linearPredictor(d.x, d.n, d.p, beta))
    for (let i = 0; i < d.n; i++) {
      let plain = 0
      for (let j = 0; j < d.p; j++) plain += d.x[i * d.p + j]! * beta[j]!
      expect(a[i]).toBe(b[i])
      expect(a[i]).toBeCloseTo(plain, 12)
    }
  })

  it.each([["wasm", wasm], ["reference", reference]] as const)("%s: one binary covariate gives the group log rate and log rate ratio (Poisson with exposure)", (_, k) => {
    // Group 0: 3 + 5 events over 2 + 6 years; group 1: 9 + 1 events over 1 + 3 years.
    const x = Float64Array.from([1, 0, 1, 0, 1, 1, 1, 1])
    const y = Float64Array.from([3, 5, 9, 1])
    const offset = Float64Array.from([2, 6, 1, 3].map(Math.log))
    const fit = run(k.fitGlm(x, y, offset, 4, 2, "poisson"))
    expect(fit.converged).toBe(true)
    expect(fit.beta[0]).toBeCloseTo(Math.log(8 / 8), 9)
    expect(fit.beta[1]).toBeCloseTo(Math.log(10 / 4) - Math.log(8 / 8), 9)
    // Var(log rate) = 1 / events in each group.
    expect(fit.covariance[0]).toBeCloseTo(1 / 8, 9)
    expect(fit.covariance[3]).toBeCloseTo(1 / 8 + 1 / 10, 9)
  })

  it.each([["wasm", wasm], ["reference", reference]] as const)("%s: one binary covariate gives the log odds and log odds ratio (logistic)", (_, k) => {
    // Group 0: 2 of 8 events; group 1: 6 of 10.
    const rows: Array<[number, number]> = [
      ...Array.from({ length: 8 }, (_, i) => [0, i < 2 ? 1 : 0] as [number, number]),
      ...Array.from({ length: 10 }, (_, i) => [1, i < 6 ? 1 : 0] as [number, number])
    ]
    const x = Float64Array.from(rows.flatMap(([g]) => [1, g]))
    const y = Float64Array.from(rows.map(([, v]) => v))
    const fit = run(k.fitGlm(x, y, new Float64Array(18), 18, 2, "logistic"))
    expect(fit.beta[0]).toBeCloseTo(Math.log(2 / 6), 9)
    expect(fit.beta[1]).toBeCloseTo(Math.log(6 / 4) - Math.log(2 / 6), 9)
    // Woolf: Var(log OR) = Σ 1/cell.
    expect(fit.covariance[3]).toBeCloseTo(1 / 2 + 1 / 6 + 1 / 6 + 1 / 4, 9)
  })

  it.each<GlmFamily>(["poisson", "logistic"])("recovers known coefficients within 4 standard errors (%s, 20,000 rows)", (family) => {
    const truth = [-1.2, 0.4, -0.25, 0.1, 0]
    const d = simulate(2026, 20_000, truth, family, family === "poisson")
    const fit = run(wasm.fitGlm(d.x, d.y, d.offset, d.n, d.p, family))
    expect(fit.converged).toBe(true)
    truth.forEach((b, j) => {
      const se = Math.sqrt(fit.covariance[j * d.p + j]!)
      expect(se).toBeGreaterThan(0)
      expect(se).toBeLessThan(0.1)
      expect(Math.abs(fit.beta[j]! - b)).toBeLessThan(4 * se)
    })
  })

  it.each([["wasm", wasm], ["reference", reference]] as const)("%s: a collinear design fails with a reason", (_, k) => {
    const x = Float64Array.from([1, 2, 1, 2, 1, 2, 1, 2])
    const exit = Effect.runSyncExit(k.fitGlm(x, Float64Array.from([0, 1, 1, 0]), new Float64Array(4), 4, 2, "logistic"))
    expect(Exit.isFailure(exit)).toBe(true)
    expect(JSON.stringify(exit)).toContain("not positive definite")
  })

  it("rejects arrays whose length does not match the dimensions", () => {
    const exit = Effect.runSyncExit(wasm.fitGlm(new Float64Array(5), new Float64Array(2), new Float64Array(2), 2, 2, "poisson"))
    expect(JSON.stringify(exit)).toContain("x has 5 values, dimensions say 4")
  })
})
