/**
 * POST /v1/device-outcomes on a generated population (30,000 patients): the pooled rate recovers the
 * planted per-study mean inside its 95 % interval, the endpoint reports exactly that pooled value,
 * and every error of the contract is there.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { derSimonianLaird, implantsInPeriod, studyEstimates } from "../../plugins/device-outcomes/pooling.ts"
import { DEVICES } from "../../src/health/truths.ts"
import { useFixture } from "../support/fixture.ts"
import { call } from "../support/server.ts"

const fixture = useFixture()

const pooled = (device: string, metric: string, months: number) =>
  Effect.runPromise(Effect.gen(function*() {
    const sel = yield* implantsInPeriod(fixture.kernels, fixture.data, fixture.data.vocabulary.device.indexOf(device), months)
    return derSimonianLaird(yield* studyEstimates(fixture.kernels, fixture.data, sel.prepared, sel.mask, metric))
  }))

const post = async (body: unknown) => {
  const res = await call(fixture.server, "/v1/device-outcomes", { body })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

describe("planted truths", () => {
  it("the knee implant complication rate: planted mean 0.045 inside the pooled 95 % CI, and the endpoint reports that pooled value", async () => {
    const knee = DEVICES.find((d) => d.device === "knee_implant")!
    const p = await pooled("knee_implant", "complication_rate", 36)
    expect(p.k).toBe(8)
    expect(p.ciLow).toBeLessThan(knee.rates.complication_rate.mean)
    expect(p.ciHigh).toBeGreaterThan(knee.rates.complication_rate.mean)
    const { body, status } = await post({ device_category: "knee_implant", outcome_metrics: ["complication_rate"], time_period: "36_months" })
    expect(status).toBe(200)
    expect(body.outcomes.complication_rate).toBe(Math.round(p.estimate * 10_000) / 10_000)
    expect(body.studies_analyzed).toBe(8)
    expect(body.sample_size).toBeGreaterThan(400)
  })

  it("covers the planted mean for most device × rate metric pairs (95 % intervals: about 1 in 20 may miss)", async () => {
    let covered = 0
    let total = 0
    for (const d of DEVICES) {
      for (const [metric, truth] of Object.entries(d.rates)) {
        const p = await pooled(d.device, metric, 36)
        total++
        if (p.ciLow <= truth.mean && truth.mean <= p.ciHigh) covered++
      }
    }
    expect(total).toBe(24)
    expect(covered).toBeGreaterThanOrEqual(20)
  })
})

describe("derSimonianLaird", () => {
  it("matches a hand-worked example", () => {
    // y = 0.1, 0.3; v = 0.01, 0.01 → w = 100 each, fixed 0.2, Q = 2, C = 100, τ² = 0.01;
    // random weights 50 each → pooled 0.2, SE = √(1/100) = 0.1.
    const p = derSimonianLaird([{ study: "a", n: 10, estimate: 0.1, variance: 0.01 }, { study: "b", n: 10, estimate: 0.3, variance: 0.01 }])
    expect(p.tau2).toBeCloseTo(0.01, 12)
    expect(p.estimate).toBeCloseTo(0.2, 12)
    expect(p.se).toBeCloseTo(0.1, 12)
    expect(p.q).toBeCloseTo(2, 12)
  })
  it("has τ² = 0 and is the inverse-variance mean when the studies agree", () => {
    const p = derSimonianLaird([{ study: "a", n: 10, estimate: 0.2, variance: 0.01 }, { study: "b", n: 10, estimate: 0.2, variance: 0.04 }])
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
