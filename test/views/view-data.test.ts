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

describe("the device forest plot's weights, heterogeneity test and prediction interval", () => {
  it("weights each study by its share of 1/(v + τ²) on the pooled scale; Q's p-value from χ²(k − 1); the prediction interval with t(k − 2)", () => {
    const scores: Array<StudyEstimate> = [
      { study: "A", n: 40, events: Number.NaN, estimate: 7.2, variance: 0.04 },
      { study: "B", n: 55, events: Number.NaN, estimate: 7.9, variance: 0.03 },
      { study: "C", n: 38, events: Number.NaN, estimate: 7.5, variance: 0.05 }
    ]
    const rows = forestRows("patient_satisfaction", scores)
    const dl = derSimonianLaird(scores)
    const w = scores.map((s) => 1 / (s.variance + dl.tau2))
    const total = w.reduce((a, b) => a + b, 0)
    expect(rows.slice(0, 3).map((r) => r.weight)).toEqual(w.map((x) => Math.round((x / total) * 1e4) / 1e4))
    const pooled = rows[3]!
    expect(pooled.weight).toBe(1)
    // χ² with 2 degrees of freedom: P(X ≥ q) = e^(−q/2).
    expect(pooled.q_p).toBe(Math.round(Math.exp(-dl.q / 2) * 1e4) / 1e4)
    // t with 1 degree of freedom at 97.5 %: tan(0.475π) = 12.7062.
    const half = Math.tan(0.475 * Math.PI) * Math.sqrt(dl.tau2 + dl.se * dl.se)
    expect(pooled.pi_low).toBe(Math.round((dl.estimate - half) * 1e4) / 1e4)
    expect(pooled.pi_high).toBe(Math.round((dl.estimate + half) * 1e4) / 1e4)
  })

  it("a rate: weights from the logit variances with the binomial-normal τ²; the prediction interval on the logit scale, back-transformed; none below 3 studies", () => {
    const studies = [rate("A", 12, 150), rate("B", 30, 160), rate("C", 9, 140), rate("D", 20, 155)]
    const rows = forestRows("complication_rate", studies)
    const pooled = rows.at(-1)!
    const tau2 = pooled.tau2!
    const v = studies.map((s) => 1 / (s.events + 0.5) + 1 / (s.n - s.events + 0.5))
    const w = v.map((x) => 1 / (x + tau2))
    const total = w.reduce((a, b) => a + b, 0)
    rows.slice(0, 4).forEach((r, i) => expect(r.weight!).toBeCloseTo(w[i]! / total, 3))
    expect(pooled.pi_low!).toBeLessThan(pooled.ci_low!)
    expect(pooled.pi_high!).toBeGreaterThan(pooled.ci_high!)
    expect(pooled.pi_low!).toBeGreaterThan(0)
    expect(pooled.pi_high!).toBeLessThan(1)
    const two = forestRows("complication_rate", studies.slice(0, 2)).at(-1)!
    expect([two.pi_low, two.pi_high]).toEqual([null, null])
  })
})

describe("the device forest plot", () => {
  const rates = [rate("S1", 12, 150), rate("S2", 30, 160), rate("S3", 9, 140)]
  const scores: Array<StudyEstimate> = [
    { study: "S1", n: 40, events: Number.NaN, estimate: 7.2, variance: 0.04 },
    { study: "S2", n: 55, events: Number.NaN, estimate: 7.9, variance: 0.03 }
  ]
  const forest = [...forestRows("complication_rate", rates), ...forestRows("patient_satisfaction", scores)]
  const request = { device_category: "knee_implant", outcome_metrics: ["complication_rate", "patient_satisfaction"], time_period: "36_months" }
  const answer = { device_category: "knee_implant", studies_analyzed: 3, outcomes: {}, sample_size: 450, view_data: { forest }, hcc_cost: 3 }

  it("draws each pooled estimate as one diamond from the interval's low end to its high end, in per cent for a rate", async () => {
    const { items } = await drawView(device.view!, request, answer)
    const trail = marks(items, "trail")
    expect(trail.map((p) => [p.datum!.metric, p.datum!.end, p.datum!.at, p.size])).toEqual([
      ["complication_rate", "lo", forest[3]!.ci_low! * 100, 0],
      ["complication_rate", "x", forest[3]!.estimate! * 100, 14],
      ["complication_rate", "hi", forest[3]!.ci_high! * 100, 0],
      ["patient_satisfaction", "lo", forest[6]!.ci_low, 0],
      ["patient_satisfaction", "x", forest[6]!.estimate, 14],
      ["patient_satisfaction", "hi", forest[6]!.ci_high, 0]
    ])
    // Left to right within each metric: the interval's ends either side of the estimate.
    for (const m of [trail.slice(0, 3), trail.slice(3)]) expect(m[0]!.x! < m[1]!.x! && m[1]!.x! < m[2]!.x!).toBe(true)
  })

  it("sizes each study's square by its weight (areas in the weights' ratio) and writes the estimate [95 % CI] and weight columns", async () => {
    const { items } = await drawView(device.view!, request, answer)
    const squares = marks(items, "symbol")
    expect(squares.map((q) => q.datum!.label)).toEqual(["S1", "S2", "S3", "S1", "S2"])
    const ratios = squares.map((q) => q.size! / (q.datum!.weight as number))
    for (const r of ratios) expect(r).toBeCloseTo(ratios[0]!, 6)
    const texts = marks(items, "text").map((t) => t.text)
    expect(texts.filter((t) => t === "Estimate [95 % CI]")).toHaveLength(2)
    expect(texts.filter((t) => t === "Weight")).toHaveLength(2)
    const s1 = forest[0]!
    expect(texts).toContain(`${(s1.estimate! * 100).toFixed(1)} [${(s1.ci_low! * 100).toFixed(1)}, ${(s1.ci_high! * 100).toFixed(1)}]`)
    expect(texts).toContain(`${(s1.weight! * 100).toFixed(1)} %`)
    expect(texts).toContain("100.0 %")
    const labels = items.filter((i) => i.role === "axis-label").map((i) => i.text)
    expect(labels).toEqual(expect.arrayContaining(["Study S2 (n = 160)", "Pooled (3 studies)", "Pooled (2 studies)"]))
    const headers = items.filter((i) => i.role === "row-header" || i.role === "row-title" || (typeof i.text === "string" && i.text.includes("heterogeneity"))).map((i) => i.text)
    const p = forest[3]!
    expect(headers).toContain(`Complication rate (% of implants) — heterogeneity: τ² = ${p.tau2!.toFixed(3)}, I² = ${Math.round(p.i2! * 100)} %, Q = ${p.q!.toFixed(2)} (p = ${p.q_p!.toFixed(3)}); 95 % prediction interval ${(p.pi_low! * 100).toFixed(1)} to ${(p.pi_high! * 100).toFixed(1)}`)
    // A p-value under 0.001 is written so, never "p = 0.000".
    const tiny = answer.view_data.forest.map((r: any) => (r.kind === "pooled" ? { ...r, q_p: 0.00002 } : r))
    const again = (await drawView(device.view!, request, { ...answer, view_data: { forest: tiny } })).items
    expect(again.filter((i) => typeof i.text === "string" && i.text.includes("(p < 0.001)"))).toHaveLength(2)
  })

  it("says where a study's estimate is withheld, drawing no square there", async () => {
    const two = forestRows("complication_rate", [rate("S1", 12, 150), rate("S2", 30, 160)])
    const withheld = two.map((r, i) => (i === 0 ? { ...r, n: null, estimate: null, ci_low: null, ci_high: null, weight: null } : r))
    const answer = { device_category: "hip_implant", studies_analyzed: 2, outcomes: { complication_rate: two[2]!.estimate }, sample_size: 310, view_data: { forest: withheld } }
    const { items } = await drawView(device.view!, { device_category: "hip_implant", outcome_metrics: ["complication_rate"] }, answer)
    expect(marks(items, "symbol").map((s) => s.datum!.label)).toEqual(["S2"])
    expect(marks(items, "rule").filter((r) => r.datum!.kind === "study").map((r) => r.datum!.label)).toEqual(["S2"])
    const row = marks(items, "text").filter((t) => t.datum?.label === "S1").map((t) => t.text)
    expect(row).toContain("withheld (small cell)")
    expect(items.filter((i) => i.role === "axis-label").map((i) => i.text)).toContain("Study S1")
  })
})
