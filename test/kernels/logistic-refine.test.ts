/**
 * The temporal logistic is fitted off its (k, t0) grid to the least-squares optimum over its domain
 * (0 < k ≤ 20, t0 within the series' span ± the span): on an exact logistic series whose k and t0
 * fall between grid points the fit recovers them, and on noisy series — drops still under way at
 * the end among them — no point of a dense grid over the domain has a lower SSE (WASM and twin
 * alike), so the logistic's AICc is not inflated and model selection does not lean against it.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"

const wasm = makeWasm(new Arena(instantiateCore()))
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)

/**
 * The logistic's SSE with its best d and B (least squares on [1, basis]), computed apart from the
 * kernels. The basis is 1/(1 + e^(−k(t − t0))) (= 1 − b, the same fit with an intercept) when t0
 * lies past the middle of the series: there b is near 1 and b − mean(b) keeps too few digits to
 * compare fits (at t0 eight points past the end and k = 3, b = 1 − 10⁻¹²).
 */
const logisticSse = (y: ReadonlyArray<number>, k: number, t0: number): number => {
  const m = y.length
  const sign = t0 > (m - 1) / 2 ? -1 : 1
  const b = y.map((_, t) => 1 / (1 + Math.exp(sign * k * (t - t0))))
  const mb = b.reduce((a, x) => a + x, 0) / m
  const my = y.reduce((a, x) => a + x, 0) / m
  let sbb = 0
  let sby = 0
  for (let i = 0; i < m; i++) {
    sbb += (b[i]! - mb) ** 2
    sby += (b[i]! - mb) * (y[i]! - my)
  }
  const slope = sbb > 0 ? sby / sbb : 0
  return y.reduce((a, yi, i) => a + (yi - my - slope * (b[i]! - mb)) ** 2, 0)
}

/** The lowest SSE on a dense grid over the domain: k geometric from 0.01 to 20 (500 values), t0 over the span ± the span (301 values). */
const denseGridMin = (y: ReadonlyArray<number>): number => {
  const span = y.length - 1
  let best = Infinity
  for (let i = 0; i < 500; i++) {
    const k = 0.01 * Math.pow(2000, i / 499)
    for (let j = 0; j <= 300; j++) best = Math.min(best, logisticSse(y, k, -span + (j * 3 * span) / 300))
  }
  return best
}

/** The logistic's SSE back from its AICc (4 parameters, m points; the SSE floor is far below these). */
const sseFromAicc = (aicc: number, m: number) => m * Math.exp((aicc - 8 - 40 / (m - 5)) / m)

/** Deterministic noisy logistic series: a level of 3 + 5 / (1 + e^{k(t − t0)}) with noise of ±0.15, recorded to 0.1. */
const noisySeries = (i: number): Array<number> => {
  let state = i * 9301 + 49297
  const noise = () => {
    state = (state * 9301 + 49297) % 233280
    return state / 233280 - 0.5
  }
  const k = 0.3 + (i % 7) * 0.15
  const t0 = 14 + (i % 9)
  const m = 12 + (i % 10)
  return Array.from({ length: m }, (_, t) => Math.round((3 + 5 / (1 + Math.exp(k * (t - t0))) + 0.3 * noise()) * 10) / 10)
}

describe.each([["wasm", wasm], ["twin", reference]] as const)("logistic refinement (%s)", (_, k) => {
  it("recovers k = 0.7 and t0 = 9.3 (both off the grid) from an exact logistic series", () => {
    const truth = (t: number) => 2 + 6 / (1 + Math.exp(0.7 * (t - 9.3)))
    const series = Float64Array.from({ length: 20 }, (_, t) => truth(t))
    const r = run(k.fitTrajectories(series, 1, 20, 3))
    expect(r.model[0]).toBe(4)
    // params: d, B, k, t0 for the logistic
    expect(r.params[2]).toBeCloseTo(0.7, 2)
    expect(r.params[3]).toBeCloseTo(9.3, 2)
    for (let h = 0; h < 3; h++) expect(r.pred[h]).toBeCloseTo(truth(20 + h), 3)
  })

  it("a drop still under way at the end of the series: the least-squares optimum, not a stop short of it", () => {
    const y = [8.1, 8.1, 7.9, 7.9, 7.9, 8.1, 7.9, 8, 8.1, 7.9, 8, 7.9, 8, 7.9, 7.9, 7.7, 6.8, 5.6, 4.1, 3.3]
    const r = run(k.fitTrajectories(Float64Array.from(y), 1, y.length, 6))
    expect(r.model[0]).toBe(4)
    const sse = sseFromAicc(r.aicc[4]!, y.length)
    expect(sse).toBeCloseTo(logisticSse(y, r.params[2]!, r.params[3]!), 9)
    expect(sse).toBeLessThanOrEqual(denseGridMin(y) + 1e-9)
  })

  it("noisy series, drops within and past the end: no point of a dense grid over the domain beats the fit", () => {
    const series = Array.from({ length: 24 }, (_, i) => noisySeries(i + 1))
    for (const y of series) {
      const r = run(k.fitTrajectories(Float64Array.from(y), 1, y.length, 1))
      expect(sseFromAicc(r.aicc[4]!, y.length)).toBeLessThanOrEqual(denseGridMin(y) + 1e-9)
    }
  })
})
