/**
 * WASM kernels against their TypeScript twins on random inputs (fast-check): series with gaps (NaN),
 * constant series, 3-point and 1000-point series. Agreement: |a − b| ≤ 1e-9 · max(1, |a|, |b|),
 * NaN only where the other side is NaN; fired-rule sets identical.
 */
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"

const wasm = makeWasm(new Arena(instantiateCore()))
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)

const close = (a: number, b: number, tol = 1e-9) =>
  (Number.isNaN(a) && Number.isNaN(b)) || a === b || Math.abs(a - b) <= tol * Math.max(1, Math.abs(a), Math.abs(b))
const allClose = (x: ArrayLike<number>, y: ArrayLike<number>, tol = 1e-9) => {
  if (x.length !== y.length) return false
  for (let i = 0; i < x.length; i++) if (!close(x[i]!, y[i]!, tol)) return false
  return true
}

/** A series of `n` points in [0, 10]: random walk, constant, or noise, with an optional share of gaps. */
const series = (n: number) =>
  fc.tuple(
    fc.constantFrom("walk", "constant", "noise", "decay"),
    fc.double({ min: 0, max: 10, noNaN: true }),
    fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: n, maxLength: n }),
    fc.double({ min: 0, max: 0.4, noNaN: true }),
    fc.integer({ min: 0, max: 2 ** 30 })
  ).map(([kind, start, steps, gapShare, seed]) => {
    const out = new Array<number>(n)
    let x = start
    let s = seed
    for (let t = 0; t < n; t++) {
      if (kind === "walk") x = Math.min(10, Math.max(0, x + steps[t]!))
      else if (kind === "noise") x = Math.min(10, Math.max(0, start + 2 * steps[t]!))
      else if (kind === "decay") x = 2 + (start * 0.8) * Math.exp(-0.1 * t) + 0.05 * steps[t]!
      s = (s * 1103515245 + 12345) % 2 ** 31
      out[t] = t > 0 && s / 2 ** 31 < gapShare ? NaN : x
    }
    return out
  })

/** A batch of `count` items of `axes` series of `n` points (flattened). */
const batch = (count: number, axes: number, n: number) =>
  fc.array(series(n), { minLength: count * axes, maxLength: count * axes }).map((s) => Float64Array.from(s.flat()))

const sizes = [3, 4, 12, 36] as const

describe("correlation", () => {
  it.each(sizes)("Pearson and Spearman of every axis pair agree (%i points)", (n) => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 8 }).chain((k) => batch(3, k, n).map((d) => [k, d] as const)), ([k, data]) => {
      const a = run(wasm.correlationMatrix(data, 3, k, n))
      const b = run(reference.correlationMatrix(data, 3, k, n))
      return allClose(a.pearson, b.pearson) && allClose(a.spearman, b.spearman) && allClose(a.count, b.count, 0)
    }), { numRuns: 60 })
  })
  it("agrees on 1000-point series", () => {
    fc.assert(fc.property(batch(1, 3, 1000), (data) => {
      const a = run(wasm.correlationMatrix(data, 1, 3, 1000))
      const b = run(reference.correlationMatrix(data, 1, 3, 1000))
      return allClose(a.pearson, b.pearson) && allClose(a.spearman, b.spearman)
    }), { numRuns: 5, endOnFailure: true })
  })
  it("lagged cross-correlation agrees (best lag, r, p, pairs)", () => {
    fc.assert(fc.property(fc.integer({ min: 5, max: 60 }).chain((n) => fc.tuple(fc.constant(n), batch(2, 1, n), batch(2, 1, n), fc.integer({ min: 0, max: 4 }))), ([n, xs, ys, lag]) => {
      const a = run(wasm.laggedXcorr(xs, ys, 2, n, lag))
      const b = run(reference.laggedXcorr(xs, ys, 2, n, lag))
      return allClose(a.lag, b.lag, 0) && allClose(a.r, b.r) && allClose(a.p, b.p) && allClose(a.n, b.n, 0)
    }), { numRuns: 80 })
  })
})

describe("trajectory", () => {
  it.each(sizes)("selected model, AICc and predictions agree (%i points)", (n) => {
    fc.assert(fc.property(batch(4, 1, n), fc.integer({ min: 1, max: 12 }), (data, horizon) => {
      const a = run(wasm.fitTrajectories(data, 4, n, horizon))
      const b = run(reference.fitTrajectories(data, 4, n, horizon))
      if (!allClose(a.aicc, b.aicc)) return false
      for (let s = 0; s < 4; s++) {
        if (a.model[s] !== b.model[s]) {
          // Only a tie (within tolerance) may be broken differently.
          if (!close(a.aicc[s * 5 + a.model[s]!]!, b.aicc[s * 5 + b.model[s]!]!)) return false
          continue
        }
        const sl = (x: Float64Array) => x.subarray(s * horizon, (s + 1) * horizon)
        if (!allClose(sl(a.pred), sl(b.pred)) || !allClose(sl(a.lo), sl(b.lo)) || !allClose(sl(a.hi), sl(b.hi))) return false
      }
      return true
    }), { numRuns: 40 })
  })
  it("agrees on a 1000-point series", () => {
    fc.assert(fc.property(batch(1, 1, 1000), (data) => {
      const a = run(wasm.fitTrajectories(data, 1, 1000, 6))
      const b = run(reference.fitTrajectories(data, 1, 1000, 6))
      return a.model[0] === b.model[0] && allClose(a.pred, b.pred) && allClose(a.aicc, b.aicc)
    }), { numRuns: 4, endOnFailure: true })
  })
})

describe("decay rules", () => {
  it.each(sizes)("fired-rule sets are identical (%i points)", (n) => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 8 }).chain((k) => batch(5, k, n).map((d) => [k, d] as const)), ([k, data]) => {
      const codes = Int32Array.from({ length: k }, (_, i) => i)
      const a = run(wasm.evaluateRules(data, 5, k, n, codes))
      const b = run(reference.evaluateRules(data, 5, k, n, codes))
      return allClose(a.mask, b.mask, 0) && allClose(a.axisMask, b.axisMask, 0)
    }), { numRuns: 60 })
  })
  it("agrees on 1000-point series", () => {
    fc.assert(fc.property(batch(1, 4, 1000), (data) => {
      const codes = Int32Array.from([0, 1, 2, 4])
      const a = run(wasm.evaluateRules(data, 1, 4, 1000, codes))
      const b = run(reference.evaluateRules(data, 1, 4, 1000, codes))
      return a.mask[0] === b.mask[0] && allClose(a.axisMask, b.axisMask, 0)
    }), { numRuns: 5, endOnFailure: true })
  })
})

describe("cohort scans", () => {
  const column = fc.integer({ min: 1, max: 300 }).chain((n) =>
    fc.tuple(
      fc.array(fc.oneof(fc.double({ min: -5, max: 15, noNaN: true }), fc.constant(NaN)), { minLength: n, maxLength: n }),
      fc.array(fc.integer({ min: -1, max: 9 }), { minLength: n, maxLength: n }),
      fc.array(fc.integer({ min: 0, max: 1 }), { minLength: n, maxLength: n })
    ))
  it("masks, counts, grouped stats and quantiles agree", () => {
    fc.assert(fc.property(column, fc.double({ min: -2, max: 12, noNaN: true }), fc.double({ min: 0, max: 8, noNaN: true }), ([values, groups, mask0], lo, width) => {
      const vals = Float64Array.from(values)
      const grp = Int32Array.from(groups)
      const mask = Uint8Array.from(mask0)
      const set = Uint8Array.from([1, 0, 1, 1, 0, 0, 1])
      const [wv, wg] = [run(wasm.columnF64(vals)), run(wasm.columnI32(grp))]
      const [rv, rg] = [run(reference.columnF64(vals)), run(reference.columnI32(grp))]
      const m1 = run(wasm.maskRange(wv, lo, lo + width, mask))
      const m2 = run(reference.maskRange(rv, lo, lo + width, mask))
      if (!allClose(m1, m2, 0)) return false
      if (!allClose(run(wasm.maskInSet(wg, set, mask)), run(reference.maskInSet(rg, set, mask)), 0)) return false
      if (run(wasm.maskCount(m1)) !== run(reference.maskCount(m2))) return false
      const g1 = run(wasm.groupStats(wg, wv, mask, 10))
      const g2 = run(reference.groupStats(rg, rv, mask, 10))
      if (!allClose(g1.count, g2.count, 0) || !allClose(g1.sum, g2.sum) || !allClose(g1.mean, g2.mean)) return false
      const qs = [0, 0.1, 0.25, 0.5, 0.9, 1]
      const q1 = run(wasm.quantiles(wv, mask, qs))
      const q2 = run(reference.quantiles(rv, mask, qs))
      return q1.n === q2.n && allClose(q1.values, q2.values)
    }), { numRuns: 150 })
  })
  it("quantiles agree on heavily tied values (quickselect in WASM, a full sort in the twin)", () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 400 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 7 }), (ints, qs) => {
      const vals = Float64Array.from(ints)
      const mask = new Uint8Array(vals.length).fill(1)
      const a = run(wasm.quantiles(run(wasm.columnF64(vals)), mask, qs))
      const b = run(reference.quantiles(run(reference.columnF64(vals)), mask, qs))
      return a.n === b.n && allClose(a.values, b.values)
    }), { numRuns: 200 })
  })
})
