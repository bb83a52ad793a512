/**
 * The view representation's data (src/plugin/viewData.ts) and the charts drawn from it: who asks
 * for it (Accept), and device-outcomes' forest plot — each study's interval, the pooled diamond at
 * the answer's value, τ² and I² stated — checked against the formulas and drawn with `vega`.
 */
import { describe, expect, it } from "vitest"
import { forestRows, wilson } from "../../plugins/device-outcomes/forest.ts"
import { derSimonianLaird, poolMetric, type StudyEstimate } from "../../plugins/device-outcomes/pooling.ts"
import { contract as device } from "../../plugins/device-outcomes/contract.ts"
import { wantsView } from "../../src/plugin/viewData.ts"
import { type DrawnItem, drawView } from "../../src/views/render.ts"

const marks = (items: ReadonlyArray<DrawnItem>, marktype: string) => items.filter((i) => i.role === "mark" && i.marktype === marktype)

describe("who asks for the view representation", () => {
  it.each([
    ["application/vnd.hcc.view+json", true],
    ["application/vnd.hcc.view+json, application/json;q=0.9", true],
    ["application/json, application/vnd.hcc.view+json;q=0.5", false],
    ["application/vnd.hcc.view+json;q=0", false],
    ["*/*", false],
    ["application/json", false],
    [undefined, false]
  ] as const)("Accept: %s → %s", (accept, expected) => {
    expect(wantsView(accept)).toBe(expected)
  })
})

const rate = (study: string, events: number, n: number): StudyEstimate => ({ study, n, events, estimate: events / n, variance: (events / n) * (1 - events / n) / n })

describe("the device forest plot's rows", () => {
  it("gives a study's rate the Wilson score interval (Wilson 1927)", () => {
    const [lo, hi] = wilson(5, 100)
    expect(lo).toBeCloseTo(0.021544, 6)
    expect(hi).toBeCloseTo(0.11175, 5)
    // No events: the interval starts at 0 and still has a width.
    expect(wilson(0, 20)[0]).toBe(0)
    expect(wilson(0, 20)[1]).toBeCloseTo(0.161125, 6)
  })

  it("ends a rate's rows with the pooled estimate the answer gives, its interval, τ² and I²", () => {
    const studies = [rate("A", 12, 150), rate("B", 30, 160), rate("C", 9, 140), rate("D", 20, 155)]
    const rows = forestRows("complication_rate", studies)
    expect(rows.map((r) => r.label)).toEqual(["A", "B", "C", "D", "pooled"])
    const pooled = rows.at(-1)!
    const model = poolMetric("complication_rate", studies)
    expect(pooled.estimate).toBe(Math.round(poolMetric("complication_rate", studies, false).estimate * 1e4) / 1e4)
    expect(pooled.ci_low).toBe(Math.round(model.ciLow * 1e4) / 1e4)
    expect(pooled.ci_high).toBe(Math.round(model.ciHigh * 1e4) / 1e4)
    expect(pooled.k).toBe(4)
    expect(pooled.n).toBe(605)
    // I² from Cochran's Q on the logit scale with 0.5 added to each cell, by hand.
    const y = studies.map((s) => Math.log((s.events + 0.5) / (s.n - s.events + 0.5)))
    const v = studies.map((s) => 1 / (s.events + 0.5) + 1 / (s.n - s.events + 0.5))
    const w = v.map((x) => 1 / x)
    const mean = y.reduce((a, yi, i) => a + w[i]! * yi, 0) / w.reduce((a, b) => a + b, 0)
    const q = y.reduce((a, yi, i) => a + w[i]! * (yi - mean) ** 2, 0)
    expect(pooled.i2).toBe(Math.round(Math.max(0, (q - 3) / q) * 1e4) / 1e4)
    expect(pooled.i2!).toBeGreaterThan(0.5)
    expect(pooled.tau2!).toBeGreaterThan(0)
    for (const [i, s] of studies.entries()) {
      const [lo, hi] = wilson(s.events, s.n)
      expect([rows[i]!.estimate, rows[i]!.ci_low, rows[i]!.ci_high]).toEqual([s.estimate, lo, hi].map((x) => Math.round(x * 1e4) / 1e4))
    }
  })

  it("gives a score's studies ± 1.96 standard errors and the DerSimonian–Laird pooled interval", () => {
    const studies: Array<StudyEstimate> = [
      { study: "A", n: 40, events: Number.NaN, estimate: 7.2, variance: 0.04 },
      { study: "B", n: 55, events: Number.NaN, estimate: 7.9, variance: 0.03 },
      { study: "C", n: 38, events: Number.NaN, estimate: 7.5, variance: 0.05 }
    ]
    const rows = forestRows("patient_satisfaction", studies)
    const dl = derSimonianLaird(studies)
    expect(rows[0]!.ci_low).toBe(Math.round((7.2 - 1.959963984540054 * 0.2) * 1e4) / 1e4)
    expect(rows.at(-1)).toMatchObject({
      kind: "pooled",
      estimate: Math.round(dl.estimate * 1e4) / 1e4,
      ci_low: Math.round(dl.ciLow * 1e4) / 1e4,
      tau2: Math.round(dl.tau2 * 1e4) / 1e4,
      i2: Math.round(Math.max(0, (dl.q - 2) / dl.q) * 1e4) / 1e4
    })
  })
})

describe("the device forest plot", () => {
  it("draws one interval per study and per pooled row, a square per study, the diamond at the pooled value, τ² and I² in its label", async () => {
    const rates = [rate("S1", 12, 150), rate("S2", 30, 160), rate("S3", 9, 140)]
    const scores: Array<StudyEstimate> = [
      { study: "S1", n: 40, events: Number.NaN, estimate: 7.2, variance: 0.04 },
      { study: "S2", n: 55, events: Number.NaN, estimate: 7.9, variance: 0.03 }
    ]
    const forest = [...forestRows("complication_rate", rates), ...forestRows("patient_satisfaction", scores)]
    const pooledRate = forest[3]!
    const pooledScore = forest[6]!
    const request = { device_category: "knee_implant", outcome_metrics: ["complication_rate", "patient_satisfaction"], time_period: "36_months" }
    const answer = {
      device_category: "knee_implant",
      studies_analyzed: 3,
      outcomes: { complication_rate: pooledRate.estimate, patient_satisfaction: pooledScore.estimate },
      sample_size: 450,
      view_data: { forest },
      hcc_cost: 3
    }
    const { items } = await drawView(device.view!, request, answer)
    expect(marks(items, "rule").map((r) => [r.datum!.metric, r.datum!.label])).toEqual(forest.map((r) => [r.metric, r.label]))
    const symbols = marks(items, "symbol")
    expect(symbols.filter((s) => s.datum!.kind === "study").map((s) => [s.datum!.label, s.datum!.study_estimate])).toEqual(forest.filter((r) => r.kind === "study").map((r) => [r.label, r.estimate]))
    expect(symbols.filter((s) => s.datum!.kind === "pooled").map((s) => s.datum!.pooled_estimate)).toEqual([answer.outcomes.complication_rate, answer.outcomes.patient_satisfaction])
    const labels = items.filter((i) => i.role === "axis-label").map((i) => i.text)
    expect(labels).toContain(`Pooled (k = 3): τ² ${pooledRate.tau2!.toFixed(3)}, I² ${Math.round(pooledRate.i2! * 100)}%`)
    expect(labels).toContain("S2 (n = 160)")
  })

  it("says where a study's estimate is withheld, drawing no square there", async () => {
    const forest = forestRows("complication_rate", [rate("S1", 12, 150), rate("S2", 30, 160)])
    const withheld = forest.map((r, i) => (i === 0 ? { ...r, estimate: null, ci_low: null, ci_high: null } : r))
    const answer = { device_category: "hip_implant", studies_analyzed: 2, outcomes: { complication_rate: forest[2]!.estimate }, sample_size: 310, view_data: { forest: withheld } }
    const { items } = await drawView(device.view!, { device_category: "hip_implant", outcome_metrics: ["complication_rate"] }, answer)
    expect(marks(items, "symbol").filter((s) => s.datum!.kind === "study").map((s) => s.datum!.label)).toEqual(["S2"])
    expect(marks(items, "rule").map((r) => r.datum!.label)).toEqual(["S2", "pooled"])
    expect(marks(items, "text").filter((t) => t.text !== "").map((t) => [t.datum!.label, t.text])).toEqual([["S1", "withheld (small cell)"]])
  })
})
