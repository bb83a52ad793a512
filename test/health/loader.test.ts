/** The loader: its id → index look-up, and what it computes while it reads. */
import fc from "fast-check"
import { DatabaseSync } from "node:sqlite"
import { join } from "node:path"
import { describe, expect, inject, it } from "vitest"
import { patientIndexer } from "../../src/health/loader.ts"
import { scoreReader } from "../../src/kernels/tenths.ts"
import { AXES } from "../../src/plugin/axes.ts"
import { useFixture } from "../support/fixture.ts"
import { fixtureDataDir } from "../support/server.ts"

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

const fixture = useFixture()

describe("tables read and counted in pieces", () => {
  it("give the rows one statement over the whole table gives, in the same order", () => {
    const db = new DatabaseSync(join(fixtureDataDir(inject("fixtureDir")), "hcc.db"), { readOnly: true })
    const all = (sql: string) => db.prepare(sql).all() as Array<Record<string, number | string>>
    const { data } = fixture
    const index = new Map(Array.from(data.patients.ids, (id, i) => [id, i]))
    for (const [table, loaded] of [["drug_exposures", data.exposures.patient], ["adverse_events", data.adverseEvents.patient], ["encounters", data.encounters.patient]] as const) {
      expect(loaded.length, table).toBe(Number(all(`SELECT COUNT(*) AS n FROM ${table}`)[0]!.n))
    }
    const implants = all("SELECT id, patient_id FROM device_implants ORDER BY id")
    expect(implants.length).toBeGreaterThan(1000) // more than one piece of outcomes
    expect(Array.from(data.devices.implants.patient)).toEqual(implants.map((r) => index.get(Number(r.patient_id))))
    const implantAt = new Map(implants.map((r, i) => [Number(r.id), i]))
    const metrics = data.vocabulary.device_metric
    const outcomes = all("SELECT implant_id, metric, value FROM device_outcomes").sort((a, b) =>
      Number(a.implant_id) - Number(b.implant_id) || (a.metric! < b.metric! ? -1 : a.metric! > b.metric! ? 1 : 0))
    expect(Array.from(data.devices.outcomes.implant)).toEqual(outcomes.map((r) => implantAt.get(Number(r.implant_id))))
    expect(Array.from(data.devices.outcomes.metric)).toEqual(outcomes.map((r) => metrics.indexOf(String(r.metric))))
    expect(Array.from(data.devices.outcomes.value)).toEqual(outcomes.map((r) => Number(r.value)))
    db.close()
  })
})

describe("axis coverage", () => {
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
