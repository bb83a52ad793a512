/**
 * Every decay rule has a hand-made series that must fire it and one that must not, checked on both
 * kernel layers (the conformance idea: one suite, every implementation).
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { AXES } from "../../src/plugin/axes.ts"
import { Kernels, makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { Arena } from "../../src/kernels/Arena.ts"
import { RULE_NAMES } from "../../src/kernels/reference/decayRules.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"

type Axes = Partial<Record<(typeof AXES)[number], ReadonlyArray<number>>>
const n12 = (f: (t: number) => number) => Array.from({ length: 12 }, (_, t) => Math.round(f(t) * 1e6) / 1e6)
const noise = (t: number) => [0.1, -0.1, 0.05, -0.05, 0.08, -0.08][t % 6]!
const linear = (a: number, b: number) => n12((t) => a + b * t)

/** [rule number, fires, axes]. */
const CASES: ReadonlyArray<readonly [number, Axes, Axes]> = [
  [1, { PO: [8, 8, 8, 7.5, 7, 6.5, 6, 6, 6, 6, 6, 6] }, { PO: [8, 7.5, 8, 7.5, 8, 7.5, 8, 7.5, 8, 7.5, 8, 7.5] }],
  [2, { PO: [7, 7, 7, 5.4, 5.4, 5.4, 5.4, 5.4, 5.4, 5.4, 5.4, 5.4] }, { PO: [7, 7, 7, 5.6, 5.6, 5.6, 5.6, 5.6, 5.6, 5.6, 5.6, 5.6] }],
  [3, { PO: [5, 5, 4, 4, 3.5, 2.9] }, { PO: [5, 5, 4, 4, 3.5, 3.0] }],
  [4, { PO: [7, 7.2, 6.8, 7, 7.1, 6.9, 7, 7, 6.9, 7, 7, 5] }, { PO: [7, 7.2, 6.8, 7, 7.1, 6.9, 7, 7, 6.9, 7, 7, 6.8] }],
  [5, { PO: [8, 8, 7.9, 7.9, 7.8, 7.8, 7.6, 7.2, 6.8, 6.2, 5.6, 5.0] }, { PO: linear(8, -0.2) }],
  [6, { PO: n12((t) => 8 * Math.exp(-0.1 * t)) }, { PO: n12((t) => 6 + noise(t)) }],
  [7, { PO: [8, 8, 8, 7, 6, 5, 5, 5.1, 5, 5.2, 5, 5.1] }, { PO: [8, 8, 8, 7, 6, 5, 4, 3.5, 3, 2.5, 2, 1.5] }],
  [8, { PO: [6, 6.1, 6, 6.1, 6, 6.1, 6, 6.1, 7.5, 5, 7.8, 4.5] }, { PO: [6, 6.1, 6, 6.1, 6, 6.1, 6, 6.1, 6, 6.1, 6, 6.1] }],
  [9, { PO: [8, 7.5, 7, 6.5, 6, 5.5, 5, 5.2, 5.3, 5.3, 5.3, 5.3] }, { PO: [8, 7.5, 7, 6.5, 6, 5.5, 5, 6, 7, 7.5, 7.8, 8] }],
  [10, { PO: [8, 7, 6, 5, 4, 4.5, 5, 5.5, 6, 6.2, 6.3, 6.4] }, { PO: linear(8, -0.4) }],
  [11, { PO: n12((t) => 9 * Math.exp(-0.2 * t)) }, { PO: n12((t) => 9 * Math.exp(-0.05 * t)) }],
  [12, { PO: [8, 7.5, 7, 6.5, 6, 5.5, 5, 4.5, 4, 3.5, 3.4, 3.3] }, { PO: [3.3, 3.3, 3.3, 3.3, 3.3, 3.3] }],
  [13, { PO: n12((t) => 8 - 0.2 * t + noise(t)) }, { PO: n12((t) => 6 + noise(t)) }],
  [14, { PO: linear(8, -0.2), NM: n12((t) => 7 - 0.15 * t + noise(t)) }, { PO: linear(8, -0.2), NM: linear(5, 0.1) }],
  [15, { PO: linear(8, -0.2), NM: linear(7, -0.1), ER: linear(6, -0.1) }, { PO: linear(8, -0.2), NM: linear(7, -0.1), ER: linear(6, 0.1) }],
  [16, { PO: linear(8, -0.2), NM: linear(7, -0.1) }, { PO: linear(8, -0.2), ER: linear(7, -0.1) }],
  [17, { ER: linear(8, -0.2), RS: linear(7, -0.1) }, { ER: linear(8, -0.2), SC: linear(7, -0.1) }],
  [18, { PO: [7, 7.1, 6.9, 7, 7.1, 6.9, 5, 5.1, 4.9, 5, 5.1, 4.9] }, { PO: linear(7, -0.2) }],
  [19, { PO: [5, 6, 5, 6, 5, 6, 5, 6, 5, 6, 5, 6] }, { PO: [5, 5.2, 5, 5.2, 5, 5.2, 5, 5.2, 5, 5.2, 5, 5.2] }],
  [20, { PO: [3, 2, 1.5, 1, 0.8, 0.5] }, { PO: [3, 2, 1.5, 1, 0.8, 1.2] }],
  [21, { PO: [9, 9, 8.8, 8.5, 8, 7.5, 7, 6.8, 6.7, 6.6, 6.5, 6.4] }, { PO: [7.5, 7.5, 7.3, 7, 6.5, 6, 5.5, 5.3, 5.2, 5.1, 5, 4.9] }],
  [22, { PO: linear(8, -0.05) }, { PO: linear(8, -0.15) }],
  [23, { PO: [7, 7, 7, 7, 5, 5, 5.2, 5.3, 5.3, 5.3, 5.3, 5.3] }, { PO: [7, 7, 7, 7, 5, 6.5, 6.8, 7, 7, 7, 7, 7] }],
  [24, { PO: [5, 7, 4, 8, 3, 7, 5, 6, 5, 5.05, 5, 5.05] }, { PO: [5, 7, 4, 8, 3, 7, 5, 6, 4, 7, 3, 8] }],
  [25, { PO: [6, 6.1, 5.9, 6, 6.1, 5.9, 6, 6.1, 5.9, 6, 6.1, 2] }, { PO: [6, 6.1, 5.9, 6, 6.1, 5.9, 6, 6.1, 5.9, 6, 6.1, 5.8] }],
  [26, { PO: [5, 5.5, 6, 6.5, 7, 7.5, 7.5, 7, 6.5, 6, 5.5, 5] }, { PO: [7.5, 7, 6.5, 6, 5.5, 5, 5, 5.5, 6, 6.5, 7, 7.5] }],
  [27, { PO: linear(8, -0.2), NM: linear(5, 0.05), ER: linear(5, 0.05) }, { PO: linear(8, -0.2), NM: linear(7, -0.1), ER: linear(6, -0.1) }],
  [28, { PO: [5, 4, 3], NM: [5, 4, 3.5], ER: [5, 4.5, 4] }, { PO: [5, 4.5, 4], NM: [5, 4.5, 4], ER: [5, 4.5, 4.5] }]
]

const layers = [["wasm", makeWasm(new Arena(instantiateCore()))], ["reference", reference]] as const

/** Evaluates one patient's axes; returns the fired rule names. */
const fired = (k: Kernels["Service"], axes: Axes): ReadonlyArray<string> => {
  const codes = AXES.filter((a) => axes[a] !== undefined)
  const n = Math.max(...codes.map((c) => axes[c]!.length))
  const data = new Float64Array(codes.length * n).fill(NaN)
  codes.forEach((c, i) => axes[c]!.forEach((v, t) => (data[i * n + t] = v)))
  const r = Effect.runSync(k.evaluateRules(data, 1, codes.length, n, Int32Array.from(codes.map((c) => AXES.indexOf(c)))))
  return RULE_NAMES.filter((_, bit) => (r.mask[0]! & (1 << bit)) !== 0)
}

describe("the rule catalogue", () => {
  it("has exactly 28 rules named rule_<nn>_<name>, each with a case", () => {
    expect(RULE_NAMES.length).toBe(28)
    RULE_NAMES.forEach((name, i) => expect(name).toMatch(new RegExp(`^rule_${String(i + 1).padStart(2, "0")}_[a-z_]+$`)))
    expect(CASES.map(([n]) => n)).toEqual(Array.from({ length: 28 }, (_, i) => i + 1))
  })
})

describe.each(layers)("%s layer", (_name, k) => {
  it.each(CASES.map(([n, yes, no]) => [RULE_NAMES[n - 1]!, yes, no] as const))("%s fires on its case and not on its counter-case", (rule, yes, no) => {
    expect(fired(k, yes)).toContain(rule)
    expect(fired(k, no)).not.toContain(rule)
  })
})
