/**
 * The compact (tenths) storage of the axis panel: every byte decodes to exactly the f32 the wide
 * storage holds, a score off the 0.1 grid is refused, and every panel kernel — WASM and its twin —
 * gives the same bits over a tenths panel as over the wide panel of the same scores. Also the flag
 * scan over u8 columns.
 */
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { heldAs, panelFill } from "../../src/health/panelStorage.ts"
import { MISSING_TENTH, scoreReader, TENTH_SCORES, tenthOf, toTenths } from "../../src/kernels/tenths.ts"
import type { KernelsService } from "../../src/kernels/types.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"
import { panelCase as randomPanel } from "../support/panels.ts"

const wasm = makeWasm(new Arena(instantiateCore()))
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)

/** Same bits: NaN only where NaN, and otherwise equal (−0 and +0 apart). */
const sameBits = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  a.length === b.length && Array.from(a).every((v, i) => Object.is(v, b[i]))

describe("tenths", () => {
  it("each byte 0–100 decodes to the f32 of its one-decimal score as SQL hands it over (c / 10), and every other byte to NaN", () => {
    for (let c = 0; c < 256; c++) {
      const wide = new Float32Array([Number((c / 10).toFixed(1))])[0]!
      if (c <= 100) expect(Object.is(TENTH_SCORES[c], wide)).toBe(true)
      else expect(TENTH_SCORES[c]).toBeNaN()
    }
  })

  it("encodes a score to the byte that decodes to its f32, refuses one off the grid or outside 0–10", () => {
    expect(tenthOf(7.3)).toBe(73)
    expect(tenthOf(Math.fround(7.3))).toBe(73)
    expect(tenthOf(0)).toBe(0)
    expect(tenthOf(10)).toBe(100)
    expect(tenthOf(Number.NaN)).toBe(MISSING_TENTH)
    expect(tenthOf(7.35)).toBe(-1)
    expect(tenthOf(10.1)).toBe(-1)
    expect(tenthOf(-0.1)).toBe(-1)
    expect(toTenths(Float32Array.of(1.5, Number.NaN, 2))).toEqual(Uint8Array.of(15, MISSING_TENTH, 20))
    expect(toTenths(Float32Array.of(1.5, 2.25))).toBeUndefined()
    const read = scoreReader(Uint8Array.of(15, MISSING_TENTH))
    expect(read(0)).toBe(Math.fround(1.5))
    expect(read(1)).toBeNaN()
  })
})

/** Random one-decimal panels with gaps, a mask (dense or sparse), a month range, month groups, windows and a patient list. */
const panelCase = randomPanel(60, (seed) => (seed % 2 === 0 ? 0.7 : 0.1)).map((c) => {
  const { nMonths, nPatients, rand } = c
  const winFrom = Int32Array.from({ length: nPatients }, () => Math.floor(rand() * nMonths))
  const winTo = Int32Array.from(winFrom, (f) => f + Math.floor(rand() * (nMonths - f + 1)))
  const patients = Int32Array.from({ length: 1 + Math.floor(rand() * nPatients) }, () => Math.floor(rand() * nPatients))
  return { ...c, winFrom, winTo, patients }
})

type Case = typeof panelCase extends fc.Arbitrary<infer C> ? C : never

/** Every panel kernel's outputs, flattened, over the panel `data` (wide or tenths) by `k`. */
const everyOutput = (k: KernelsService, c: Case, data: Float32Array | Uint8Array): Array<ArrayLike<number>> => {
  const panel = run(k.panel(data, c.nPatients, c.nAxes, c.nMonths))
  const axes = Int32Array.from({ length: c.nAxes }, (_, i) => c.nAxes - 1 - i)
  const trend = run(k.panelTrend(panel, axes, c.from, c.to, c.monthGroup, c.nGroups, c.mask))
  const sums = run(k.panelSums(panel, axes, c.from, c.to, c.monthGroup, c.nGroups, c.mask))
  const windows = run(k.panelWindows(panel, axes, c.winFrom, c.winTo, c.mask))
  const listed = run(k.panelWindowsOf(panel, axes, c.patients, c.patients.map((p) => c.winFrom[p]!), c.patients.map((p) => c.winTo[p]!)))
  const masks = [[0, 10], [2.5, 6.1], [5, 5]].map(([lo, hi]) => run(k.panelMeanMask(panel, c.nAxes - 1, c.from, c.to, lo!, hi!, c.mask)))
  return [trend.count, trend.sum, trend.slope, sums.count, sums.sum, windows.n, windows.mean, windows.slope, listed.n, listed.mean, listed.slope, ...masks]
}

describe("a tenths panel answers as the wide panel of the same scores", () => {
  it("every panel kernel, bit for bit, in WASM and in its twin", () => {
    fc.assert(fc.property(panelCase, (c) => {
      const tenths = toTenths(c.data)!
      const wide = everyOutput(wasm, c, c.data)
      return [everyOutput(wasm, c, tenths), everyOutput(reference, c, tenths), everyOutput(reference, c, c.data)]
        .every((outputs) => outputs.every((o, i) => sameBits(o, wide[i]!)))
    }), { numRuns: 300 })
  })

  it("every byte decodes in the core to the table's score: month by month through panelWindows and panelMeanMask, and summed by the dense and the sparse panelSums", () => {
    const codes = Uint8Array.from({ length: 256 }, (_, c) => c)
    const n = codes.length
    for (const k of [wasm, reference]) {
      const panel = run(k.panel(codes, 1, 1, n))
      const w = run(k.panelWindows(panel, Int32Array.of(0), Int32Array.of(0), Int32Array.of(n), Uint8Array.of(1)))
      expect(w.n[0]).toBe(101)
      const perMonth = Array.from({ length: n }, (_, m) => run(k.panelWindowsOf(panel, Int32Array.of(0), Int32Array.of(0), Int32Array.of(m), Int32Array.of(m + 1))).mean[0]!)
      expect(sameBits(perMonth, TENTH_SCORES)).toBe(true)
    }
    // One patient per byte (a column of 256 patients × 1 month), summed by the dense scan (all
    // selected) and by the sparse one (one selected at a time), against the wide panel's sums.
    const wide = Float32Array.from(TENTH_SCORES)
    const all = new Uint8Array(n).fill(1)
    const [pw, pt] = [run(wasm.panel(wide, n, 1, 1)), run(wasm.panel(codes, n, 1, 1))]
    const sums = (p: typeof pw, mask: Uint8Array) => run(wasm.panelSums(p, Int32Array.of(0), 0, 1, Int32Array.of(0), 1, mask))
    expect(sameBits(sums(pt, all).sum, sums(pw, all).sum)).toBe(true)
    expect(sums(pt, all).count[0]).toBe(101)
    for (let c = 0; c < n; c += 17) {
      const one = new Uint8Array(n)
      one[c] = 1
      expect(sameBits(sums(pt, one).sum, sums(pw, one).sum)).toBe(true)
    }
  })

  it("the kernels read the tenths (not a wide copy): a changed byte changes the answer", () => {
    // Two patients, the first selected (not more than half: counted, not taken from everyone's).
    const data = Float32Array.of(1, 2, 3, 4, 5, 5, 5, 5)
    const tenths = toTenths(data)!
    const panel = run(wasm.panel(tenths, 2, 1, 4))
    expect(panel.data).toBeInstanceOf(Uint8Array)
    const sum = () => run(wasm.panelSums(panel, Int32Array.of(0), 0, 4, Int32Array.of(0, 0, 0, 0), 1, Uint8Array.of(1, 0))).sum[0]
    expect(sum()).toBe(10)
    ;(panel.data as Uint8Array)[3] = MISSING_TENTH
    expect(sum()).toBe(6)
  })

  it("panelSums over more than half of the patients reads only the others' rows once everyone's histograms are made", () => {
    // Three patients × two months; everyone's histograms are made by the first call over all three.
    const tenths = toTenths(Float32Array.of(1, 2, 3, 4, 5, 6))!
    const panel = run(wasm.panel(tenths, 3, 1, 2))
    const sums = (mask: Uint8Array) => run(wasm.panelSums(panel, Int32Array.of(0), 0, 2, Int32Array.of(0, 1), 2, mask))
    const firstTwo = Uint8Array.of(1, 1, 0)
    expect(Array.from(sums(Uint8Array.of(1, 1, 1)).sum)).toEqual([9, 12])
    const before = sums(firstTwo)
    expect(Array.from(before.sum)).toEqual([4, 6])
    expect(sameBits(before.sum, run(reference.panelSums(run(reference.panel(tenths, 3, 1, 2)), Int32Array.of(0), 0, 2, Int32Array.of(0, 1), 2, firstTwo)).sum)).toBe(true)
    // A selected patient's score changed behind the kernels' back (a panel never changes once made):
    // two of three are everyone less the third, so the change is not seen; one of three is counted.
    ;(panel.data as Uint8Array)[0] = tenthOf(9)
    expect(Array.from(sums(firstTwo).sum)).toEqual([4, 6])
    expect(Array.from(sums(Uint8Array.of(1, 0, 0)).sum)).toEqual([9, 2])
  })

  it("everyone's histograms of a panel of more patients than one call counts are every patient's: panelSums over most of them is its twin's", () => {
    const [nPatients, nAxes, nMonths] = [150_001, 2, 3]
    let seed = 7
    const rand = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32
    const tenths = Uint8Array.from({ length: nPatients * nAxes * nMonths }, () => (rand() < 0.2 ? MISSING_TENTH : Math.floor(rand() * 101)))
    const mask = Uint8Array.from({ length: nPatients }, () => (rand() < 0.9 ? 1 : 0))
    const [axes, groups] = [Int32Array.of(1, 0), Int32Array.of(0, 1, 1)]
    const [ours, twin] = [wasm, reference].map((k) => run(k.panelSums(run(k.panel(tenths, nPatients, nAxes, nMonths)), axes, 0, nMonths, groups, 2, mask)))
    expect(Array.from(ours!.count)).toEqual(Array.from(twin!.count))
    expect(sameBits(ours!.sum, twin!.sum)).toBe(true)
  })
})

describe.each([["wasm", wasm], ["reference", reference]] as const)("%s maskFlag", (_name, k) => {
  it("keeps the selected rows whose flag is set, across the SIMD width and its tail", () => {
    const n = 37
    const flags = run(k.columnU8(Uint8Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 1 : 0))))
    const maskIn = Uint8Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 1 : 0))
    expect(Array.from(run(k.maskFlag(flags, maskIn)))).toEqual(Array.from({ length: n }, (_, i) => (i % 6 === 0 ? 1 : 0)))
  })
})

describe("the loader's panel", () => {
  it("is held in tenths while every score is on the grid, and turns wide at the first that is not, losing nothing", () => {
    const fill = panelFill(6, "compact", new Arena(instantiateCore()))
    fill.clear(0, 6)
    fill.set(0, 7.3)
    fill.set(2, 0)
    const tenths = fill.result()
    expect(tenths.data).toEqual(Uint8Array.of(73, MISSING_TENTH, 0, MISSING_TENTH, MISSING_TENTH, MISSING_TENTH))
    expect(tenths.ptr).toBeGreaterThan(0)
    fill.set(3, 7.35)
    fill.set(4, 10)
    const wide = fill.result()
    expect(wide.data).toBeInstanceOf(Float32Array)
    expect(sameBits(wide.data, Float32Array.of(7.3, Number.NaN, 0, 7.35, 10, Number.NaN))).toBe(true)
  })

  it("read from a snapshot kept under the other setting, is held as this start asks (tenths only when every score allows)", () => {
    const wide = Float32Array.of(7.3, Number.NaN, 0)
    expect(heldAs(wide, "compact")).toEqual(Uint8Array.of(73, MISSING_TENTH, 0))
    expect(heldAs(Float32Array.of(7.35), "compact")).toBeInstanceOf(Float32Array)
    expect(sameBits(heldAs(Uint8Array.of(73, MISSING_TENTH, 0), "wide"), wide)).toBe(true)
    expect(heldAs(wide, "wide")).toBe(wide)
  })

  it("is wide throughout when asked", () => {
    const fill = panelFill(2, "wide", undefined)
    fill.clear(0, 2)
    fill.set(1, 2.5)
    expect(sameBits(fill.result().data, Float32Array.of(Number.NaN, 2.5))).toBe(true)
  })
})
