/**
 * The axis-panel kernels: WASM against the TypeScript twin on random panels with gaps (fast-check),
 * and both against values worked out by hand.
 */
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { makeWasm, makeWasmCore, reference, referenceCore } from "../../src/kernels/Kernels.ts"
import { instantiateCore } from "../../src/kernels/WasmModule.ts"
import type { PanelWindowsResult } from "../../src/kernels/types.ts"
import { panelCase as randomPanel } from "../support/panels.ts"

const wasm = makeWasm(new Arena(instantiateCore()))
const run = <A>(e: Effect.Effect<A, unknown>) => Effect.runSync(e)
const close = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b))

/** A panel of nAxes × nPatients × nMonths one-decimal scores with ~15 % gaps, a mask and a month range. */
const panelCase = randomPanel(40)

describe("panel kernels agree with their twins", () => {
  it("panelTrend", () => {
    fc.assert(fc.property(panelCase, (c) => {
      const axes = Int32Array.from({ length: c.nAxes }, (_, i) => c.nAxes - 1 - i)
      const [a, b] = [wasm, reference].map((k) => {
        const panel = run(k.panel(c.data, c.nPatients, c.nAxes, c.nMonths))
        return run(k.panelTrend(panel, axes, c.from, c.to, c.monthGroup, c.nGroups, c.mask))
      })
      return a!.count.every((v, i) => close(v, b!.count[i]!)) &&
        a!.sum.every((v, i) => close(v, b!.sum[i]!)) &&
        a!.slope.every((v, i) => close(v, b!.slope[i]!))
    }), { numRuns: 200 })
  })

  it("panelMeanMask", () => {
    fc.assert(fc.property(panelCase, fc.double({ min: 0, max: 10, noNaN: true }), fc.double({ min: 0, max: 10, noNaN: true }), (c, x, y) => {
      const [lo, hi] = x <= y ? [x, y] : [y, x]
      const [a, b] = [wasm, reference].map((k) => {
        const panel = run(k.panel(c.data, c.nPatients, c.nAxes, c.nMonths))
        return run(k.panelMeanMask(panel, c.nAxes - 1, c.from, c.to, lo, hi, c.mask))
      })
      return a!.every((v, i) => v === b![i])
    }), { numRuns: 200 })
  })
})

describe("panelSums", () => {
  it("is panelTrend's count and sum, bit for bit (WASM and twin), for dense and sparse selections; panelWindows' whole-range slopes, summed in patient order, are its slope sums", () => {
    // The WASM reads every row for a selection of at least a seventh of the patients and skips rows
    // below that: `sparse` keeps at most one patient in 20 of the case's mask.
    fc.assert(fc.property(panelCase, fc.boolean(), (c0, sparse) => {
      const c = sparse ? { ...c0, mask: c0.mask.map((v, p) => (p % 20 === 0 ? v : 0)) } : c0
      const axes = Int32Array.from({ length: c.nAxes }, (_, i) => c.nAxes - 1 - i)
      return [wasm, reference].every((k) => {
        const panel = run(k.panel(c.data, c.nPatients, c.nAxes, c.nMonths))
        const trend = run(k.panelTrend(panel, axes, c.from, c.to, c.monthGroup, c.nGroups, c.mask))
        const sums = run(k.panelSums(panel, axes, c.from, c.to, c.monthGroup, c.nGroups, c.mask))
        const windows = run(k.panelWindows(panel, axes, new Int32Array(c.nPatients).fill(c.from), new Int32Array(c.nPatients).fill(c.to), c.mask))
        const slopeSums = Array.from(axes, (_, a) => {
          let [n, s, q] = [0, 0, 0]
          for (let p = 0; p < c.nPatients; p++) {
            const slope = windows.slope[a * c.nPatients + p]!
            if (c.mask[p] === 0 || Number.isNaN(slope)) continue
            n += 1
            s += slope
            q += slope * slope
          }
          return [n, s, q]
        }).flat()
        return sums.count.every((v, i) => Object.is(v, trend.count[i])) &&
          sums.sum.every((v, i) => Object.is(v, trend.sum[i])) &&
          slopeSums.every((v, i) => Object.is(v, trend.slope[i]))
      })
    }), { numRuns: 300 })
  })
})

describe("the scans that skip rows", () => {
  it("give the twin's bits for sparse selections of hundreds of patients (runs of unselected patients, rows touched ahead)", () => {
    // Under a seventh selected, panelSums skips rows (eight unselected patients at a time where the
    // mask has a zero word) and touches the rows of the selected patients 16 to 31 ahead; panelTrend
    // always skips. Both against the twin, which reads patient by patient.
    const sparseCase = fc.record({
      nPatients: fc.integer({ min: 1, max: 700 }),
      nAxes: fc.integer({ min: 1, max: 3 }),
      nMonths: fc.integer({ min: 1, max: 40 }),
      share: fc.constantFrom(0.004, 0.02, 0.06, 0.13),
      seed: fc.integer({ min: 1, max: 2 ** 30 })
    })
    fc.assert(fc.property(sparseCase, ({ nAxes, nMonths, nPatients, seed, share }) => {
      let s = seed
      const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
      const data = Float32Array.from({ length: nAxes * nPatients * nMonths }, () => (rand() < 0.15 ? Number.NaN : Math.round(rand() * 100) / 10))
      const mask = Uint8Array.from({ length: nPatients }, () => (rand() < share ? 1 : 0))
      const months = Int32Array.from({ length: nMonths }, (_, m) => m % 3)
      const axes = Int32Array.from({ length: nAxes }, (_, i) => i)
      const [a, b] = [wasm, reference].map((k) => {
        const panel = run(k.panel(data, nPatients, nAxes, nMonths))
        return { sums: run(k.panelSums(panel, axes, 0, nMonths, months, 3, mask)), trend: run(k.panelTrend(panel, axes, 0, nMonths, months, 3, mask)) }
      })
      return (["count", "sum"] as const).every((out) => a!.sums[out].every((v, i) => Object.is(v, b!.sums[out][i]))) &&
        (["count", "sum", "slope"] as const).every((out) => a!.trend[out].every((v, i) => close(v, b!.trend[out][i]!)))
    }), { numRuns: 300 })
  })
})

describe("panelWindows agrees with its twin", () => {
  it("on random per-patient windows, bit for bit (the WASM's two-lane sums are exact)", () => {
    fc.assert(fc.property(panelCase, fc.integer({ min: 1, max: 2 ** 30 }), (c, seed) => {
      let s = seed
      const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
      const from = Int32Array.from({ length: c.nPatients }, () => Math.floor(rand() * (c.nMonths + 1)))
      const to = Int32Array.from(from, (f) => f + Math.floor(rand() * (c.nMonths - f + 1)))
      const axes = Int32Array.from({ length: c.nAxes }, (_, i) => i)
      const [a, b] = [wasm, reference].map((k) => run(k.panelWindows(run(k.panel(c.data, c.nPatients, c.nAxes, c.nMonths)), axes, from, to, c.mask)))
      return (["n", "mean", "slope"] as const).every((out) => a![out].every((v, i) => Object.is(v, b![out][i])))
    }), { numRuns: 200 })
  })
})

describe("panelWindows and panelWindowsOf in pieces", () => {
  // One batch, and pieces of 7 patients (WINDOWS_PER_BATCH), over random panels: the same bits.
  const arena = new Arena(instantiateCore())
  const [whole, pieces] = [makeWasmCore(arena), makeWasmCore(arena, 7)]
  const same = (a: PanelWindowsResult, b: PanelWindowsResult) => (["n", "mean", "slope"] as const).every((f) => a[f].length === b[f].length && a[f].every((v, i) => Object.is(v, b[f][i])))
  const seeded = (seed: number) => {
    let s = seed
    return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  }

  it("panelWindows: more patients than a batch holds, the case's selection and everyone (whole pieces of consecutive patients)", () => {
    fc.assert(fc.property(panelCase, fc.integer({ min: 1, max: 2 ** 30 }), (c, seed) => {
      const rand = seeded(seed)
      const from = Int32Array.from({ length: c.nPatients }, () => Math.floor(rand() * c.nMonths))
      const to = Int32Array.from(from, (f) => f + Math.floor(rand() * (c.nMonths - f + 1)))
      const axes = Int32Array.from({ length: c.nAxes }, (_, i) => c.nAxes - 1 - i)
      return [c.mask, new Uint8Array(c.nPatients).fill(1)].every((mask) => {
        const [a, b] = [whole, pieces].map((k) => k.panelWindows(k.panel(c.data, c.nPatients, c.nAxes, c.nMonths), axes, from, to, mask))
        return same(a!, b!)
      })
    }), { numRuns: 200 })
  })

  /** Random windows over a case's patients, every axis, and all three outputs of panelWindows over them in one batch. */
  const windowsCase = (c: typeof panelCase extends fc.Arbitrary<infer C> ? C : never, seed: number) => {
    const rand = seeded(seed)
    const from = Int32Array.from({ length: c.nPatients }, () => Math.floor(rand() * c.nMonths))
    const to = Int32Array.from(from, (f) => f + Math.floor(rand() * (c.nMonths - f + 1)))
    const axes = Int32Array.from({ length: c.nAxes }, (_, i) => i)
    return { from, to, axes, all: whole.panelWindows(whole.panel(c.data, c.nPatients, c.nAxes, c.nMonths), axes, from, to, c.mask) }
  }

  it("panelWindows with `outputs`: those outputs as all three give them, the others empty — in one batch, in pieces and in the twin", () => {
    const subsets = [["n"], ["mean"], ["slope"], ["mean", "slope"], []] as const
    fc.assert(fc.property(panelCase, fc.integer({ min: 1, max: 2 ** 30 }), (c, seed) => {
      const { from, to, axes, all } = windowsCase(c, seed)
      return [whole, pieces, referenceCore].every((k) =>
        subsets.every((outputs) => {
          const some = k.panelWindows(k.panel(c.data, c.nPatients, c.nAxes, c.nMonths), axes, from, to, c.mask, { outputs })
          return (["n", "mean", "slope"] as const).every((f) =>
            (outputs as ReadonlyArray<string>).includes(f) ? some[f].length === all[f].length && some[f].every((v, i) => Object.is(v, all[f][i])) : some[f].length === 0
          )
        })
      )
    }), { numRuns: 100 })
  })

  it("panelWindows with `shared`: the same outputs over SharedArrayBuffers — in one batch, in pieces and in the twin", () => {
    fc.assert(fc.property(panelCase, fc.integer({ min: 1, max: 2 ** 30 }), (c, seed) => {
      const { from, to, axes, all } = windowsCase(c, seed)
      return [whole, pieces, referenceCore].every((k) => {
        const shared = k.panelWindows(k.panel(c.data, c.nPatients, c.nAxes, c.nMonths), axes, from, to, c.mask, { outputs: ["mean", "slope"], shared: true })
        return shared.n.length === 0 && (["mean", "slope"] as const).every((f) =>
          shared[f].buffer instanceof SharedArrayBuffer && shared[f].length === all[f].length && shared[f].every((v, i) => Object.is(v, all[f][i]))
        )
      })
    }), { numRuns: 100 })
  })

  it("panelWindowsOf: a list longer than a batch holds (any order, repeats allowed)", () => {
    fc.assert(fc.property(panelCase, fc.integer({ min: 1, max: 2 ** 30 }), (c, seed) => {
      const rand = seeded(seed)
      const patients = Int32Array.from({ length: Math.floor(rand() * (3 * c.nPatients + 3)) }, () => Math.floor(rand() * c.nPatients))
      const from = Int32Array.from(patients, () => Math.floor(rand() * (c.nMonths + 1)))
      const to = Int32Array.from(from, (f) => f + Math.floor(rand() * (c.nMonths - f + 1)))
      const axes = Int32Array.from({ length: c.nAxes }, (_, i) => c.nAxes - 1 - i)
      const [a, b] = [whole, pieces].map((k) => k.panelWindowsOf(k.panel(c.data, c.nPatients, c.nAxes, c.nMonths), axes, patients, from, to))
      return a!.n.length === axes.length * patients.length && same(a!, b!)
    }), { numRuns: 200 })
  })
})

describe("panelWindowsOf", () => {
  it("gives the listed patients (any order, repeats allowed) exactly what panelWindows gives them, in WASM and its twin", () => {
    fc.assert(fc.property(panelCase, fc.integer({ min: 1, max: 2 ** 30 }), (c, seed) => {
      let s = seed
      const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
      const from = Int32Array.from({ length: c.nPatients }, () => Math.floor(rand() * (c.nMonths + 1)))
      const to = Int32Array.from(from, (f) => f + Math.floor(rand() * (c.nMonths - f + 1)))
      const patients = Int32Array.from({ length: Math.floor(rand() * (c.nPatients + 3)) }, () => Math.floor(rand() * c.nPatients))
      const all = new Uint8Array(c.nPatients).fill(1)
      const axes = Int32Array.from({ length: c.nAxes }, (_, i) => c.nAxes - 1 - i)
      return [wasm, reference].every((k) => {
        const panel = run(k.panel(c.data, c.nPatients, c.nAxes, c.nMonths))
        const whole = run(k.panelWindows(panel, axes, from, to, all))
        const listed = run(k.panelWindowsOf(panel, axes, patients, patients.map((p) => from[p]!), patients.map((p) => to[p]!)))
        return Array.from(axes.keys()).every((a) =>
          Array.from(patients).every((p, j) =>
            (["n", "mean", "slope"] as const).every((out) => Object.is(listed[out][a * patients.length + j], whole[out][a * c.nPatients + p]))))
      })
    }), { numRuns: 200 })
  })

  it("refuses a patient outside the panel and a window outside its months", () => {
    for (const k of [wasm, reference]) {
      const panel = run(k.panel(new Float32Array(2 * 1 * 3), 2, 1, 3))
      expect(Effect.runSyncExit(k.panelWindowsOf(panel, Int32Array.of(0), Int32Array.of(2), Int32Array.of(0), Int32Array.of(3)))._tag).toBe("Failure")
      expect(Effect.runSyncExit(k.panelWindowsOf(panel, Int32Array.of(0), Int32Array.of(1), Int32Array.of(0), Int32Array.of(4)))._tag).toBe("Failure")
      expect(Effect.runSyncExit(k.panelWindowsOf(panel, Int32Array.of(0), Int32Array.of(1), Int32Array.of(0), Int32Array.of(3)))._tag).toBe("Success")
    }
  })
})

describe.each([["wasm", wasm], ["reference", reference]] as const)("%s panel kernels by hand", (_name, k) => {
  // 1 axis, 3 patients, 4 months. Patient 0: 1, 2, 3, 4 (slope 1); patient 1: 5, NaN, 5, 5 (slope 0);
  // patient 2: 9, 8 (two points: no slope).
  const data = Float32Array.from([1, 2, 3, 4, 5, Number.NaN, 5, 5, 9, 8, Number.NaN, Number.NaN])
  const panel = run(k.panel(data, 3, 1, 4))
  const all = Uint8Array.from([1, 1, 1])

  it("sums per group and summarises slopes", () => {
    const r = run(k.panelTrend(panel, Int32Array.from([0]), 0, 4, Int32Array.from([0, 0, 1, 1]), 2, all))
    expect(Array.from(r.count)).toEqual([5, 4])
    expect(Array.from(r.sum)).toEqual([1 + 2 + 5 + 9 + 8, 3 + 4 + 5 + 5])
    expect(Array.from(r.slope)).toEqual([2, 1, 1])
  })

  it("respects the mask, the month range and groups of −1", () => {
    const r = run(k.panelTrend(panel, Int32Array.from([0]), 1, 4, Int32Array.from([0, -1, 0, 0]), 1, Uint8Array.from([1, 0, 1])))
    expect(Array.from(r.count)).toEqual([2 + 0])
    expect(Array.from(r.sum)).toEqual([3 + 4])
    expect(Array.from(r.slope)).toEqual([1, 1, 1])
  })

  it("selects on the mean over the range; a patient with no score there is never selected", () => {
    expect(Array.from(run(k.panelMeanMask(panel, 0, 0, 4, 2, 5, all)))).toEqual([1, 1, 0])
    expect(Array.from(run(k.panelMeanMask(panel, 0, 2, 4, 0, 10, all)))).toEqual([1, 1, 0])
    expect(Array.from(run(k.panelMeanMask(panel, 0, 0, 2, 8.5, 8.5, all)))).toEqual([0, 0, 1])
  })

  it("gives each patient's count, mean and slope over its own window", () => {
    const r = run(k.panelWindows(panel, Int32Array.from([0]), Int32Array.from([0, 0, 0]), Int32Array.from([4, 3, 1]), Uint8Array.from([1, 1, 1])))
    expect(Array.from(r.n)).toEqual([4, 2, 1])
    expect(Array.from(r.mean)).toEqual([2.5, 5, 9])
    expect(r.slope[0]).toBeCloseTo(1, 12)
    expect(r.slope[1]).toBeNaN()
    expect(r.slope[2]).toBeNaN()
    const masked = run(k.panelWindows(panel, Int32Array.from([0]), Int32Array.from([0, 0, 0]), Int32Array.from([4, 4, 4]), Uint8Array.from([0, 1, 0])))
    expect(Array.from(masked.n)).toEqual([0, 3, 0])
    expect(masked.mean[0]).toBeNaN()
    expect(Effect.runSyncExit(k.panelWindows(panel, Int32Array.from([0]), Int32Array.from([2, 0, 0]), Int32Array.from([1, 4, 4]), all))._tag).toBe("Failure")
  })

  it("rejects a month range or axis outside the panel", () => {
    expect(Effect.runSyncExit(k.panelTrend(panel, Int32Array.from([1]), 0, 4, new Int32Array(4), 1, all))._tag).toBe("Failure")
    expect(Effect.runSyncExit(k.panelMeanMask(panel, 0, 0, 5, 0, 10, all))._tag).toBe("Failure")
  })
})
