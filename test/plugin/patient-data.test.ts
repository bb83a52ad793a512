/**
 * The stable contract's data interface (`PatientData`, src/health/PatientData.ts) through HTTP: a
 * third-party plugin written against it alone (test/fixtures/plugins/patient-profile.ts) answers
 * with figures recomputed here from the dataset's columns; every count it is handed is held to the
 * minimum cell size, as it declares nothing about small cells.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as SqliteClient from "../../src/db/SqliteClient.ts"
import type { Dataset } from "../../src/health/HealthData.ts"
import { loadDataset } from "../../src/health/loader.ts"
import { Kernels } from "../../src/kernels/Kernels.ts"
import * as KernelsLayer from "../../src/kernels/Kernels.ts"
import { scoreReader } from "../../src/kernels/tenths.ts"
import { AXES, formatMonth, parseAgeRange, SEXES } from "../../src/plugin/Plugin.ts"
import { call, fixturePlugin, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

let open: TestServer
let token: string
let data: Dataset
const env = { HCC_POPULATION: "2000", HCC_PLUGINS: fixturePlugin("patient-profile") }

beforeAll(async () => {
  // On a compute thread, where PatientData comes from the thread's own runtime.
  open = await startServer({ env: { ...env, HCC_MIN_CELL_SIZE: "1", HCC_THREADS: "1" } })
  await waitReady(open)
  token = newAccount({ dataDir: open.dataDir }, { tier: "unlimited" }).token
  data = await Effect.runPromise(
    Effect.gen(function*() {
      return yield* loadDataset(yield* Kernels)
    }).pipe(Effect.provide(Layer.mergeAll(KernelsLayer.layerWasm, SqliteClient.layer({ filename: join(open.dataDir, "hcc.db") }))))
  )
}, 180_000)
afterAll(async () => {
  await open?.stop()
})

/** The cohort, recomputed from the columns. */
const maskOf = (q: { age_range?: string; sex?: string; conditions?: ReadonlyArray<string> }): Uint8Array => {
  const n = data.patients.count
  const asOfYear = Number(data.asOf.slice(0, 4))
  const [lo, hi] = q.age_range === undefined ? [0, 1000] : parseAgeRange(q.age_range)!
  const mask = new Uint8Array(n)
  for (let p = 0; p < n; p++) {
    const age = asOfYear - data.patients.birthYear.data[p]!
    if (age < lo || age > hi) continue
    if (q.sex !== undefined && SEXES[data.patients.sex.data[p]!] !== q.sex) continue
    if ((q.conditions ?? []).some((c) => data.patients.conditions.get(c)!.data[p] === 0)) continue
    mask[p] = 1
  }
  return mask
}

/** An axis over months [from, to) of the panel for the masked patients: per month mean and scored; per patient means summarised. */
const axisOf = (mask: Uint8Array, axis: number, from: number, to: number) => {
  const { nMonths, nPatients } = data.panel
  const score = scoreReader(data.panel.data)
  const sums = new Float64Array(to - from)
  const scored = new Array<number>(to - from).fill(0)
  const means: Array<number> = []
  for (let p = 0; p < nPatients; p++) {
    if (mask[p] === 0) continue
    let s = 0
    let c = 0
    for (let m = from; m < to; m++) {
      const x = score((axis * nPatients + p) * nMonths + m)
      if (x !== x) continue
      sums[m - from]! += x
      scored[m - from]!++
      s += x
      c++
    }
    if (c > 0) means.push(s / c)
  }
  const mean = means.reduce((a, b) => a + b, 0) / means.length
  const sd = Math.sqrt(means.reduce((a, b) => a + (b - mean) ** 2, 0) / (means.length - 1))
  return { mean: scored.map((c, i) => (c === 0 ? null : sums[i]! / c)), scored, patients: means.length, windowMean: mean, sd }
}

const ask = async (server: TestServer, body: unknown) => {
  const res = await call(server, "/v1/patient-profile", { body, token })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

describe("PatientData, asked by a plugin that reads no column", () => {
  const condition = () => data.vocabulary.condition[0]!
  const questions = () => [
    { axis: "PO" },
    { axis: "ER", age_range: "40-64", sex: "female" },
    { axis: "SC", conditions: [condition()], window: { from: formatMonth(data.firstMonth + 6), to: formatMonth(data.firstMonth + 17) } },
    // A window reaching past the panel is cut to it.
    { axis: "NM", age_range: "18-39", window: { from: "1990-01", to: formatMonth(data.firstMonth + 2) } }
  ]

  it("answers with the cohort, its counts, its series and its window as the columns give them", async () => {
    for (const q of questions()) {
      const { body, status } = await ask(open, q)
      expect(status, JSON.stringify(q)).toBe(200)
      const mask = maskOf(q)
      const size = mask.reduce((a, b) => a + b, 0)
      expect(body.as_of).toBe(data.asOf)
      expect(body.patients).toBe(data.patients.count)
      expect(body.size).toBe(size)
      const bySex = Object.fromEntries(SEXES.map((s, i) => [s, data.patients.sex.data.reduce((a, v, p) => a + (v === i && mask[p] === 1 ? 1 : 0), 0)]))
      expect(body.by_sex).toEqual(bySex)
      for (const c of data.vocabulary.condition) {
        const flags = data.patients.conditions.get(c)!.data
        expect(body.by_condition[c]).toBe(flags.reduce((a, v, p) => a + (v !== 0 && mask[p] === 1 ? 1 : 0), 0))
      }
      const from = q.window === undefined ? 0 : Math.max(0, Math.min(data.months, Number(q.window.from.slice(0, 4)) * 12 + Number(q.window.from.slice(5)) - 1 - data.firstMonth))
      const to = q.window === undefined ? data.months : Math.max(0, Math.min(data.months, Number(q.window.to.slice(0, 4)) * 12 + Number(q.window.to.slice(5)) - data.firstMonth))
      const want = axisOf(mask, AXES.indexOf(q.axis as never), from, to)
      expect(body.series.months).toEqual(Array.from({ length: to - from }, (_, i) => formatMonth(data.firstMonth + from + i)))
      expect(body.series.scored).toEqual(want.scored)
      body.series.mean.forEach((m: number | null, i: number) => (m === null ? expect(want.mean[i]).toBeNull() : expect(m).toBeCloseTo(want.mean[i]!, 9)))
      expect(body.window.patients).toBe(want.patients)
      expect(body.window.mean).toBeCloseTo(want.windowMean, 9)
      expect(body.window.sd).toBeCloseTo(want.sd, 9)
    }
  })

  it("holds a plugin that declares nothing to the minimum cell size for every count it was handed", async () => {
    const guarded = await startServer({ env, dataDir: open.dataDir })
    try {
      await waitReady(guarded)
      // A cohort of at least 11 in which some condition is held by 1 to 10 patients: its size may
      // be published, that count may not, so the answer is refused.
      const countsOf = (mask: Uint8Array) => data.vocabulary.condition.map((c) => data.patients.conditions.get(c)!.data.reduce((a, v, p) => a + (v !== 0 && mask[p] === 1 ? 1 : 0), 0))
      const q = data.vocabulary.condition.map((c) => ({ axis: "PO", conditions: [c] })).find((q) => {
        const mask = maskOf(q)
        return mask.reduce((a, b) => a + b, 0) >= 11 && countsOf(mask).some((n) => n >= 1 && n < 11)
      })
      expect(q).toBeDefined()
      const refused = await ask(guarded, q)
      expect(refused.status).toBe(422)
      expect(refused.body.code).toBe("cohort_too_small")
      expect(refused.body.context).toEqual({ minimum: 11 })
      expect(JSON.stringify(refused.body)).not.toMatch(/by_condition/)
      // The same question is answered where the rule is off.
      expect((await ask(open, q)).status).toBe(200)
    } finally {
      await guarded.stop()
    }
  })
})
