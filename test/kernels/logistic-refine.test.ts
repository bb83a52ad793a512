/**
 * The temporal logistic is fitted off its (k, t0) grid to the least-squares optimum over its domain
 * (10⁻⁴ ≤ k ≤ 20, t0 within the series' span ± the span, both asymptotes on the score's scale
 * 0–10): on an exact logistic series whose k and t0 fall between grid points the fit recovers
 * them, and on noisy series — drops still under way at the end, drops at the first or last point,
 * jumps between two levels, flat series — no point of a dense grid over the domain has a lower
 * SSE (WASM and twin alike, bit for bit), so the logistic's AICc is not inflated, model selection
 * does not lean against it, and it never forecasts off the scale through a far tail.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"

const wasm = makeWasm(new Arena(instantiateCore()))
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)

/**
 * The logistic's SSE with its best asymptotes on the score's scale, computed apart from the
 * kernels: y ≈ d·u + e·b with b = 1/(1 + e^(k(t − t0))), u = 1 − b (each from its own exponential,
 * so neither loses digits near 1), and 0 ≤ d, e ≤ 10 (d = the level after, e = d + B the level
 * before). A box-constrained least-squares problem in two variables: its optimum is the best
 * feasible point among the unconstrained one, the four edges' (one variable at a bound, the other
 * solved and clamped) and the four corners (the KKT conditions leave no other candidate).
 */
const LO = 0
const HI = 10
/** Scratch for logisticSse: b and u of the series (reused, as the dense grid calls it 150,000 times per series). */
let bs = new Float64Array(64)
let us = new Float64Array(64)

/** Σ (y − d·u − e·b)², in index order; Infinity when (d, e) is off the scale's box. */
const boxSse = (y: ReadonlyArray<number>, m: number, d: number, e: number): number => {
  if (!(d >= LO && d <= HI && e >= LO && e <= HI)) return Infinity
  let a = 0
  for (let i = 0; i < m; i++) a += (y[i]! - d * us[i]! - e * bs[i]!) ** 2
  return a
}

const clamp = (x: number) => Math.min(HI, Math.max(LO, x))

/** Σ p·q over the first m, in index order. */
const dot = (p: ArrayLike<number>, q: ArrayLike<number>, m: number): number => {
  let a = 0
  for (let i = 0; i < m; i++) a += p[i]! * q[i]!
  return a
}

/** The sums run in index order, as a reduce over arrays would: every value is the same to the last bit. */
const logisticSse = (y: ReadonlyArray<number>, k: number, t0: number): number => {
  const m = y.length
  if (bs.length < m) [bs, us] = [new Float64Array(m), new Float64Array(m)]
  for (let t = 0; t < m; t++) {
    bs[t] = 1 / (1 + Math.exp(k * (t - t0)))
    us[t] = 1 / (1 + Math.exp(-k * (t - t0)))
  }
  const uu = dot(us, us, m)
  const bb = dot(bs, bs, m)
  const ub = dot(us, bs, m)
  const uy = dot(us, y, m)
  const by = dot(bs, y, m)
  let best = Infinity
  const det = uu * bb - ub * ub
  if (det > 1e-12 * uu * bb) best = Math.min(best, boxSse(y, m, (bb * uy - ub * by) / det, (uu * by - ub * uy) / det))
  for (let side = 0; side < 2; side++) {
    const bound = side === 0 ? LO : HI
    // d at a bound: y − d·u ≈ e·b
    best = Math.min(best, boxSse(y, m, bound, clamp((by - bound * ub) / bb)))
    // e at a bound: y − e·b ≈ d·u
    best = Math.min(best, boxSse(y, m, clamp((uy - bound * ub) / uu), bound))
    best = Math.min(best, boxSse(y, m, bound, LO))
    best = Math.min(best, boxSse(y, m, bound, HI))
  }
  return best
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

  it("asymptotes on the scale: a last-point drop after a flat series is no exponential collapse to 0", () => {
    // A far tail (B ≈ −888,768) mimicking an exponential through the last point has a lower SSE
    // than any logistic with its levels on the scale; it is outside the domain.
    const y = [6.979, 6.986, 6.971, 6.97, 6.981, 7.017, 7.033, 6.999, 7.022, 6.985, 6.672]
    const r = run(k.fitTrajectories(Float64Array.from(y), 1, y.length, 6))
    expect(r.model[0]).toBe(4)
    const [d, b] = [r.params[0]!, r.params[1]!]
    for (const level of [d, d + b]) {
      expect(level).toBeGreaterThanOrEqual(0)
      expect(level).toBeLessThanOrEqual(10)
    }
    const sse = sseFromAicc(r.aicc[4]!, y.length)
    expect(sse).toBeCloseTo(logisticSse(y, r.params[2]!, r.params[3]!), 9)
    expect(sse).toBeLessThanOrEqual(denseGridMin(y) + 1e-9)
    for (const p of r.pred) expect(p).toBeGreaterThan(6)
  })

  it("drops at the first or last point, two-level jumps, flat series with noise, series near 0 and 10: the bounded optimum, levels on the scale", () => {
    const noise = (i: number) => (((i * 7919) % 13) - 6) / 100
    const shapes: Array<Array<number>> = [
      Array.from({ length: 12 }, (_, t) => (t === 0 ? 2.1 : 8 + noise(t))),
      Array.from({ length: 12 }, (_, t) => (t === 11 ? 0.4 : 7.5 + noise(t))),
      Array.from({ length: 14 }, (_, t) => (t < 7 ? 9.6 : 1.2) + noise(t)),
      Array.from({ length: 16 }, (_, t) => (t % 8 < 4 ? 6 : 4) + noise(t)),
      Array.from({ length: 12 }, (_, t) => 5 + noise(t)),
      Array.from({ length: 10 }, (_, t) => Math.max(0, 0.3 - 0.05 * t) + Math.abs(noise(t))),
      Array.from({ length: 10 }, (_, t) => Math.min(10, 9.7 + 0.05 * t) - Math.abs(noise(t)))
    ]
    for (const y of shapes) {
      const r = run(k.fitTrajectories(Float64Array.from(y), 1, y.length, 3))
      const sse = sseFromAicc(r.aicc[4]!, y.length)
      expect(sse, JSON.stringify(y)).toBeLessThanOrEqual(denseGridMin(y) + 1e-9)
      if (r.model[0] === 4) for (const level of [r.params[0]!, r.params[0]! + r.params[1]!]) expect(level >= 0 && level <= 10, JSON.stringify(y)).toBe(true)
    }
  })
})

it("the bounded logistic is the same in WASM and the twin, bit for bit", () => {
  const y = Float64Array.from([6.979, 6.986, 6.971, 6.97, 6.981, 7.017, 7.033, 6.999, 7.022, 6.985, 6.672, 9.6, 9.6, 1.2, 1.2, 1.3])
  const a = run(wasm.fitTrajectories(y, 1, y.length, 4))
  const b = run(reference.fitTrajectories(y, 1, y.length, 4))
  expect(a.model[0]).toBe(4)
  expect([...a.params, ...a.pred, a.aicc[4]]).toEqual([...b.params, ...b.pred, b.aicc[4]])
})
