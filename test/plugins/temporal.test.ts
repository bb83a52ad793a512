/** POST /v1/temporal over real HTTP: model selection, continuations, urgency, and every 400. */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RULE_NAMES } from "../../src/kernels/reference/decayRules.ts"
import { call, startServer, type TestServer } from "../support/server.ts"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(async () => {
  await server.stop()
})

const post = async (body: unknown) => {
  const res = await call(server, "/v1/temporal", { body })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}
const r6 = (x: number) => Math.round(x * 1e6) / 1e6

describe("model selection and prediction", () => {
  it("a clean exponential plateau selects exponential_plateau and predicts its continuation", async () => {
    const f = (t: number) => 3.5 + 4 * Math.exp(-0.2 * t)
    const { body, status } = await post({ patient_axes: { NM: Array.from({ length: 18 }, (_, t) => r6(f(t))) }, predict_ahead: 8 })
    expect(status).toBe(200)
    expect(body.decay_model).toBe("exponential_plateau")
    expect(body.predicted_trajectory.NM).toHaveLength(8)
    body.predicted_trajectory.NM.forEach((v: number, i: number) => expect(Math.abs(v - f(17 + i + 1))).toBeLessThan(0.005))
    expect(body.hcc_cost).toBe(7.5)
  })
  it("a clean linear decline selects linear and continues the line", async () => {
    const f = (t: number) => 8.4 - 0.15 * t
    const { body } = await post({ patient_axes: { PO: Array.from({ length: 20 }, (_, t) => r6(f(t))) }, predict_ahead: 5 })
    expect(body.decay_model).toBe("linear")
    expect(body.predicted_trajectory.PO).toEqual([20, 21, 22, 23, 24].map((t) => Math.round(f(t) * 1000) / 1000))
  })
  it("a flat series selects stable and stays flat", async () => {
    const { body } = await post({ patient_axes: { ER: Array(12).fill(6.2), RS: Array(12).fill(7.8) } })
    expect(body.decay_model).toBe("stable")
    expect(body.predicted_trajectory).toEqual({ ER: Array(6).fill(6.2), RS: Array(6).fill(7.8) })
    expect(body.intervention_urgency).toBe("low")
    expect(body.decay_rules_triggered).toEqual([])
  })
  it("defaults: monthly, 6 intervals; keys in canonical order; only the requested axes", async () => {
    const { body } = await post({ patient_axes: { NM: [6, 5.8, 5.6, 5.5], PO: [7, 7, 7] } })
    expect(Object.keys(body.predicted_trajectory)).toEqual(["PO", "NM"])
    expect(body.predicted_trajectory.NM).toHaveLength(6)
    expect(Object.keys(body).sort()).toEqual(["decay_model", "decay_rules_triggered", "hcc_cost", "intervention_urgency", "predicted_trajectory"])
  })
})

describe("rules and urgency", () => {
  it("reports fired rules sorted by number, and critical urgency for an axis below 3", async () => {
    const { body } = await post({ patient_axes: { PO: [7, 6.5, 6, 5, 4, 3.5, 3, 2.8], NM: [6, 5.5, 5, 4.5, 4, 3.8, 3.5, 3.2] } })
    expect(body.intervention_urgency).toBe("critical")
    const rules: Array<string> = body.decay_rules_triggered
    expect(rules).toContain("rule_03_below_critical")
    expect(rules).toContain("rule_16_somatic_pair_decline")
    expect(rules).toEqual([...rules].sort())
    for (const r of rules) expect(RULE_NAMES).toContain(r)
  })
  it("high urgency when the prediction crosses 3 within 90 days", async () => {
    // 3.6 → 3.2, 2.8, 2.4: below 3 at the 2nd month, but never below 2 (that would be critical)
    const { body } = await post({ patient_axes: { PO: [6.8, 6.4, 6, 5.6, 5.2, 4.8, 4.4, 4, 3.6] }, interval: "monthly", predict_ahead: 3 })
    expect(body.intervention_urgency).toBe("high")
  })
  it("the interval changes the horizon: the same series sampled yearly is less urgent", async () => {
    const series = [9, 8.9, 8.8, 8.7, 8.6, 8.5, 8.4, 8.3, 8.2, 8.1, 8.0, 7.9]
    const monthly = await post({ patient_axes: { SC: series }, interval: "monthly" })
    expect(monthly.body.predicted_trajectory).toEqual((await post({ patient_axes: { SC: series }, interval: "yearly" })).body.predicted_trajectory)
    expect(["low", "moderate"]).toContain(monthly.body.intervention_urgency)
  })
  it("the same request twice gives the same body", async () => {
    const req = { patient_axes: { PO: [7.2, 7.1, 7.0, 6.8, 6.7, 6.6], TA: [5, 5.5, 5, 5.5, 5, 5.5] }, predict_ahead: 3 }
    expect((await post(req)).body).toEqual((await post(req)).body)
  })
})

describe("400 with the path", () => {
  const cases: ReadonlyArray<readonly [string, unknown, string, string]> = [
    ["a 2-point series", { patient_axes: { PO: [5, 4] } }, "/patient_axes/PO", "invalid_request"],
    ["1001 points", { patient_axes: { PO: Array(1001).fill(5) } }, "/patient_axes/PO", "invalid_request"],
    ["an unknown axis", { patient_axes: { XY: [5, 4, 3] } }, "/patient_axes/XY", "unknown_field"],
    ["a value of 11", { patient_axes: { PO: [5, 11, 3] } }, "/patient_axes/PO/1", "invalid_request"],
    ["a negative value", { patient_axes: { PO: [5, -1, 3] } }, "/patient_axes/PO/1", "invalid_request"],
    ["predict_ahead 0", { patient_axes: { PO: [5, 4, 3] }, predict_ahead: 0 }, "/predict_ahead", "invalid_request"],
    ["predict_ahead 61", { patient_axes: { PO: [5, 4, 3] }, predict_ahead: 61 }, "/predict_ahead", "invalid_request"],
    ["a fractional predict_ahead", { patient_axes: { PO: [5, 4, 3] }, predict_ahead: 2.5 }, "/predict_ahead", "invalid_request"],
    ["an unknown interval", { patient_axes: { PO: [5, 4, 3] }, interval: "hourly" }, "/interval", "invalid_request"],
    ["an unknown field", { patient_axes: { PO: [5, 4, 3] }, horizon: 3 }, "/horizon", "unknown_field"],
    ["no axes", { patient_axes: {} }, "/patient_axes", "invalid_request"],
    ["no patient_axes", { predict_ahead: 3 }, "/patient_axes", "invalid_request"]
  ]
  it.each(cases)("%s", async (_name, body, path, code) => {
    const res = await post(body)
    expect(res.status).toBe(400)
    expect(res.body.code).toBe(code)
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path)
  })
  it("an unknown field names the field it most likely meant, and only a near one", async () => {
    const typo = await post({ patient_axes: { PO: [5, 4, 3] }, predict_ahed: 3 })
    expect(typo.status).toBe(400)
    expect(typo.body.code).toBe("unknown_field")
    expect(typo.body.errors).toEqual([{ path: "/predict_ahed", message: "Unknown field: this endpoint does not define it; did you mean 'predict_ahead'?" }])
    const far = await post({ patient_axes: { PO: [5, 4, 3] }, colour: "blue" })
    expect(far.body.errors[0].message).toBe("Unknown field: this endpoint does not define it")
  })
  it("lists the allowed intervals in the message", async () => {
    const res = await post({ patient_axes: { PO: [5, 4, 3] }, interval: "hourly" })
    expect(JSON.stringify(res.body.errors)).toContain("monthly")
  })
})
