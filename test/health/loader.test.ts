/** The loader: its id → index look-up, and what it computes while it reads. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { patientIndexer } from "../../src/health/loader.ts"
import { scoreReader } from "../../src/kernels/tenths.ts"
import { AXES } from "../../src/plugin/axes.ts"
import { useFixture } from "../support/fixture.ts"

const byMap = (ids: Int32Array) => {
  const map = new Map(Array.from(ids, (id, i) => [id, i]))
  return (id: number) => map.get(id) ?? -1
}

describe("patientIndexer", () => {
  it("finds every id at its index and answers −1 for any other, whether the ids are consecutive or have gaps", () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.integer({ min: -50, max: 400 }), { maxLength: 120 }),
      fc.boolean(),
      fc.array(fc.integer({ min: -60, max: 410 }), { maxLength: 40 }),
      (values, consecutive, probes) => {
        const sorted = [...values].sort((a, b) => a - b)
        const ids = Int32Array.from(consecutive ? sorted.map((_, i) => (sorted[0] ?? 0) + i) : sorted)
        const index = patientIndexer(ids)
        const expected = byMap(ids)
        for (const id of [...ids, ...probes]) expect(index(id)).toBe(expected(id))
        // Ids arrive from SQL as numbers, bigints or text.
        for (const id of ids) expect([index(BigInt(id)), index(String(id))]).toEqual([expected(id), expected(id)])
        expect(index(1.5)).toBe(-1)
      }
    ), { numRuns: 300 })
  })
})

describe("axis coverage", () => {
  const fixture = useFixture()
  it("counted range by range as the scores are read, equals each axis's share of patients with a score in the panel", () => {
    const { data } = fixture
    const n = data.patients.count
    const months = data.months
    const score = scoreReader(data.panel.data)
    AXES.forEach((axis, a) => {
      let covered = 0
      for (let p = 0; p < n; p++) {
        for (let m = 0; m < months; m++) {
          if (!Number.isNaN(score((a * n + p) * months + m))) {
            covered++
            break
          }
        }
      }
      expect(data.axisCoverage[axis], axis).toBe(covered / n)
    })
    expect(Object.keys(data.axisCoverage)).toEqual([...AXES])
  })
})
