/**
 * population's prepare, and its month sums (plugins/population/handler.ts `cohortMonthSums`) are panelTrend's bit
 * for bit on the run's 30,000-patient dataset, in process, in both storages: for a cohort of nearly
 * everyone and of all but an eighth (over the wide panel everyone's totals less the few others; over
 * the tenths panel panelSums' own count of everyone less the others), a dense one (every row read)
 * and a sparse one (rows skipped).
 */
import * as Effect from "effect/Effect"
import { describe, expect, inject, it } from "vitest"
import { Kernels } from "../../src/kernels/Kernels.ts"
import * as KernelsLayer from "../../src/kernels/Kernels.ts"
import { cohortMonthSums, preparePopulation } from "../../plugins/population/handler.ts"
import { readFixture } from "../support/fixture.ts"

describe("population's prepare", () => {
  it("on a thread that got the shared slopes from another, still has the core make everyone's histograms of the tenths panel", async () => {
    const dir = inject("fixtureDir")
    const selected = await Effect.runPromise(
      Effect.gen(function*() {
        const kernels = yield* Kernels
        const data = yield* readFixture(dir)
        yield* preparePopulation(data)
        // A second thread: the shared value is there already; record the panelSums calls it makes.
        const calls: Array<number> = []
        const spy = { ...kernels, panelSums: (...args: Parameters<typeof kernels.panelSums>) => {
          calls.push(args[6].reduce((a, b) => a + b, 0) / data.patients.count)
          return kernels.panelSums(...args)
        } }
        yield* Effect.provideService(preparePopulation(data), Kernels, spy)
        return calls
      }).pipe(Effect.provide(KernelsLayer.layerWasm))
    )
    // The core makes them on the first panelSums over more than half of the patients (docs/core.md).
    expect(selected.some((share) => share > 0.5)).toBe(true)
  })
})

describe("population's month sums", () => {
  it.each(["compact", "wide"] as const)("equal panelTrend's over the %s panel for a cohort of nearly everyone, of all but an eighth, a dense one and a sparse one", async (storage) => {
    const dir = inject("fixtureDir")
    const checked = await Effect.runPromise(
      Effect.gen(function*() {
        const kernels = yield* Kernels
        const data = yield* readFixture(dir, storage)
        expect(data.panel.data).toBeInstanceOf(storage === "wide" ? Float32Array : Uint8Array)
        yield* preparePopulation(data)
        const n = data.patients.count
        const months = data.months
        const identity = Int32Array.from({ length: months }, (_, m) => m)
        const axes = Int32Array.of(0, 3, 7)
        const cohorts = {
          nearlyEveryone: Uint8Array.from({ length: n }, (_, p) => (p % 37 === 0 ? 0 : 1)),
          // Everyone else an eighth: between a tenth and a seventh, taken as the complement too.
          mostOfThem: Uint8Array.from({ length: n }, (_, p) => (p % 8 === 0 ? 0 : 1)),
          dense: Uint8Array.from({ length: n }, (_, p) => (p % 3 === 0 ? 1 : 0)),
          sparse: Uint8Array.from({ length: n }, (_, p) => (p % 50 === 0 ? 1 : 0))
        }
        for (const [name, mask] of Object.entries(cohorts)) {
          const size = mask.reduce((a, b) => a + b, 0)
          const ours = yield* cohortMonthSums(data, mask, size, axes)
          const trend = yield* kernels.panelTrend(data.panel, axes, 0, months, identity, months, mask)
          expect({ name, count: Array.from(ours.count), sum: Array.from(ours.sum) }).toEqual({ name, count: Array.from(trend.count), sum: Array.from(trend.sum) })
          expect(ours.sum.every((v, i) => Object.is(v, trend.sum[i]))).toBe(true)
        }
        return Object.keys(cohorts).length
      }).pipe(Effect.provide(KernelsLayer.layerWasm))
    )
    expect(checked).toBe(4)
  })
})
