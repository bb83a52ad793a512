/**
 * One rule for comparing score quantities with thresholds (src/kernels/thresholds.ts): a value equal
 * to the threshold in decimal arithmetic counts as equal, whatever binary rounding made of it —
 * identically in the WASM kernels and their TypeScript twins, and in the plugins that compare.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { declineOutcomes } from "../../plugins/risk-model/rows.ts"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { RULE_NAMES } from "../../src/kernels/reference/decayRules.ts"
import { atLeast, atMost, above, below, SCORE_TOLERANCE } from "../../src/kernels/thresholds.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"
import { AXES } from "../../src/plugin/axes.ts"

const wasm = makeWasm(new Arena(instantiateCore()))
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)
const engines = [["wasm", wasm], ["twin", reference]] as const

const rulesOf = (k: typeof wasm, series: ReadonlyArray<number>) => {
  const mask = run(k.evaluateRules(Float64Array.from(series), 1, 1, series.length, Int32Array.from([0]))).mask[0]!
  return RULE_NAMES.filter((_, i) => (mask & (1 << i)) !== 0)
}

describe("the rule", () => {
  it("decimal ties compare as equal; anything a tenth of a point away does not", () => {
    expect(4.1 - 3.1).toBeLessThan(1) // what binary floating point makes of it
    expect(atLeast(4.1 - 3.1, 1)).toBe(true)
    expect(atMost(6.7 - 8.2, -1.5)).toBe(true)
    expect(below(4.1 - 3.1, 1)).toBe(false)
    expect(above(1.0000001, 1)).toBe(false)
    expect(atLeast(0.9, 1)).toBe(false)
    expect(below(5.9, 6)).toBe(true)
    expect(SCORE_TOLERANCE).toBeLessThan(0.1 / 36 / 100)
  })
})

describe.each(engines)("decay rules on the threshold (%s)", (_, k) => {
  it("rule 10 rebound fires when the latest value is exactly 1 above the minimum", () => {
    expect(rulesOf(k, [4.4, 4.0, 3.1, 4.1])).toContain("rule_10_rebound")
    expect(rulesOf(k, [4.4, 4.0, 3.1, 4.0])).not.toContain("rule_10_rebound")
  })
  it("rule 21 ceiling loss fires when the latest value is exactly 1.5 below the early peak", () => {
    expect(rulesOf(k, [8.2, 8.0, 7.9, 7.5, 7.0, 6.7])).toContain("rule_21_ceiling_loss")
    expect(rulesOf(k, [8.2, 8.0, 7.9, 7.5, 7.0, 6.8])).not.toContain("rule_21_ceiling_loss")
  })
  it("rule 02 sharp drop fires on a step of exactly −1.5, rule 20 floor on values of exactly 1", () => {
    expect(rulesOf(k, [6.3, 4.8, 4.8])).toContain("rule_02_sharp_drop")
    expect(rulesOf(k, [6.3, 4.9, 4.9])).not.toContain("rule_02_sharp_drop")
    expect(rulesOf(k, [3.0, 1.0, 1.0, 1.0])).toContain("rule_20_floor_effect")
  })
})

describe.each(engines)("cohort by mean axis score (%s)", (_, k) => {
  it("a patient whose mean is exactly the min or the max is selected", () => {
    // Three patients, one axis, two months (f32 like the service's panel): means 6.0, 5.95, 4.2.
    const data = Float32Array.from([5.9, 6.1, 6.0, 5.9, 4.4, 4.0])
    const panel = run(k.panel(data, 3, 1, 2))
    const all = new Uint8Array(3).fill(1)
    expect(Array.from(run(k.panelMeanMask(panel, 0, 0, 2, 6.0, Number.POSITIVE_INFINITY, all)))).toEqual([1, 0, 0])
    expect(Array.from(run(k.panelMeanMask(panel, 0, 0, 2, Number.NEGATIVE_INFINITY, 4.2, all)))).toEqual([0, 0, 1])
  })
})

describe("risk model: health decline", () => {
  it("a fall of exactly 1.0 point counts; 0.9 does not", () => {
    const n = 3
    const first = new Float64Array(AXES.length * n).fill(Number.NaN)
    const last = new Float64Array(AXES.length * n).fill(Number.NaN)
    // Patient 0: PO 4.1 → 3.1 (−1.0 in decimals, −0.9999999999999996 in binary); patient 1: 4.1 → 3.2; patient 2 unscored.
    first[0] = 4.1
    last[0] = 3.1
    first[1] = 4.1
    last[1] = 3.2
    expect(3.1 - 4.1).toBeGreaterThan(-1)
    expect(declineOutcomes(first, last, n)).toEqual({ patients: [0, 1], outcome: [1, 0] })
  })
})
