/**
 * POST /v1/device-outcomes on a generated population (30,000 patients): pooled rates are unbiased and
 * their 95 % intervals stay inside [0, 1] and cover the planted per-study mean at about the nominal
 * rate (on the data and in a simulation under the generator's own process), the endpoint reports
 * exactly the pooled value, and every error of the contract is there.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { binomialNormal, type BinomialNormalFit, fitBinomialNormal, type StudyCount } from "../../plugins/device-outcomes/binomialNormal.ts"
import { derSimonianLaird, implantsInPeriod, poolMetric, studyEstimates } from "../../plugins/device-outcomes/pooling.ts"
import { deviceCoverageOnData, deviceCoverageSimulated, RATE_PAIRS } from "../../bench/simulations.ts"
import { useFixture } from "../support/fixture.ts"
import { call, startServer, waitReady } from "../support/server.ts"

const fixture = useFixture()

const studiesOf = (device: string, metric: string, months: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const sel = yield* implantsInPeriod(fixture.kernels, fixture.data, fixture.data.vocabulary.device.indexOf(device), months)
    return yield* studyEstimates(fixture.kernels, fixture.data, sel.prepared, sel.mask, metric)
  }))

const pooled = async (device: string, metric: string, months: number) => poolMetric(metric, await studiesOf(device, metric, months))

const post = async (body: unknown) => {
  const res = await call(fixture.server, "/v1/device-outcomes", { body })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

describe("planted truths", () => {
  it("the knee implant complication rate over 12 months: near the crude rate (not pulled to 0 by event-free studies), planted 0.045 inside its interval, and the endpoint reports it", async () => {
    const studies = await studiesOf("knee_implant", "complication_rate", 12)
    const crude = studies.reduce((a, s) => a + s.events, 0) / studies.reduce((a, s) => a + s.n, 0)
    const p = await pooled("knee_implant", "complication_rate", 12)
    expect(studies.some((s) => s.events === 0)).toBe(true)
    expect(p.estimate / crude).toBeGreaterThan(0.85)
    expect(p.estimate / crude).toBeLessThan(1.15)
    expect(p.ciLow).toBeLessThan(0.045)
    expect(p.ciHigh).toBeGreaterThan(0.045)
    const { body, status } = await post({ device_category: "knee_implant", outcome_metrics: ["complication_rate"], time_period: "12_months" })
    expect(status).toBe(200)
    // The server applies the default minimum cell size (11): a rate resting on 1–10 events (or
    // non-events) is withheld, else it is the pooled estimate.
    const events = studies.reduce((a, s) => a + s.events, 0)
    const n = studies.reduce((a, s) => a + s.n, 0)
    const small = (x: number) => x >= 1 && x < 11
    const withheld = small(events) || small(n - events)
    expect(body.outcomes.complication_rate).toBe(withheld ? null : Math.round(p.estimate * 10_000) / 10_000)
    expect(body.suppressed ?? []).toEqual(withheld ? ["/outcomes/complication_rate"] : [])
  })

  it("every device × rate metric × period: the interval inside [0, 1], the pooled rate not pulled towards 0, and about 95 % of intervals cover the planted rate", async () => {
    const r = await Effect.runPromise(deviceCoverageOnData(fixture.kernels, fixture.data, [12, 24, 36]))
    console.log(`device outcomes, 30,000 patients: ${r.covered} of ${r.total} pooled 95 % intervals (24 device × rate metrics × 12/24/36 months) cover the planted rate (${(r.covered / r.total * 100).toFixed(1)} %); pooled / crude rate averages ${r.meanRatioToCrude.toFixed(3)}`)
    expect(r.intervalsInsideUnit).toBe(true)
    expect(r.total).toBe(72)
    // 72 intervals at 95 %: 68.4 expected, SD 1.8.
    expect(r.covered).toBeGreaterThanOrEqual(63)
    // The pooled rate is the median study's rate: below the crude rate (which the larger studies
    // dominate) when rates vary, by about 10 % here; inverse-variance pooling of x/n gave about 0.5.
    expect(r.meanRatioToCrude).toBeGreaterThan(0.8)
    expect(r.meanRatioToCrude).toBeLessThan(1.1)
  })

  it("under the generator's own process (fresh study rates per seed, registries of 12-month and 36-month size), 95 % intervals cover the planted rate at the nominal rate and the pooled rate is nearly unbiased", () => {
    const r = deviceCoverageSimulated(Array.from({ length: 8 }, (_, i) => i + 1), [18, 55])
    console.log(`device outcomes, simulated under the generator: ${r.covered} of ${r.total} pooled 95 % intervals cover the planted rate (${(r.covered / r.total * 100).toFixed(1)} %); mean relative error of the pooled rate ${(r.meanRelativeError * 100).toFixed(1)} %`)
    expect(r.total).toBe(384)
    // Binomial band around 95 % for 384 intervals (SD 1.1 points): 91.5–98.5 %.
    expect(r.covered / r.total).toBeGreaterThan(0.915)
    expect(r.covered / r.total).toBeLessThan(0.985)
    expect(Math.abs(r.meanRelativeError)).toBeLessThan(0.1)
  })
})

describe("binomialNormal", () => {
  it("a single study is the binomial likelihood: x/n and its profile (Wilks) interval", () => {
    const p = binomialNormal([{ events: 5, n: 20 }])
    expect(p.estimate).toBeCloseTo(0.25, 8)
    expect(p.tau).toBe(0)
    // Likelihood-ratio interval of 5/20: where 5 log p + 15 log(1 − p) is 1.92 below its maximum.
    const ll = (q: number) => 5 * Math.log(q) + 15 * Math.log(1 - q)
    expect(ll(0.25) - ll(p.ciLow)).toBeCloseTo(1.9207, 3)
    expect(ll(0.25) - ll(p.ciHigh)).toBeCloseTo(1.9207, 3)
  })
  it("agreeing studies: τ = 0 and the pooled rate is the crude one", () => {
    const p = fitBinomialNormal([{ events: 10, n: 200 }, { events: 10, n: 200 }, { events: 10, n: 200 }])
    expect(p.tau).toBe(0)
    expect(p.estimate).toBeCloseTo(0.05, 6)
  })
  it("heterogeneous studies: τ > 0 and a wider interval than pooling them as one", () => {
    const counts = [{ events: 30, n: 500 }, { events: 80, n: 600 }, { events: 10, n: 400 }]
    const p = binomialNormal(counts)
    const one = binomialNormal([{ events: 120, n: 1500 }])
    expect(p.tau).toBeGreaterThan(0.3)
    expect(p.ciHigh - p.ciLow).toBeGreaterThan(3 * (one.ciHigh - one.ciLow))
  })
  it("no events anywhere: 0 with an interval from 0 to a positive bound; events everywhere: 1", () => {
    const none = binomialNormal([{ events: 0, n: 20 }, { events: 0, n: 18 }])
    expect(none.estimate).toBe(0)
    expect(none.ciLow).toBe(0)
    expect(none.ciHigh).toBeGreaterThan(0.05)
    expect(none.ciHigh).toBeLessThan(0.2)
    const all = binomialNormal([{ events: 20, n: 20 }, { events: 18, n: 18 }])
    expect(all.estimate).toBe(1)
    expect(all.ciHigh).toBe(1)
    expect(all.ciLow).toBeCloseTo(1 - none.ciHigh, 6)
  })
})

/**
 * The binomial-normal log-likelihood (without binomial coefficients) integrated apart from the
 * service: the trapezoid rule on u ∈ [−9, 9] with step 0.02, in log-sum-exp form (its error on these
 * integrands, analytic in a strip around the real line, is far below 1e−9).
 */
const referenceLogLik = (studies: ReadonlyArray<StudyCount>, mu: number, tau: number): number => {
  let total = 0
  for (const { events: x, n } of studies) {
    const logs: Array<number> = []
    let top = -Infinity
    for (let i = -450; i <= 450; i++) {
      const u = i * 0.02
      const eta = mu + tau * u
      const softplus = eta > 0 ? eta + Math.log1p(Math.exp(-eta)) : Math.log1p(Math.exp(eta))
      const v = x * eta - n * softplus - (u * u) / 2
      logs.push(v)
      if (v > top) top = v
    }
    total += top + Math.log(logs.reduce((a, v) => a + Math.exp(v - top), 0) * 0.02) - 0.5 * Math.log(2 * Math.PI)
  }
  return total
}

/** The best reference log-likelihood on a grid over (μ, τ ∈ [0, 4]) around `at`: ±`reach` in steps of `step`. */
const gridBest = (studies: ReadonlyArray<StudyCount>, at: { readonly mu: number; readonly tau: number }, reach: number, step: number) => {
  let best = -Infinity
  const steps = Math.round(reach / step)
  for (let i = -steps; i <= steps; i++) {
    for (let j = -steps; j <= steps; j++) {
      const tau = at.tau + j * step
      if (tau < 0 || tau > 4) continue
      best = Math.max(best, referenceLogLik(studies, at.mu + i * step, tau))
    }
  }
  return best
}

/** The fit is the maximum: its reference log-likelihood is at least that of every point of a coarse grid over the whole range and a fine one around it. */
const expectAtMaximum = (studies: ReadonlyArray<StudyCount>, fit: BinomialNormalFit, wide: boolean) => {
  const atFit = referenceLogLik(studies, fit.mu, fit.tau)
  expect(fit.logLik).toBeCloseTo(atFit, 6)
  if (wide) expect(atFit).toBeGreaterThanOrEqual(gridBest(studies, { mu: -8, tau: 2 }, 8, 0.2) - 1e-9)
  expect(atFit).toBeGreaterThanOrEqual(wide ? gridBest(studies, fit, 0.1, 0.005) - 1e-9 : gridBest(studies, fit, 0.05, 0.01) - 1e-9)
}

const of = (events: ReadonlyArray<number>, n: number | ReadonlyArray<number>): Array<StudyCount> =>
  events.map((x, i) => ({ events: x, n: typeof n === "number" ? n : n[i]! }))

describe("binomialNormal at its maximum when studies disagree", () => {
  // Maximum-likelihood values computed independently (adaptive Gauss–Hermite quadrature and direct
  // numerical integration agree), with τ restricted to [0, 4] as documented.
  it.each([
    ["cochlear implant revisions over 36 months (the default dataset)", of([0, 2, 0, 0, 0, 0, 0, 0], [3, 5, 2, 6, 5, 4, 2, 7]), 0.0070, 2.54],
    ["0, 0, 1, 2, 5, 10, 20, 30 of 50 each", of([0, 0, 1, 2, 5, 10, 20, 30], 50), 0.0651, 2.07],
    ["0, 0, 0, 1, 1, 3, 9, 27 of 50 each", of([0, 0, 0, 1, 1, 3, 9, 27], 50), 0.0229, 2.27],
    ["seven studies 0 of 20, one 10 of 20 (τ at its bound)", of([0, 0, 0, 0, 0, 0, 0, 10], 20), 0.0004, 4]
  ])("%s: expit(μ̂) is the ML rate to 4 decimals, at a log-likelihood no grid point beats", (_, studies, rate, tau) => {
    const fit = fitBinomialNormal(studies)
    expect(Math.round(fit.estimate * 10_000) / 10_000).toBe(rate)
    expect(Math.abs(fit.tau - tau)).toBeLessThan(0.01)
    expectAtMaximum(studies, fit, true)
    const interval = binomialNormal(studies)
    expect(interval.ciLow).toBeLessThan(fit.estimate)
    expect(interval.ciHigh).toBeGreaterThan(fit.estimate)
  })

  it("every device × rate metric × period of the data: the endpoint (small-cell rule off) answers the fit, and the fit is the maximum", async () => {
    const open = await startServer({ dataDir: fixture.server.dataDir, env: { HCC_MIN_CELL_SIZE: "1" } })
    try {
      await waitReady(open)
      let checked = 0
      for (const months of [12, 24, 36]) {
        for (const device of [...new Set(RATE_PAIRS.map((p) => p.device))]) {
          const metrics = RATE_PAIRS.filter((p) => p.device === device).map((p) => p.metric)
          const res = await call(open, "/v1/device-outcomes", { body: { device_category: device, outcome_metrics: metrics, time_period: `${months}_months` } })
          const body = (await res.json()) as { outcomes: Record<string, number> }
          for (const metric of metrics) {
            const studies = (await studiesOf(device, metric, months)).map((s) => ({ events: s.events, n: s.n }))
            const fit = fitBinomialNormal(studies)
            expect(body.outcomes[metric]).toBe(Math.round(fit.estimate * 10_000) / 10_000)
            if (Number.isFinite(fit.mu)) expectAtMaximum(studies, fit, false)
            checked++
          }
        }
      }
      expect(checked).toBe(72)
    } finally {
      await open.stop()
    }
  })
})

describe("derSimonianLaird (mean scores)", () => {
  it("matches a hand-worked example", () => {
    // y = 0.1, 0.3; v = 0.01, 0.01 → w = 100 each, fixed 0.2, Q = 2, C = 100, τ² = 0.01;
    // random weights 50 each → pooled 0.2, SE = √(1/100) = 0.1.
    const p = derSimonianLaird([{ estimate: 0.1, variance: 0.01 }, { estimate: 0.3, variance: 0.01 }])
    expect(p.tau2).toBeCloseTo(0.01, 12)
    expect(p.estimate).toBeCloseTo(0.2, 12)
    expect(p.se).toBeCloseTo(0.1, 12)
    expect(p.q).toBeCloseTo(2, 12)
  })
  it("has τ² = 0 and is the inverse-variance mean when the studies agree", () => {
    const p = derSimonianLaird([{ estimate: 0.2, variance: 0.01 }, { estimate: 0.2, variance: 0.04 }])
    expect(p.tau2).toBe(0)
    expect(p.estimate).toBeCloseTo(0.2, 12)
    expect(p.se).toBeCloseTo(Math.sqrt(1 / (100 + 25)), 12)
  })
})

describe("answers", () => {
  it("maps every requested metric, in request order, and repeats itself", async () => {
    const request = { device_category: "hip_implant", outcome_metrics: ["quality_of_life", "revision_rate", "pain_reduction"] }
    const a = await post(request)
    expect(a.status).toBe(200)
    expect(Object.keys(a.body.outcomes)).toEqual(["quality_of_life", "revision_rate", "pain_reduction"])
    expect(a.body.outcomes.quality_of_life).toBeGreaterThan(0.6)
    expect(a.body.outcomes.quality_of_life).toBeLessThan(0.9)
    expect(a.body.outcomes.pain_reduction).toBeGreaterThan(4)
    expect(a.body.hcc_cost).toBe(3)
    expect((await post(request)).body).toEqual(a.body)
  })
  it("the default time_period is 12 months: fewer implants than over 36", async () => {
    const twelve = await post({ device_category: "knee_implant", outcome_metrics: ["complication_rate"] })
    const explicit = await post({ device_category: "knee_implant", outcome_metrics: ["complication_rate"], time_period: "12_months" })
    const all = await post({ device_category: "knee_implant", outcome_metrics: ["complication_rate"], time_period: "36_months" })
    expect(twelve.body).toEqual(explicit.body)
    expect(twelve.body.sample_size).toBeLessThan(all.body.sample_size)
    // Implant dates are uniform over the 36 months: about a third fall in the last 12.
    expect(twelve.body.sample_size / all.body.sample_size).toBeGreaterThan(0.25)
    expect(twelve.body.sample_size / all.body.sample_size).toBeLessThan(0.42)
  })
})

describe("errors", () => {
  it("an unknown metric is 400 unknown_metric naming each path and the known metrics", async () => {
    const { body, status } = await post({ device_category: "knee_implant", outcome_metrics: ["complication_rate", "survival", "cost"] })
    expect(status).toBe(400)
    expect(body.code).toBe("unknown_metric")
    expect(body.errors.map((e: any) => e.path)).toEqual(["/outcome_metrics/1", "/outcome_metrics/2"])
    expect(body.detail).toContain("complication_rate")
  })
  it("an unknown device is 422 unknown_device with the closest names", async () => {
    const { body, status } = await post({ device_category: "knee_implnt", outcome_metrics: ["complication_rate"] })
    expect(status).toBe(422)
    expect(body.code).toBe("unknown_device")
    expect(body.suggestions[0]).toBe("knee_implant")
  })
  it.each([
    [{ device_category: "knee_implant", outcome_metrics: [] }, "/outcome_metrics"],
    [{ device_category: "knee_implant", outcome_metrics: ["complication_rate"], time_period: "0_months" }, "/time_period"],
    [{ device_category: "knee_implant", outcome_metrics: ["complication_rate"], time_period: "12 months" }, "/time_period"],
    [{ outcome_metrics: ["complication_rate"] }, "/device_category"]
  ])("400 names the path: %j", async (request, path) => {
    const { body, status } = await post(request)
    expect(status).toBe(400)
    expect(body.errors.map((e: any) => e.path)).toContain(path)
  })
})
