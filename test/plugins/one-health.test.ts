/**
 * POST /v1/one-health on the run's generated dataset: each planted animal → human lead is found
 * within one weekly step, the named unlinked pairs show none, and the answer is built from facts.
 */
import { describe, expect, it } from "vitest"
import * as Effect from "effect/Effect"
import { oneHealthUnderGenerator } from "../../bench/simulations.ts"
import { analyzeLead, arFilter, prewhiten, zoonoticRisk } from "../../plugins/one-health/analysis.ts"
import { UNLINKED_PAIRS, ZOONOTIC_LINKS } from "../../src/synthetic/truths.ts"
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

/**
 * The method of docs/analytics.md ("One health"), written from its text alone: autocovariances,
 * Levinson–Durbin with AIC, the filter that drops the first p weeks, lagged Pearson r, the
 * mulberry32 Fisher–Yates permutations, and the alert's percentiles on raw counts.
 */
const documented = (animal: Float64Array, human: Float64Array) => {
  const logA = Array.from(animal, (c) => Math.log1p(c))
  const logH = Array.from(human, (c) => Math.log1p(c))
  const present = logA.filter((v) => !Number.isNaN(v))
  const m = present.length
  const mean = present.reduce((a, v) => a + v, 0) / m
  const P = Math.min(6, Math.floor(m / 4))
  const gamma = Array.from({ length: P + 1 }, (_, k) => {
    let sum = 0
    for (let t = k; t < logA.length; t++) {
      const d = (logA[t]! - mean) * (logA[t - k]! - mean)
      if (!Number.isNaN(d)) sum += d
    }
    return sum / m
  })
  let a: Array<number> = []
  let sigma2 = gamma[0]!
  let best = { aic: m * Math.log(sigma2), a }
  for (let p = 1; p <= P; p++) {
    let kappa = gamma[p]!
    for (let j = 1; j < p; j++) kappa -= a[j - 1]! * gamma[p - j]!
    kappa /= sigma2
    if (Math.abs(kappa) >= 1) break
    a = [...a.map((aj, j) => aj - kappa * a[p - 2 - j]!), kappa]
    sigma2 *= 1 - kappa * kappa
    const aic = m * Math.log(sigma2) + 2 * p
    if (aic < best.aic) best = { aic, a }
  }
  const ar = best.a
  const filter = (v: ReadonlyArray<number>) => v.slice(ar.length).map((vt, i) => ar.reduce((s, aj, j) => s - aj * v[i + ar.length - 1 - j]!, vt))
  const x = filter(logA)
  const y = filter(logH)
  const pearson = (u: ReadonlyArray<number>, w: ReadonlyArray<number>) => {
    const mu = u.reduce((s, v) => s + v, 0) / u.length
    const mw = w.reduce((s, v) => s + v, 0) / w.length
    let sxy = 0
    let sxx = 0
    let syy = 0
    for (let i = 0; i < u.length; i++) {
      sxy += (u[i]! - mu) * (w[i]! - mw)
      sxx += (u[i]! - mu) ** 2
      syy += (w[i]! - mw) ** 2
    }
    return sxy / Math.sqrt(sxx * syy)
  }
  const largest = (xs: ReadonlyArray<number>) => {
    let lag = -1
    let r = Number.NaN
    for (let L = 0; L <= 8; L++) {
      const u: Array<number> = []
      const w: Array<number> = []
      for (let t = 0; t + L < xs.length; t++) {
        if (!Number.isNaN(xs[t]!) && !Number.isNaN(y[t + L]!)) {
          u.push(xs[t]!)
          w.push(y[t + L]!)
        }
      }
      const rl = u.length >= 3 ? pearson(u, w) : Number.NaN
      if (!Number.isNaN(rl) && (lag < 0 || rl > r)) {
        lag = L
        r = rl
      }
    }
    return { lag, r }
  }
  const observed = largest(x)
  let state = 0x0de1a7ed
  const uniform = () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = Math.imul(state ^ (state >>> 15), state | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
  }
  const shuffled = [...x]
  let atLeast = 0
  for (let b = 0; b < 999; b++) {
    for (let i = shuffled.length - 1; i > 0; i--) {
      const j = Math.floor(uniform() * (i + 1))
      ;[shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!]
    }
    if (largest(shuffled).r >= observed.r) atLeast++
  }
  const raw = Array.from(animal).filter((v) => !Number.isNaN(v)).sort((p, q) => p - q)
  const type7 = (q: number) => {
    const h = (raw.length - 1) * q
    const lo = Math.floor(h)
    return raw[lo]! + (h - lo) * (raw[Math.min(lo + 1, raw.length - 1)]! - raw[lo]!)
  }
  const recent = Array.from(animal.subarray(animal.length - 4)).filter((v) => !Number.isNaN(v))
  return { ar, lag: observed.lag, r: observed.r, p: (1 + atLeast) / 1000, q75: type7(0.75), q95: type7(0.95), recentMean: recent.reduce((s, v) => s + v, 0) / recent.length }
}

describe("the documented method", () => {
  it.each([...ZOONOTIC_LINKS, ...UNLINKED_PAIRS].map((l) => [l.species, l.condition, l.region] as const))(
    "%s / %s / %s: the service's AR filter, lag, r, permutation p and alert percentiles are the documented ones",
    async (species, condition, region) => {
      const animal = fixture.data.surveillance.animal.get(`${species}/${condition}/${region}`)!
      const human = fixture.data.surveillance.human.get(`${condition}/${region}`)!
      const service = await Effect.runPromise(analyzeLead(fixture.kernels, animal, human))
      const mine = documented(animal, human)
      expect(service.ar.length).toBe(mine.ar.length)
      service.ar.forEach((a, j) => expect(a).toBeCloseTo(mine.ar[j]!, 10))
      expect(service.lagWeeks).toBe(mine.lag)
      expect(service.r).toBeCloseTo(mine.r, 10)
      expect(service.p).toBe(mine.p)
      expect(service.q75).toBe(mine.q75)
      expect(service.q95).toBe(mine.q95)
      expect(service.recentMean).toBe(mine.recentMean)
    }
  )
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
