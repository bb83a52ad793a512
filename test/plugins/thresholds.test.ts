/**
 * The score-threshold rule (src/kernels/thresholds.ts) through the endpoints: a value equal to a
 * threshold in decimal arithmetic counts as equal — cohort bounds on mean scores, the clinical
 * declining share, and the temporal decay rules — checked against exact integer-tenths arithmetic
 * on the run's generated dataset.
 */
import { describe, expect, it } from "vitest"
import { scoreReader } from "../../src/kernels/tenths.ts"
import { AXES } from "../../src/plugin/axes.ts"
import { useFixture } from "../support/fixture.ts"
import { call } from "../support/server.ts"

const fixture = useFixture()

const post = async (path: string, body: unknown) => {
  const res = await call(fixture.server, path, { body })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

/** A patient's PO scores in months [from, to) as integer tenths (exact), with their month indices. */
const tenthsOf = (p: number, from: number, to: number) => {
  const panel = fixture.data.panel
  const po = AXES.indexOf("PO")
  const score = scoreReader(panel.data)
  const out: Array<readonly [number, number]> = []
  for (let m = from; m < to; m++) {
    const x = score((po * panel.nPatients + p) * panel.nMonths + m)
    if (!Number.isNaN(x)) out.push([m, Math.round(x * 10)])
  }
  return out
}

describe("comparing scores with thresholds, through the endpoints", () => {
  it("population axes_threshold: a patient whose mean PO is exactly 6.0 meets min 6.0 and max 6.0", async () => {
    const { nMonths, nPatients } = fixture.data.panel
    let atLeast6 = 0
    let atMost6 = 0
    let exactly = 0
    for (let p = 0; p < nPatients; p++) {
      const s = tenthsOf(p, 0, nMonths)
      if (s.length === 0) continue
      const tenths = s.reduce((a, [, x]) => a + x, 0)
      if (tenths >= 60 * s.length) atLeast6++
      if (tenths <= 60 * s.length) atMost6++
      if (tenths === 60 * s.length) exactly++
    }
    expect(exactly).toBeGreaterThan(10)
    const size = async (axes_threshold: unknown) => (await post("/v1/population", { cohort_definition: { axes_threshold }, analysis_type: "trend", axes: ["PO"] })).body.cohort_size as number
    expect(await size({ PO: { min: 6.0 } })).toBe(atLeast6)
    expect(await size({ PO: { max: 6.0 } })).toBe(atMost6)
  })

  it.each([["6_months", 6], ["1_year", 12]] as const)("declining_share counts slopes below 0, not slopes that are 0 in decimal arithmetic (%s)", async (time_range, months) => {
    const { nMonths: to, nPatients } = fixture.data.panel
    let withSlope = 0
    let negative = 0
    let flat = 0
    for (let p = 0; p < nPatients; p++) {
      const s = tenthsOf(p, to - months, to)
      const n = s.length
      if (n < 3) continue
      const st = s.reduce((a, [m]) => a + m, 0)
      const sx = s.reduce((a, [, x]) => a + x, 0)
      const stx = s.reduce((a, [m, x]) => a + m * x, 0)
      withSlope++
      const numerator = n * stx - st * sx // exact: integers
      if (numerator < 0) negative++
      if (numerator === 0) flat++
    }
    expect(flat).toBeGreaterThan(20)
    const { body } = await post("/v1/clinical", { query: "Is PO declining?", axes: ["PO"], time_range })
    const share = `${(100 * negative / withSlope).toFixed(1)} %`
    expect(body.reasoning_chain.join("\n")).toContain(`declining_share=${share} (all ${share})`)
  })

  it.each([
    ["rule_10_rebound", [4.4, 4.0, 3.1, 4.1]],
    ["rule_21_ceiling_loss", [8.2, 8.0, 7.9, 7.5, 7.0, 6.7]]
  ])("temporal: %s fires on %j (exactly on its threshold)", async (rule, series) => {
    const { body, status } = await post("/v1/temporal", { patient_axes: { PO: series } })
    expect(status).toBe(200)
    expect(body.decay_rules_triggered).toContain(rule)
  })
})
