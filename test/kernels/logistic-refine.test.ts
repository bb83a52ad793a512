/**
 * The temporal logistic is fitted off its (k, t0) grid: on an exact logistic series whose k and t0
 * fall between grid points, the fit recovers them (WASM and twin alike), so its AICc is not
 * inflated by the grid and model selection does not lean against the logistic.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"

const wasm = makeWasm(new Arena(instantiateCore()))
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)

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
})
