/**
 * No answer publishes a small cell (docs/api.md, "Small cells"), whatever is asked, through HTTP:
 * generated questions to every built-in endpoint and to a third-party plugin that declares nothing,
 * on a dataset small enough for many cohorts, implants, courses and case series to hold 1–10
 * patients. Each answer is checked against figures recomputed here from the dataset's columns (not
 * by the plugins' code): no count of patients or events from 1 to 10, no statistic resting on so
 * few, no such count in a problem body.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { periodLabel } from "../../plugins/population/handler.ts"
import * as SqliteClient from "../../src/db/SqliteClient.ts"
import type { Dataset } from "../../src/health/HealthData.ts"
import { loadDataset } from "../../src/health/loader.ts"
import { Kernels } from "../../src/kernels/Kernels.ts"
import * as KernelsLayer from "../../src/kernels/Kernels.ts"
import { scoreReader } from "../../src/kernels/tenths.ts"
import { AXES, firstDayOfMonth, monthOfDay, SEXES, studentTQuantile, VIEW_MEDIA_TYPE as VIEW } from "../../src/plugin/Plugin.ts"
import { call, fixturePlugin, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"
import { mulberry32 } from "../support/random.ts"

const K = 11
const small = (n: number) => n >= 1 && n < K

const rnd = mulberry32(20_261_126)
const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1))
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rnd() * xs.length)]!
const some = <A>(xs: ReadonlyArray<A>, most: number): Array<A> => [...xs].sort(() => rnd() - 0.5).slice(0, int(1, most))

let server: TestServer
let token: string
let data: Dataset
const ask = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await call(server, path, { body, token, headers })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

beforeAll(async () => {
  server = await startServer({ env: { HCC_POPULATION: "2000", HCC_PLUGINS: fixturePlugin("cohort-profile") } })
  await waitReady(server)
  token = newAccount({ dataDir: server.dataDir }, { tier: "unlimited" }).token
  data = await Effect.runPromise(
    Effect.gen(function*() {
      return yield* loadDataset(yield* Kernels)
    }).pipe(
      Effect.provide(Layer.mergeAll(KernelsLayer.layerWasm, SqliteClient.layer({ filename: join(server.dataDir, "hcc.db") })))
    )
  )
}, 180_000)
afterAll(async () => {
  await server.stop()
})

/** Patients matching age band (at as_of), sex, regions and conditions, as the docs define them. */
const cohortOf = (def: { age_range?: string; sex?: string; regions?: ReadonlyArray<string>; conditions?: ReadonlyArray<string> }): Uint8Array => {
  const n = data.patients.count
  const year = Number(data.asOf.slice(0, 4))
  const [lo, hi] = def.age_range === undefined ? [-Infinity, Infinity] : def.age_range.split("-").map(Number) as [number, number]
  const mask = new Uint8Array(n)
  for (let p = 0; p < n; p++) {
    const age = year - data.patients.birthYear.data[p]!
    if (age < lo || age > hi) continue
    if (def.sex !== undefined && SEXES[data.patients.sex.data[p]!] !== def.sex) continue
    if (def.regions !== undefined && !def.regions.includes(data.vocabulary.region[data.patients.region.data[p]!]!)) continue
    if ((def.conditions ?? []).some((c) => data.patients.conditions.get(c)!.data[p] !== 1)) continue
    mask[p] = 1
  }
  return mask
}
const sizeOf = (mask: Uint8Array) => mask.reduce((a, b) => a + b, 0)

/** Numbers in 1..10 next to a word that makes them a count of people or events. */
const SMALL_COUNT_IN_TEXT = /(?<![\d.,×+/(−-])\b([1-9]|10)\b(?![\d.,%)])(?= (patients?|of \d|of all|implants?|cases|encounters|with|had|in the))|\b(n|encounters_in_window|similar_patients:?)[= ]([1-9]|10)\b(?![\d.,])|-- → ([1-9]|10)\b(?![\d.,])|, ([1-9]|10)\)/

/** A problem body states no count of 1 to 10: neither in its detail nor in its context. */
const expectNoSmallCountInProblem = (body: Record<string, any>) => {
  expect(body.detail).not.toMatch(SMALL_COUNT_IN_TEXT)
  expect(body.detail).not.toMatch(/\b([1-9]|10) (implant|patient|case)/)
  for (const [key, value] of Object.entries(body.context ?? {})) {
    if (key === "minimum" || key === "required" || key === "retry_after_seconds") continue
    if (typeof value === "number") expect(small(value), `context.${key} = ${value}`).toBe(false)
  }
  if (body.code === "cohort_too_small" && body.context?.minimum !== undefined) expect(body.context.minimum).toBe(K)
}

/** Every count and statistic of a 200 is null or rests on at least K (the checks per endpoint below). */
const expectSuppressedAreNull = (body: Record<string, any>) => {
  for (const pointer of body.suppressed ?? []) {
    const value = (pointer as string).slice(1).split("/").reduce((o: any, key) => o?.[key], body)
    expect(value, pointer).toBeNull()
  }
}

describe("generated questions on a dataset with small groups", () => {
  it("population: the cohort and every period average rest on at least 11 patients; in the view representation so do each period's patients and interval, recomputed here", async () => {
    let withheld = 0
    let answered = 0
    let intervals = 0
    for (let i = 0; i < 30; i++) {
      const start = int(18, 95)
      const def = {
        ...(rnd() < 0.8 ? { age_range: `${start}-${start + int(0, 9)}` } : {}),
        ...(rnd() < 0.4 ? { sex: pick(["female", "male"]) } : {}),
        ...(rnd() < 0.4 ? { regions: some(data.vocabulary.region, 2) } : {}),
        ...(rnd() < 0.7 ? { conditions: some(data.vocabulary.condition, 2) } : {})
      }
      const granularity = pick(["monthly", "quarterly", "yearly"] as const)
      // Every other question asks for the view representation (each mean's patients and interval).
      const view = i % 2 === 1
      const { body, status } = await ask("/v1/population", { cohort_definition: def, analysis_type: "trend", granularity }, view ? { accept: VIEW } : {})
      const mask = cohortOf(def)
      const size = sizeOf(mask)
      if (status === 422) {
        expectNoSmallCountInProblem(body)
        expect(size < K, JSON.stringify(def)).toBe(true)
        continue
      }
      expect(status).toBe(200)
      answered++
      expect(body.cohort_size).toBe(size)
      expect(size).toBeGreaterThanOrEqual(K)
      expectSuppressedAreNull(body)
      withheld += (body.suppressed ?? []).length
      const key = granularity === "monthly" ? "month" : granularity === "quarterly" ? "quarter" : "year"
      const { nMonths, nPatients } = data.panel
      const score = scoreReader(data.panel.data)
      expect(body.view_data === undefined).toBe(!view)
      for (const [i, period] of (body.periods as Array<Record<string, any>>).entries()) {
        const months = Array.from({ length: nMonths }, (_, m) => m).filter((m) => periodLabel(granularity, data.firstMonth + m) === period[key])
        const shown = body.view_data?.periods[i]
        if (view) expect(shown.period).toBe(period[key])
        for (const [a, axis] of AXES.entries()) {
          // Each patient's sum and count of scores in the period.
          const perPatient: Array<[number, number]> = []
          for (let p = 0; p < nPatients; p++) {
            if (mask[p] !== 1) continue
            const xs = months.map((m) => score((a * nPatients + p) * nMonths + m)).filter((x) => !Number.isNaN(x))
            if (xs.length > 0) perPatient.push([xs.reduce((s, x) => s + x, 0), xs.length])
          }
          const scored = perPatient.length
          if (period[`avg_${axis}`] === null) {
            expect(small(scored), `${period[key]} ${axis}`).toBe(true)
            if (view) expect([shown[`n_${axis}`], shown[`low_${axis}`], shown[`high_${axis}`]]).toEqual([null, null, null])
            continue
          }
          expect(scored, `${period[key]} ${axis}`).toBeGreaterThanOrEqual(K)
          if (!view) continue
          // The mean's 95 % interval with patients as clusters: G/(G−1) · Σ (Sᵢ − m·nᵢ)² / N².
          const total = perPatient.reduce((s, [x]) => s + x, 0)
          const count = perPatient.reduce((s, [, c]) => s + c, 0)
          const mean = total / count
          const variance = (scored / (scored - 1)) * perPatient.reduce((s, [x, c]) => s + (x - mean * c) ** 2, 0) / count ** 2
          const half = studentTQuantile(0.05, scored - 1) * Math.sqrt(variance)
          expect(shown[`n_${axis}`], `${period[key]} ${axis}`).toBe(scored)
          // Rounded to 3 decimals there.
          expect(Math.abs(shown[`low_${axis}`] - (mean - half)), `${period[key]} ${axis} low`).toBeLessThanOrEqual(0.0005 + 1e-9)
          expect(Math.abs(shown[`high_${axis}`] - (mean + half)), `${period[key]} ${axis} high`).toBeLessThanOrEqual(0.0005 + 1e-9)
          intervals++
        }
      }
    }
    // The questions reached both sides of the rule.
    expect(answered).toBeGreaterThan(3)
    expect(withheld).toBeGreaterThan(0)
    expect(intervals).toBeGreaterThan(0)
  })

  it("device-outcomes: the implants, and each rate's events and non-events, are never 1 to 10", async () => {
    let refused = 0
    let answered = 0
    const metrics = data.vocabulary.device_metric
    for (let i = 0; i < 30; i++) {
      const device = pick(data.vocabulary.device)
      const months = int(1, 36)
      const chosen = some(metrics, 3)
      const { body, status } = await ask("/v1/device-outcomes", { device_category: device, outcome_metrics: chosen, time_period: `${months}_months` })
      const d = data.vocabulary.device.indexOf(device)
      const from = firstDayOfMonth(monthOfDay(data.asOfDay) - months + 1)
      const { implants, outcomes } = data.devices
      const inPeriod = new Uint8Array(implants.device.length)
      for (let j = 0; j < implants.device.length; j++) inPeriod[j] = implants.device[j] === d && implants.day[j]! >= from && implants.day[j]! <= data.asOfDay ? 1 : 0
      const size = sizeOf(inPeriod)
      if (status === 422) {
        expectNoSmallCountInProblem(body)
        refused++
        continue
      }
      expect(status).toBe(200)
      answered++
      expect(body.sample_size).toBe(size)
      expect(small(size)).toBe(false)
      expectSuppressedAreNull(body)
      for (const metric of chosen) {
        if (body.outcomes[metric] === null) continue
        const m = metrics.indexOf(metric)
        let n = 0
        let events = 0
        for (let r = 0; r < outcomes.metric.length; r++) {
          if (outcomes.metric[r] !== m || inPeriod[outcomes.implant[r]!] !== 1) continue
          n++
          events += outcomes.value[r]!
        }
        expect(small(n), `${device} ${metric} ${months}`).toBe(false)
        if (metric.endsWith("_rate")) {
          expect(small(events), `${device} ${metric} ${months} events`).toBe(false)
          expect(small(n - events), `${device} ${metric} ${months} non-events`).toBe(false)
        }
      }
    }
    expect(refused).toBeGreaterThan(0)
    expect(answered).toBeGreaterThan(0)
  })

  it("drug-outcomes: the cohort and the counts its rates imply are never 1 to 10; a population_size under 11 is raised to it", async () => {
    // Every drug's patients with an adverse event of it (some have none here), then generated questions.
    const requests = [
      ...data.vocabulary.drug.map((drug) => ({ drug, outcome_type: "adverse_events", population_size: "minimum_1" })),
      ...Array.from({ length: 24 }, () => ({
        drug: pick(data.vocabulary.drug),
        outcome_type: pick(["efficacy", "adverse_events", "adherence"]),
        axes_filter: some(AXES, 3),
        population_size: `minimum_${int(1, 20)}`
      }))
    ]
    let raised = 0
    for (const request of requests) {
      const { body, status } = await ask("/v1/drug-outcomes", request)
      if (status === 422) {
        expectNoSmallCountInProblem(body)
        if (body.context?.required !== undefined) {
          expect(body.context.required).toBeGreaterThanOrEqual(K)
          raised++
        }
        continue
      }
      expect(status, JSON.stringify(body)).toBe(200)
      expect(small(body.cohort_size)).toBe(false)
      expectSuppressedAreNull(body)
      if (body.adverse_event_rate !== null) expect(small(Math.round(body.adverse_event_rate * body.cohort_size))).toBe(false)
    }
    // Some cohorts are empty here: their 422 names what was required.
    expect(raised).toBeGreaterThan(0)
  })

  it("clinical: no count of 1 to 10 in the reasoning or the suggestions, nor in contributing_data; a repeated question (answered from the cache) withholds the same", async () => {
    for (let i = 0; i < 24; i++) {
      const drugs = some(data.vocabulary.drug, 2)
      const conditions = rnd() < 0.6 ? some(data.vocabulary.condition, 2).map((c) => c.replaceAll("_", " ")) : []
      const axis = pick(AXES)
      const query = `Patient on ${drugs.join(" and ")}${conditions.length > 0 ? ` with ${conditions.join(" and ")}` : ""}, ${axis} ${pick(["declining", "improving", "stable"])}. Suggest intervention.`
      const question = { query, axes: some(AXES, 3), response_format: pick(["structured", "natural_language", "sql_like"]), time_range: pick(["30_days", "90_days", "6_months", "1_year", "all"]) }
      const { body, status } = await ask("/v1/clinical", question)
      if (status === 422) {
        expectNoSmallCountInProblem(body)
        continue
      }
      expect(status).toBe(200)
      expectSuppressedAreNull(body)
      expect((await ask("/v1/clinical", question)).body).toEqual(body)
      for (const text of [...body.reasoning_chain, ...body.suggestions] as Array<string>) {
        // sql_like lines: the statement's own literals are not figures; what follows "-- →" is.
        const stated = text.split("\n").map((l) => (l.includes("; -- ") ? l.slice(l.indexOf("; -- ")) : l)).join("\n")
        expect(stated.match(SMALL_COUNT_IN_TEXT)?.[0], `${query}: ${stated}`).toBeUndefined()
      }
      const encounters = body.contributing_data.encounters
      expect(encounters === null || !small(encounters)).toBe(true)
    }
  })

  it("risk-model: no weight or probability rests on a condition held by 1 to 10 patients", async () => {
    const holders = new Map(data.vocabulary.condition.map((c) => [c, sizeOf(data.patients.conditions.get(c)!.data as unknown as Uint8Array)]))
    for (let i = 0; i < 20; i++) {
      const conditions = some(data.vocabulary.condition, 3)
      const start = int(20, 80)
      const request = {
        patient_profile: { axes_snapshot: Object.fromEntries(some(AXES, 4).map((a) => [a, int(0, 100) / 10])), age_range: `${start}-${start + 9}`, conditions },
        risk_type: pick(["hospitalization", "readmission", "health_decline"]),
        horizon: `${int(1, 365)}_days`
      }
      const { body, status } = await ask("/v1/risk-model", request)
      if (status === 422) {
        expectNoSmallCountInProblem(body)
        continue
      }
      expect(status).toBe(200)
      expectSuppressedAreNull(body)
      for (const f of body.contributing_factors as Array<{ factor: string; weight: number | null }>) {
        if (f.weight !== null && holders.has(f.factor)) expect(small(holders.get(f.factor)!), f.factor).toBe(false)
      }
    }
  })

  it("one-health: an answer is about at least 11 human cases", async () => {
    let answered = 0
    for (const key of data.surveillance.animal.keys()) {
      const [species, condition, region] = key.split("/") as [string, string, string]
      const { body, status } = await ask("/v1/one-health", { human_condition: condition, animal_species: species, geographic_scope: region })
      const human = data.surveillance.human.get(`${condition}/${region}`)
      const cases = human === undefined ? 0 : human.reduce((s, x) => (Number.isNaN(x) ? s : s + x), 0)
      if (status === 422) {
        expectNoSmallCountInProblem(body)
        continue
      }
      expect(status).toBe(200)
      expect(small(cases), key).toBe(false)
      answered++
    }
    expect(answered).toBeGreaterThan(0)
  })

  it("temporal: answers from the caller's own series, with no count of patients to withhold", async () => {
    for (const example of builtins.find((p) => p.name === "temporal")!.examples!) {
      const { body, status } = await ask("/v1/temporal", example.request)
      expect(status).toBe(200)
      expect(body.suppressed).toBeUndefined()
    }
  })

  it("a third-party plugin that declares nothing cannot answer from a cohort of 1 to 10", async () => {
    let refused = 0
    let answered = 0
    for (let i = 0; i < 30; i++) {
      const start = int(18, 95)
      const def = { age_range: `${start}-${start + int(0, 5)}`, ...(rnd() < 0.7 ? { conditions: some(data.vocabulary.condition, 2) } : {}) }
      const { body, status } = await ask("/v1/cohort-profile", def)
      const size = sizeOf(cohortOf(def))
      if (small(size)) {
        expect(status, JSON.stringify(def)).toBe(422)
        expect(body.code).toBe("cohort_too_small")
        expectNoSmallCountInProblem(body)
        refused++
      } else {
        expect(status).toBe(200)
        expect(body.patients).toBe(size)
        answered++
      }
    }
    expect(refused).toBeGreaterThan(0)
    expect(answered).toBeGreaterThan(0)
  })
})
