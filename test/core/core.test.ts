/** The `./core` entry: plain functions over the WASM core and the twins, no Effect in sight. */
import { describe, expect, it } from "vitest"
import { KernelError, loadCore, newCore, twins } from "../../src/core/index.ts"

const series = (nSeries: number, nAxes: number, nPoints: number) => {
  const data = new Float64Array(nSeries * nAxes * nPoints)
  for (let i = 0; i < data.length; i++) data[i] = Math.sin(i * 0.37) * 3 + ((i * 7919) % 13) / 4
  return data
}

describe("./core", () => {
  it("loads the WASM once and answers as the twins do", () => {
    const core = loadCore()
    expect(loadCore()).toBe(core)
    expect(core.implementation).toBe("wasm")
    expect(twins.implementation).toBe("reference")
    const data = series(4, 3, 24)
    const a = core.correlationMatrix(data, 4, 3, 24)
    const b = twins.correlationMatrix(data, 4, 3, 24)
    expect(a.pearson.length).toBe(12)
    for (let i = 0; i < a.pearson.length; i++) expect(a.pearson[i]).toBeCloseTo(b.pearson[i]!, 9)
    const fit = core.fitTrajectories(series(2, 1, 36), 2, 36, 6)
    expect(fit.pred.length).toBe(12)
  })

  it("Pearson only ({ spearman: false }) gives the same Pearson r and no Spearman, WASM and twin alike", () => {
    const data = series(1, 8, 5000)
    for (const k of [loadCore(), twins]) {
      const both = k.correlationMatrix(data, 1, 8, 5000)
      const pearson = k.correlationMatrix(data, 1, 8, 5000, { spearman: false })
      expect(Array.from(pearson.pearson)).toEqual(Array.from(both.pearson))
      expect(Array.from(pearson.count)).toEqual(Array.from(both.count))
      expect(pearson.spearman.every(Number.isNaN)).toBe(true)
      expect(both.spearman.some(Number.isFinite)).toBe(true)
    }
  })

  it("keeps resident columns across calls and gives a separate instance on request", () => {
    const core = loadCore()
    const values = core.columnF64(Float64Array.from([1, 5, 9, 12]))
    const mask = core.maskRange(values, 4, 10, Uint8Array.from([1, 1, 1, 1]))
    expect(Array.from(mask)).toEqual([0, 1, 1, 0])
    expect(core.maskCount(mask)).toBe(2)
    const other = newCore()
    expect(other).not.toBe(core)
    expect(other.maskCount(Uint8Array.from([1, 0, 1]))).toBe(2)
  })

  it("throws KernelError naming the kernel and the reason for a wrong shape", () => {
    expect(() => loadCore().correlationMatrix(new Float64Array(5), 1, 2, 3)).toThrow(KernelError)
    try {
      twins.laggedXcorr(new Float64Array(4), new Float64Array(4), 1, 4, -1)
    } catch (e) {
      expect(e).toBeInstanceOf(KernelError)
      expect((e as KernelError).kernel).toBe("laggedXcorr")
      expect((e as KernelError).reason).toMatch(/maxLag/)
    }
  })
})
