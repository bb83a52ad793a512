/** Known values, error handling and memory ownership of the kernels. */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { MODEL_NAMES } from "../../src/kernels/reference/trajectory.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"

const arena = new Arena(instantiateCore())
const wasm = makeWasm(arena)
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)

describe.each([["wasm", wasm], ["reference", reference]] as const)("%s", (_n, k) => {
  it("Pearson and Spearman match hand-computed values and skip gaps pairwise", () => {
    // x = 1..5, y = 2,4,5,4,5 (the 6th pair has a gap): Σdx·dy = 6, Σdx² = 10, Σdy² = 6 → r = 6/√60
    const data = Float64Array.from([1, 2, 3, 4, 5, NaN, 2, 4, 5, 4, 5, 9])
    const r = run(k.correlationMatrix(data, 1, 2, 6))
    expect(r.count[0]).toBe(5)
    expect(r.pearson[0]).toBeCloseTo(6 / Math.sqrt(60), 12)
    // ranks of y: 1, 2.5, 4.5, 2.5, 4.5 → Σdx·dy = 7, Σdy² = 9 → Spearman = 7/√90
    expect(r.spearman[0]).toBeCloseTo(7 / Math.sqrt(90), 12)
  })
  it("finds a planted lag of x leading y, significant, and none in unrelated noise", () => {
    const n = 104
    const x = Float64Array.from({ length: n }, (_, t) => 5 + 2 * Math.sin(t / 4) + ((t * 7919) % 13) / 13)
    const y = Float64Array.from({ length: n }, (_, t) => (t >= 4 ? x[t - 4]! * 0.8 + 1 : 5))
    const noise = Float64Array.from({ length: n }, (_, t) => ((t * 104729) % 97) / 9.7)
    const r = run(k.laggedXcorr(Float64Array.from([...x, ...x]), Float64Array.from([...y, ...noise]), 2, n, 8))
    expect(r.lag[0]).toBe(4)
    expect(r.r[0]).toBeGreaterThan(0.95)
    expect(r.p[0]).toBeLessThan(1e-6)
    expect(r.p[1]).toBeGreaterThan(0.05)
  })
  it("selects and continues a clean exponential plateau, a linear decline and a flat series", () => {
    const n = 24
    const plateau = Array.from({ length: n }, (_, t) => 3 + 5 * Math.exp(-0.15 * t))
    const lin = Array.from({ length: n }, (_, t) => 9 - 0.12 * t)
    const flat = Array.from({ length: n }, () => 6.5)
    const r = run(k.fitTrajectories(Float64Array.from([...plateau, ...lin, ...flat]), 3, n, 6))
    expect(Array.from(r.model, (m) => MODEL_NAMES[m])).toEqual(["exponential_plateau", "linear", "stable"])
    for (let h = 1; h <= 6; h++) {
      const t = n - 1 + h
      expect(r.pred[h - 1]).toBeCloseTo(3 + 5 * Math.exp(-0.15 * t), 4)
      expect(r.pred[6 + h - 1]).toBeCloseTo(9 - 0.12 * t, 6)
      expect(r.pred[12 + h - 1]).toBeCloseTo(6.5, 9)
      expect(r.lo[h - 1]).toBeLessThanOrEqual(r.pred[h - 1]!)
      expect(r.hi[h - 1]).toBeGreaterThanOrEqual(r.pred[h - 1]!)
    }
  })
  it("clamps predictions to [0, 10]", () => {
    const steep = Float64Array.from({ length: 10 }, (_, t) => 9 - 0.9 * t)
    const r = run(k.fitTrajectories(steep, 1, 10, 12))
    expect(Math.min(...r.pred)).toBe(0)
    expect(Math.min(...r.lo)).toBe(0)
  })
  it("grouped means and quantiles match hand-computed values", () => {
    const values = run(k.columnF64(Float64Array.from([1, 2, 3, 4, NaN, 6, 7, 8])))
    const groups = run(k.columnI32(Int32Array.from([0, 0, 1, 1, 1, 2, 2, -1])))
    const mask = Uint8Array.from([1, 1, 1, 0, 1, 1, 1, 1])
    const g = run(k.groupStats(groups, values, mask, 3))
    expect(Array.from(g.count)).toEqual([2, 1, 2])
    expect(Array.from(g.mean)).toEqual([1.5, 3, 6.5])
    const q = run(k.quantiles(values, mask, [0, 0.5, 1, 0.25]))
    // selected present values 1,2,3,6,7,8 → median 4.5, Q1 (type 7) = 2.25
    expect(q.n).toBe(6)
    expect(Array.from(q.values)).toEqual([1, 4.5, 8, 2.25])
    const m = run(k.maskRange(values, 2, 6, mask))
    expect(Array.from(m)).toEqual([0, 1, 1, 0, 0, 1, 0, 0])
    expect(run(k.maskCount(m))).toBe(3)
  })
  it("refuses inconsistent shapes with a KernelError", () => {
    const e = Effect.runSync(Effect.flip(k.correlationMatrix(new Float64Array(5), 1, 2, 3)))
    expect(e._tag).toBe("KernelError")
    expect(e.message).toContain("correlationMatrix")
    const panel = run(k.panel(new Float32Array(4), 2, 1, 2))
    const wrongOutput = { outputs: ["median"] } as unknown as Parameters<typeof k.panelWindows>[5]
    const w = Effect.runSync(Effect.flip(k.panelWindows(panel, Int32Array.of(0), new Int32Array(2), new Int32Array(2), Uint8Array.of(1, 1), wrongOutput)))
    expect(w.message).toContain("output median is not one of n, mean, slope")
  })
})

describe("arena", () => {
  it("frees every batch's memory: repeated calls do not grow the arena", () => {
    const data = Float64Array.from({ length: 8 * 36 * 50 }, (_, i) => (i * 37) % 11)
    run(wasm.evaluateRules(data, 50, 8, 36, Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7])))
    const before = arena.used
    for (let i = 0; i < 50; i++) {
      run(wasm.evaluateRules(data, 50, 8, 36, Int32Array.from([0, 1, 2, 3, 4, 5, 6, 7])))
      run(wasm.fitTrajectories(data.subarray(0, 100 * 36), 100, 36, 6))
      run(wasm.correlationMatrix(data, 50, 8, 36))
    }
    expect(arena.used).toBe(before)
  })
  it("releases a batch that throws", () => {
    const before = arena.used
    expect(() => arena.batch((s) => {
      s.alloc(1 << 20)
      throw new Error("boom")
    })).toThrow("boom")
    expect(arena.used).toBe(before)
  })
})
