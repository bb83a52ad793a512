/**
 * POST /v1/one-health on the run's generated dataset: each planted animal → human lead is found
 * within one weekly step, the named unlinked pairs show none, and the answer is built from facts.
 */
import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import { oneHealthUnderGenerator } from "../../bench/simulations.ts"
import { arFilter, prewhiten, zoonoticRisk } from "../../plugins/one-health/analysis.ts"
import { UNLINKED_PAIRS, ZOONOTIC_LINKS } from "../../src/health/truths.ts"
import { useFixture } from "../support/fixture.ts"
import { call } from "../support/server.ts"

const fixture = useFixture()

const post = async (body: unknown) => {
  const res = await call(fixture.server, "/v1/one-health", { body })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

describe("planted truths", () => {
  it.each(ZOONOTIC_LINKS.map((l) => [l.species, l.condition, l.region, l.lagDays] as const))("%s → %s in %s: a lead of %i days, within one week", async (species, condition, region, lagDays) => {
    const { body, status } = await post({ human_condition: condition, animal_species: species, geographic_scope: region })
    expect(status).toBe(200)
    expect(body.correlation_found).toBe(true)
    expect(body.correlation_strength).toBeGreaterThan(0.5)
    const days = Number(/^(\d+)_days$/.exec(body.temporal_lag)![1])
    expect(Math.abs(days - lagDays)).toBeLessThanOrEqual(7)
    expect(body.recommendation).toContain(`lead human cases by ${days} days`)
    expect(["moderate", "high", "critical"]).toContain(body.alert_level)
  })

  it.each(UNLINKED_PAIRS.map((p) => [p.species, p.condition, p.region] as const))("%s / %s / %s: no correlation", async (species, condition, region) => {
    const { body, status } = await post({ human_condition: condition, animal_species: species, geographic_scope: region })
    expect(status).toBe(200)
    expect(body.correlation_found).toBe(false)
    expect(body.recommendation).toMatch(/^No lead of /)
  })
})

describe("false alarms under the generator's null process", () => {
  it("unlinked pairs over 8 seeds (1,000 pairs): correlation_found fires at the nominal 5 %, and every planted lead is still found at its lag", async () => {
    const r = await Effect.runPromise(oneHealthUnderGenerator(fixture.kernels, [1, 2, 3, 4, 5, 6, 7, 8]))
    console.log(`one-health, simulated under the generator: correlation_found on ${r.alarms} of ${r.pairs} unlinked pairs (${(r.alarms / r.pairs * 100).toFixed(1)} %, nominal 5 %); ${r.leadsAtLag} of ${r.leads} planted leads found at their lag`)
    expect(r.leads).toBe(8 * ZOONOTIC_LINKS.length)
    expect(r.leadsAtLag).toBe(r.leads)
    expect(r.pairs).toBe(1000)
    // Binomial band around 5 % for 1,000 pairs (SD 0.69 points): 2.9–7.1 %.
    expect(r.alarms / r.pairs).toBeGreaterThan(0.029)
    expect(r.alarms / r.pairs).toBeLessThan(0.071)
  })
})

describe("answers", () => {
  it("carries the spec's fields, the documented risk for the host, and repeats itself", async () => {
    const request = { query_type: "cross_species_correlation", human_condition: "avian_influenza", animal_species: "poultry", geographic_scope: "southeast_asia" }
    const a = await post(request)
    expect(Object.keys(a.body).sort()).toEqual(["alert_level", "correlation_found", "correlation_strength", "hcc_cost", "recommendation", "temporal_lag", "zoonotic_risk"])
    // Poultry are a high-potential source of avian influenza (zoonotic-potential.json) and the lead is found.
    expect(a.body.zoonotic_risk).toBe("high")
    expect(a.body.hcc_cost).toBe(5)
    expect((await post(request)).body).toEqual(a.body)
  })
  it("rates risk from the finding and the host's potential", () => {
    expect(zoonoticRisk(true, "high")).toBe("high")
    expect(zoonoticRisk(true, "low")).toBe("moderate")
    expect(zoonoticRisk(false, "high")).toBe("moderate")
    expect(zoonoticRisk(false, "moderate")).toBe("low")
  })
  it("prewhitens with the AR filter the animal series needs: order and coefficients by Yule–Walker and AIC", () => {
    // An AR(2) series x_t = 0.6 x_{t−1} − 0.3 x_{t−2} + e_t: AIC picks order 2 (not 1) and recovers the coefficients.
    let state = 7
    const e = () => {
      state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
      return state / 2 ** 32 - 0.5
    }
    const x = new Float64Array(4000)
    for (let t = 2; t < x.length; t++) x[t] = 0.6 * x[t - 1]! - 0.3 * x[t - 2]! + e()
    const a = arFilter(x)
    expect(a.length).toBeGreaterThanOrEqual(2)
    expect(a[0]).toBeCloseTo(0.6, 1)
    expect(a[1]).toBeCloseTo(-0.3, 1)
    expect(Array.from(prewhiten(Float64Array.from([2, 4, 8, 16]), [0.5, 0.25]))).toEqual([8 - 2 - 0.5, 16 - 4 - 1])
    expect(arFilter(Float64Array.from([1, 1, 1, 1, 1, 1, 1, 1]))).toEqual([])
  })
})

describe("errors", () => {
  it.each([
    [{ human_condition: "avian_flu", animal_species: "poultry", geographic_scope: "southeast_asia" }, "unknown_condition", "avian_influenza"],
    [{ human_condition: "avian_influenza", animal_species: "chickens", geographic_scope: "southeast_asia" }, "unknown_species", undefined],
    [{ human_condition: "avian_influenza", animal_species: "poultry", geographic_scope: "south_east_asia" }, "unknown_region", "southeast_asia"]
  ])("%j → 422 %s", async (request, code, first) => {
    const { body, status } = await post(request)
    expect(status).toBe(422)
    expect(body.code).toBe(code)
    expect(body.suggestions.length).toBeGreaterThan(0)
    if (first !== undefined) expect(body.suggestions[0]).toBe(first)
  })
  it("a species without a series for the condition is 422 series_not_found naming the species that have one", async () => {
    const { body, status } = await post({ human_condition: "avian_influenza", animal_species: "bats", geographic_scope: "southeast_asia" })
    expect(status).toBe(422)
    expect(body.code).toBe("series_not_found")
    expect(body.suggestions).toEqual(expect.arrayContaining(["poultry", "wild_birds"]))
  })
  it.each([
    [{ human_condition: "rabies", animal_species: "dogs", geographic_scope: "western_europe", query_type: "forecast" }, "/query_type"],
    [{ animal_species: "dogs", geographic_scope: "western_europe" }, "/human_condition"]
  ])("400 names the path: %j", async (request, path) => {
    const { body, status } = await post(request)
    expect(status).toBe(400)
    expect(body.errors.map((e: any) => e.path)).toContain(path)
  })
})
