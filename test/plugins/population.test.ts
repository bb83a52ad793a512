/**
 * POST /v1/population against the real server on a generated population (20,000 patients, the
 * default seed): the planted trend is recovered, the no-trend cohort is not significant, answers are
 * deterministic, and every error of the contract is there.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NO_TREND_COHORT, PLANTED_TREND } from "../../src/synthetic/truths.ts"
import { call, startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer

beforeAll(async () => {
  server = await startServer({ env: { HCC_POPULATION: "20000" } })
  await waitReady(server)
})
afterAll(async () => {
  await server.stop()
})

const post = async (body: unknown) => {
  const res = await call(server, "/v1/population", { body })
  return { status: res.status, body: (await res.json()) as Record<string, any>, headers: res.headers }
}

/** Least-squares slope of y on 0, 1, 2, … */
const slope = (y: ReadonlyArray<number>) => {
  const n = y.length
  const tm = (n - 1) / 2
  const ym = y.reduce((a, b) => a + b, 0) / n
  let num = 0
  let den = 0
  y.forEach((v, t) => {
    num += (t - tm) * (v - ym)
    den += (t - tm) ** 2
  })
  return num / den
}

describe("planted truths", () => {
  it(`recovers the ${PLANTED_TREND.axis} trend of ${PLANTED_TREND.cohort.conditions.join("+")} (${PLANTED_TREND.perMonth * 3}/quarter ± 0.02), p < 0.05`, async () => {
    const { body, status } = await post({ cohort_definition: { conditions: PLANTED_TREND.cohort.conditions }, analysis_type: "trend", granularity: "quarterly" })
    expect(status).toBe(200)
    expect(body.cohort_size).toBeGreaterThan(300)
    expect(body.periods).toHaveLength(12)
    expect(body.periods[0].quarter).toBe("Q4_2023")
    expect(body.periods[11].quarter).toBe("Q3_2026")
    const perQuarter = slope(body.periods.map((p: any) => p[`avg_${PLANTED_TREND.axis}`]))
    expect(perQuarter).toBeLessThan(0)
    expect(Math.abs(perQuarter - PLANTED_TREND.perMonth * 3)).toBeLessThan(0.02)
    expect(body.statistical_significance).toBeLessThan(0.05)
  })

  it(`finds no significant trend in ${NO_TREND_COHORT.conditions.join("+")} aged ${NO_TREND_COHORT.ageRange} (p > 0.05)`, async () => {
    const { body, status } = await post({
      cohort_definition: { conditions: NO_TREND_COHORT.conditions, age_range: NO_TREND_COHORT.ageRange },
      analysis_type: "trend"
    })
    expect(status).toBe(200)
    expect(body.cohort_size).toBeGreaterThan(300)
    expect(body.statistical_significance).toBeGreaterThan(0.05)
    for (const p of body.periods) for (const axis of ["PO", "NM", "ER", "SC", "RS", "ES", "TA", "PV"]) expect(p[`avg_${axis}`]).toBeTypeOf("number")
  })

  it("gives the same body for the same question, computed twice", async () => {
    // Answers are kept per dataset, so a repeated body would be a look-up: the axes listed in
    // another order are a second cache key for the same question, hence a second computation.
    const cohort_definition = { age_range: "45-65", axes_threshold: { PO: { min: 5 } }, conditions: ["type_2_diabetes"] }
    const a = await post({ cohort_definition, analysis_type: "trend", axes: ["PO", "NM", "ER"] })
    const b = await post({ cohort_definition, analysis_type: "trend", axes: ["ER", "NM", "PO"] })
    const c = await post({ cohort_definition, analysis_type: "trend", axes: ["PO", "NM", "ER"] })
    expect(a.status).toBe(200)
    expect(b.body).toEqual(a.body)
    expect(c.body).toEqual(a.body)
  })
})

describe("cohort definition", () => {
  it("{} and an absent cohort_definition are everyone", async () => {
    const all = await post({ analysis_type: "trend" })
    const empty = await post({ cohort_definition: {}, analysis_type: "trend" })
    expect(all.body.cohort_size).toBe(20000)
    expect(empty.body).toEqual(all.body)
  })

  it("narrows with every criterion (AND)", async () => {
    const size = async (cohort_definition: unknown) => (await post({ cohort_definition, analysis_type: "trend", axes: ["PO"] })).body.cohort_size as number
    const t2d = await size({ conditions: ["type_2_diabetes"] })
    const t2dMetformin = await size({ conditions: ["type_2_diabetes"], drugs: ["metformin"] })
    const t2dMetforminWomen = await size({ conditions: ["type_2_diabetes"], drugs: ["metformin"], sex: "female" })
    const t2dMetforminWomenAsia = await size({ conditions: ["type_2_diabetes"], drugs: ["metformin"], sex: "female", regions: ["southeast_asia", "east_asia"] })
    expect(t2d).toBeGreaterThan(t2dMetformin)
    // About 70 % of T2D patients take metformin (truths.ts DRUG_USE).
    expect(t2dMetformin / t2d).toBeGreaterThan(0.6)
    expect(t2dMetformin / t2d).toBeLessThan(0.8)
    expect(t2dMetforminWomen).toBeLessThan(t2dMetformin)
    expect(t2dMetforminWomenAsia).toBeLessThan(t2dMetforminWomen)
    expect(t2dMetforminWomenAsia).toBeGreaterThan(0)
    const young = await size({ age_range: "18-29" })
    const old = await size({ age_range: "65-120" })
    // Age shares of truths.ts AGE_BANDS: 20 % are 18–29, 22 % are 65+.
    expect(young / 20000).toBeCloseTo(0.2, 1)
    expect(old / 20000).toBeCloseTo(0.22, 1)
  })

  it("axis thresholds bound the mean score over the window", async () => {
    const high = await post({ cohort_definition: { axes_threshold: { PO: { min: 7 } } }, analysis_type: "trend", axes: ["PO"] })
    // Means of at most 36 one-decimal scores are multiples of 1/360: these three bands do not overlap.
    const low = await post({ cohort_definition: { axes_threshold: { PO: { max: 3.9999 } } }, analysis_type: "trend", axes: ["PO"] })
    const band = await post({ cohort_definition: { axes_threshold: { PO: { min: 4, max: 6.9999 } } }, analysis_type: "trend", axes: ["PO"] })
    for (const p of high.body.periods) expect(p.avg_PO).toBeGreaterThan(6.5)
    for (const p of low.body.periods) expect(p.avg_PO).toBeLessThan(4.5)
    // Patients with no PO score at all fall in none of the three.
    expect(high.body.cohort_size + low.body.cohort_size + band.body.cohort_size).toBeLessThanOrEqual(20000)
    expect(high.body.cohort_size + low.body.cohort_size + band.body.cohort_size).toBeGreaterThan(19900)
  })
})

describe("periods", () => {
  it("monthly periods carry `month` (YYYY-MM), yearly ones `year`; only the requested axes, in canonical order", async () => {
    const monthly = await post({ analysis_type: "trend", granularity: "monthly", axes: ["ER", "PO"] })
    expect(monthly.body.periods).toHaveLength(36)
    expect(Object.keys(monthly.body.periods[0])).toEqual(["month", "avg_PO", "avg_ER"])
    expect(monthly.body.periods[0].month).toBe("2023-10")
    expect(monthly.body.periods[35].month).toBe("2026-09")
    const yearly = await post({ analysis_type: "trend", granularity: "yearly", axes: ["NM"] })
    expect(yearly.body.periods.map((p: any) => p.year)).toEqual(["2023", "2024", "2025", "2026"])
    expect(Object.keys(yearly.body.periods[0])).toEqual(["year", "avg_NM"])
  })

  it("the quarter averages are the means of the month scores they hold", async () => {
    const monthly = await post({ cohort_definition: { conditions: ["copd"] }, analysis_type: "trend", granularity: "monthly", axes: ["PO"] })
    const quarterly = await post({ cohort_definition: { conditions: ["copd"] }, analysis_type: "trend", granularity: "quarterly", axes: ["PO"] })
    // Not equal in general (months hold different numbers of scores), but within rounding of the month means' range.
    const first3 = monthly.body.periods.slice(0, 3).map((p: any) => p.avg_PO as number)
    expect(quarterly.body.periods[0].avg_PO).toBeGreaterThanOrEqual(Math.min(...first3) - 0.001)
    expect(quarterly.body.periods[0].avg_PO).toBeLessThanOrEqual(Math.max(...first3) + 0.001)
  })
})

describe("errors", () => {
  it("a cohort under 11 patients is 422 cohort_too_small with both numbers", async () => {
    const { body, status } = await post({ cohort_definition: { age_range: "18-18", conditions: ["heart_failure", "copd"] }, analysis_type: "trend" })
    expect(status).toBe(422)
    expect(body.code).toBe("cohort_too_small")
    expect(body.context.required).toBe(11)
    expect(body.context.cohort_size).toBeLessThan(11)
    expect(body.hcc_cost).toBe(0)
  })

  it.each([
    ["conditions", ["type_2_diabets"], "unknown_condition", "type_2_diabetes"],
    // A misspelt word of the code, not only the whole code: edit distance alone ranked obesity first.
    ["conditions", ["diabetis"], "unknown_condition", "type_2_diabetes"],
    ["conditions", ["kidny_disease"], "unknown_condition", "chronic_kidney_disease"],
    ["drugs", ["metfromin"], "unknown_drug", "metformin"],
    ["regions", ["south_east_asia"], "unknown_region", "southeast_asia"]
  ])("an unknown code in %s is 422 with the closest names", async (field, codes, code, suggestion) => {
    const { body, status } = await post({ cohort_definition: { [field]: codes }, analysis_type: "trend" })
    expect(status).toBe(422)
    expect(body.code).toBe(code)
    expect(body.suggestions[0]).toBe(suggestion)
  })

  it.each([
    [{ analysis_type: "forecast" }, "/analysis_type"],
    [{ analysis_type: "trend", granularity: "weekly" }, "/granularity"],
    [{ analysis_type: "trend", cohort_definition: { age_range: "65-45" } }, "/cohort_definition/age_range"],
    [{ analysis_type: "trend", cohort_definition: { axes_threshold: { PO: { min: 11 } } } }, "/cohort_definition/axes_threshold/PO/min"],
    [{ analysis_type: "trend", cohort_definition: { axes_threshold: { PO: { min: 6, max: 5 } } } }, "/cohort_definition/axes_threshold/PO"],
    [{ analysis_type: "trend", cohort_definition: { conditions: [] } }, "/cohort_definition/conditions"],
    [{ analysis_type: "trend", axes: ["PO", "PO"] }, "/axes"],
    [{ cohort_definition: {} }, "/analysis_type"]
  ])("400 names the path: %j", async (request, path) => {
    const { body, status } = await post(request)
    expect(status).toBe(400)
    expect(body.errors.map((e: any) => e.path)).toContain(path)
  })

  it("an unknown axis in axes_threshold is 400 unknown_field", async () => {
    const { body, status } = await post({ analysis_type: "trend", cohort_definition: { axes_threshold: { XX: { min: 1 } } } })
    expect(status).toBe(400)
    expect(body.code).toBe("unknown_field")
    expect(body.errors[0].path).toBe("/cohort_definition/axes_threshold/XX")
  })
})

describe("while the data loads", () => {
  it("answers 503 unavailable with Retry-After, /readyz names the data, and nothing is charged", async () => {
    const loading = await startServer({ env: { HCC_POPULATION: "40000" } })
    try {
      const res = await call(loading, "/v1/population", { body: { analysis_type: "trend" } })
      const body = (await res.json()) as Record<string, any>
      expect(res.status).toBe(503)
      expect(body.code).toBe("unavailable")
      expect(body.hcc_cost).toBe(0)
      expect(res.headers.get("retry-after")).toBe("5")
      const ready = await fetch(`${loading.url}/readyz`)
      expect(ready.status).toBe(503)
      const readiness = (await ready.json()) as { detail: string; checks: Record<string, { status: string; detail: string; progress?: number }> }
      expect(readiness.detail).toMatch(/data \(health data: generating 40000 patients/)
      // The same facts as data: each check's state, and how far the generation has come.
      expect(readiness.checks.database).toEqual({ status: "ok", detail: "the state database answers" })
      expect(readiness.checks.data).toMatchObject({ status: "loading", detail: expect.stringMatching(/^health data: generating 40000 patients/) })
      expect(readiness.checks.data!.progress).toBeGreaterThanOrEqual(0)
      expect(readiness.checks.data!.progress).toBeLessThanOrEqual(1)
      // Progress moves while the generation goes on.
      let later = readiness.checks.data!.progress!
      for (let i = 0; i < 100 && later <= readiness.checks.data!.progress!; i++) {
        await new Promise((r) => setTimeout(r, 100))
        const again = (await (await fetch(`${loading.url}/readyz`)).json()) as typeof readiness
        later = again.checks.data?.progress ?? 1
      }
      expect(later).toBeGreaterThan(readiness.checks.data!.progress!)
      const usage = (await (await call(loading, "/v1/usage")).json()) as Record<string, any>
      expect(usage.queries_today).toBe(0)
    } finally {
      await loading.stop()
    }
  })
})
