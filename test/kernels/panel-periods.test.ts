/**
 * panelPeriods: WASM against its TypeScript twin bit for bit over both storages (wide and tenths),
 * and both against the moments worked out directly from each patient's scores; and the period
 * counts and sums it implies are panelSums'.
 */
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm, reference } from "../../src/kernels/Kernels.ts"
import { toTenths } from "../../src/kernels/tenths.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"
import { panelCase } from "../support/panels.ts"

const wasm = makeWasm(new Arena(instantiateCore()))
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)

describe("panelPeriods", () => {
  it("gives the twin's bits over wide and tenths storage, and each group's patients and Σ S², Σ S·n, Σ n² of the per-patient sums", () => {
    fc.assert(fc.property(panelCase(60), fc.boolean(), (c0, sparse) => {
      const c = sparse ? { ...c0, mask: c0.mask.map((v, p) => (p % 9 === 0 ? v : 0)) } : c0
      const axes = Int32Array.from({ length: c.nAxes }, (_, i) => c.nAxes - 1 - i)
      // Directly: each patient's sum and count per group, then the moments.
      const expected = { patients: [] as Array<number>, ss: [] as Array<number>, sn: [] as Array<number>, nn: [] as Array<number> }
      for (const axis of axes) {
        const groups = Array.from({ length: c.nGroups }, () => ({ patients: 0, ss: 0, sn: 0, nn: 0 }))
        for (let p = 0; p < c.nPatients; p++) {
          if (c.mask[p] === 0) continue
          for (let g = 0; g < c.nGroups; g++) {
            const xs: Array<number> = []
            for (let m = c.from; m < c.to; m++) {
              const x = c.data[(axis * c.nPatients + p) * c.nMonths + m]!
              if (c.monthGroup[m] === g && !Number.isNaN(x)) xs.push(x)
            }
            if (xs.length === 0) continue
            const s = xs.reduce((a, b) => a + b, 0)
            groups[g]!.patients += 1
            groups[g]!.ss += s * s
            groups[g]!.sn += s * xs.length
            groups[g]!.nn += xs.length ** 2
          }
        }
        for (const g of groups) {
          expected.patients.push(g.patients)
          expected.ss.push(g.ss)
          expected.sn.push(g.sn)
          expected.nn.push(g.nn)
        }
      }
      const tenths = toTenths(c.data)!
      const results = [wasm, reference].flatMap((k) =>
        [c.data, tenths].map((data) => {
          const panel = run(k.panel(data, c.nPatients, c.nAxes, c.nMonths))
          return run(k.panelPeriods(panel, axes, c.from, c.to, c.monthGroup, c.nGroups, c.mask))
        })
      )
      const first = results[0]!
      for (const r of results.slice(1)) {
        expect(Array.from(r.patients)).toEqual(Array.from(first.patients))
        expect(Array.from(r.sumSquares)).toEqual(Array.from(first.sumSquares))
        expect(Array.from(r.sumCounts)).toEqual(Array.from(first.sumCounts))
        expect(Array.from(r.countSquares)).toEqual(Array.from(first.countSquares))
      }
      expect(Array.from(first.patients)).toEqual(expected.patients)
      expect(Array.from(first.countSquares)).toEqual(expected.nn)
      first.sumSquares.forEach((v, i) => expect(v).toBeCloseTo(expected.ss[i]!, 6))
      first.sumCounts.forEach((v, i) => expect(v).toBeCloseTo(expected.sn[i]!, 6))
    }), { numRuns: 150 })
  })

  it("refuses a mask or month groups of the wrong length", () => {
    const panel = run(wasm.panel(new Float32Array(2 * 3), 2, 1, 3))
    expect(() => run(wasm.panelPeriods(panel, Int32Array.of(0), 0, 3, new Int32Array(3), 1, new Uint8Array(3)))).toThrow(/mask has 3 values, dimensions say 2/)
    expect(() => run(wasm.panelPeriods(panel, Int32Array.of(0), 0, 3, new Int32Array(2), 1, new Uint8Array(2)))).toThrow(/monthGroup has 2 values/)
  })
})
