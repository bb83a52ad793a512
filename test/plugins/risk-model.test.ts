/**
 * POST /v1/risk-model on the run's generated population (30,000 patients, default seed): the
 * models are fitted once at load and recover the generator's planted coefficients; the
 * hospitalization model's held-out AUC and calibration meet the bar; the endpoint scores the
 * profile with the fitted model, never lowers a probability for a longer horizon, and reports
 * every error with its path.
 */
import * as Effect from "effect/Effect"
import fc from "fast-check"
import { beforeAll, describe, expect, it } from "vitest"
import { recommendedInterventions } from "../../plugins/risk-model/interventions.ts"
import { contributions, fitRiskModels, INPATIENT, MAX_MODEL_ROWS, probabilityWithin, profileVector, type RiskModel, type RiskModels, RISK_TYPES, sampledRows } from "../../plugins/risk-model/model.ts"
import { admissions, base, mergedStays, modelRows, observedYears } from "../../plugins/risk-model/rows.ts"
import { clusterRobustCovariance } from "../../plugins/risk-model/validation.ts"
import { parseDate } from "../../src/health/calendar.ts"
import { HOSPITALIZATION, READMISSION } from "../../src/synthetic/truths.ts"
import { AXES } from "../../src/plugin/axes.ts"
import { useFixture } from "../support/fixture.ts"
import { call } from "../support/server.ts"

const fixture = useFixture()
let models: RiskModels
beforeAll(async () => {
  models = await Effect.runPromise(fitRiskModels(fixture.kernels, fixture.data))
})

const post = async (body: unknown) => {
  const res = await call(fixture.server, "/v1/risk-model", { body })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}
const coefficient = (m: RiskModel, feature: string) => {
  const j = m.features.indexOf(feature)
  return { beta: m.beta[j]!, se: m.se[j]! }
}
const sample = {
  patient_profile: { axes_snapshot: { PO: 6.2, NM: 4.1, ER: 7.8 }, age_range: "55-64", conditions: ["type_2_diabetes", "hypertension"] },
  risk_type: "hospitalization",
  horizon: "90_days"
}

describe("the fitted models", () => {
  it("hospitalization: held-out AUC ≥ 0.75 and calibration slope within 0.8–1.2 (fitted on even ids, scored on odd)", () => {
    const v = models.get("hospitalization")!.validation
    expect(v.rows).toBeGreaterThan(10_000)
    expect(v.auc).toBeGreaterThanOrEqual(0.75)
    expect(v.calibrationSlope).toBeGreaterThanOrEqual(0.8)
    expect(v.calibrationSlope).toBeLessThanOrEqual(1.2)
  })

  it("every model beats the base rate: Brier score below prevalence × (1 − prevalence), AUC above 0.6", () => {
    for (const type of RISK_TYPES) {
      const v = models.get(type)!.validation
      const prevalence = v.events / v.rows
      expect(v.brier, type).toBeLessThan(prevalence * (1 - prevalence))
      expect(v.auc, type).toBeGreaterThan(0.6)
      expect(v.calibrationSlope, type).toBeGreaterThan(0.7)
      expect(v.calibrationSlope, type).toBeLessThan(1.3)
    }
  })

  it("recovers the planted hospitalization coefficients (age, axes, diabetes, CKD, COPD within 3 SE)", () => {
    const m = models.get("hospitalization")!
    const planted: Array<[string, number]> = [
      ["intercept", HOSPITALIZATION.intercept],
      ["age", HOSPITALIZATION.agePer10y],
      ["PO", HOSPITALIZATION.axes.PO!],
      ["NM", HOSPITALIZATION.axes.NM!],
      ["ER", HOSPITALIZATION.axes.ER!],
      ["SC", 0],
      ["type_2_diabetes", HOSPITALIZATION.conditions.type_2_diabetes!],
      ["chronic_kidney_disease", HOSPITALIZATION.conditions.chronic_kidney_disease!],
      ["copd", HOSPITALIZATION.conditions.copd!]
    ]
    for (const [feature, value] of planted) {
      const { beta, se } = coefficient(m, feature)
      expect(Math.abs(beta - value), `${feature}: ${beta} ± ${se}, planted ${value}`).toBeLessThan(3 * se)
    }
    // Heart failure's own admissions often fall within 30 days of the last one and so count as
    // readmissions, not index admissions: its index rate ratio is lower than the planted hazard's.
    expect(coefficient(m, "heart_failure").beta).toBeGreaterThan(0.5)
  })

  it("recovers the planted readmission coefficients (intercept, age, CKD, PO within 3 SE)", () => {
    const m = models.get("readmission")!
    for (const [feature, value] of [["intercept", READMISSION.intercept], ["age", READMISSION.agePer10y], ["chronic_kidney_disease", READMISSION.conditions.chronic_kidney_disease!], ["PO", READMISSION.axes.PO!]] as const) {
      const { beta, se } = coefficient(m, feature)
      expect(Math.abs(beta - value), `${feature}: ${beta} ± ${se}, planted ${value}`).toBeLessThan(3 * se)
    }
  })

  it("health decline is driven by heart failure (the planted PO decline)", () => {
    const m = models.get("health_decline")!
    const hf = coefficient(m, "heart_failure")
    expect(hf.beta).toBeGreaterThan(2)
    expect(hf.beta / hf.se).toBeGreaterThan(10)
  })

  it("a longer horizon never lowers a probability (any model, profile and pair of horizons)", () => {
    const conditions = fixture.data.vocabulary.condition
    fc.assert(fc.property(
      fc.constantFrom(...RISK_TYPES),
      fc.option(fc.integer({ min: 0, max: 110 }), { nil: undefined }),
      fc.subarray([...conditions]),
      fc.dictionary(fc.constantFrom(...AXES), fc.double({ min: 0, max: 10, noNaN: true })),
      fc.integer({ min: 1, max: 3650 }),
      fc.integer({ min: 1, max: 3650 }),
      (type, age, conds, axes, h1, h2) => {
        const m = models.get(type)!
        const x = profileVector(m, { age, conditions: new Set(conds), axes })
        const [lo, hi] = h1 <= h2 ? [h1, h2] : [h2, h1]
        const [p1, p2] = [probabilityWithin(m, x, lo), probabilityWithin(m, x, hi)]
        return p1 >= 0 && p2 <= 1 && p1 <= p2
      }
    ), { numRuns: 300 })
  })
})

describe("a model with more rows than the compute core holds is fitted on a fixed sample of patients", () => {
  it("keeps every row of a sampled patient, about the cap in all, the same rows every time; at most the cap, all rows", async () => {
    const { data, kernels } = fixture
    const rows = await Effect.runPromise(Effect.flatMap(base(kernels, data), (b) => modelRows(kernels, data, b)))
    const all = rows.readmission
    expect(sampledRows(all, data.patients.ids, all.patient.length)).toBe(all)
    const cap = Math.round(all.patient.length / 3)
    const sample = sampledRows(all, data.patients.ids, cap)
    expect(Math.abs(sample.patient.length - cap) / cap).toBeLessThan(0.05)
    expect(sampledRows(all, data.patients.ids, cap)).toEqual(sample)
    const perPatient = (r: typeof all) => {
      const counts = new Map<number, number>()
      for (const p of r.patient) counts.set(p, (counts.get(p) ?? 0) + 1)
      return counts
    }
    const whole = perPatient(all)
    const kept = perPatient(sample)
    for (const [p, c] of kept) expect(c).toBe(whole.get(p))
    // Outcomes and offsets travel with their rows.
    const rowOf = new Map<number, number>()
    all.patient.forEach((p, r) => rowOf.set(p, rowOf.has(p) ? -1 : r))
    sample.patient.forEach((p, r) => {
      const at = rowOf.get(p)!
      if (at >= 0) expect([sample.y[r], sample.offset[r]]).toEqual([all.y[at], all.offset[at]])
    })
    // Even and odd ids (the held-out split) are both about a third in the sample.
    const even = (r: typeof all) => r.patient.filter((p) => data.patients.ids[p]! % 2 === 0).length
    expect(Math.abs(even(sample) / even(all) - 1 / 3)).toBeLessThan(0.02)
  })

  it("a model fitted on a third of the patients still recovers the planted coefficients, with the sample's wider standard errors", async () => {
    expect(models.get("hospitalization")!.rows).toBeLessThan(MAX_MODEL_ROWS)
    const full = models.get("hospitalization")!
    const third = (await Effect.runPromise(fitRiskModels(fixture.kernels, fixture.data, Math.round(full.rows / 3)))).get("hospitalization")!
    expect(Math.abs(third.rows / (full.rows / 3) - 1)).toBeLessThan(0.05)
    for (const [feature, value] of [["age", HOSPITALIZATION.agePer10y], ["PO", HOSPITALIZATION.axes.PO!], ["type_2_diabetes", HOSPITALIZATION.conditions.type_2_diabetes!]] as const) {
      const { beta, se } = coefficient(third, feature)
      expect(Math.abs(beta - value), `${feature}: ${beta} ± ${se}, planted ${value}`).toBeLessThan(3 * se)
      expect(se / coefficient(full, feature).se).toBeGreaterThan(1.4)
    }
  })
})

describe("standard errors are cluster-robust (rows of one patient are not independent)", () => {
  it("duplicating every patient's rows halves the naive variance but leaves the cluster-robust one where it was", async () => {
    // A logistic model on 400 synthetic patients: y ~ Bernoulli(expit(−1 + 0.8·x)).
    let state = 11
    const u = () => {
      state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
      return state / 2 ** 32
    }
    const n = 400
    const x = new Float64Array(n * 2)
    const y = new Float64Array(n)
    for (let i = 0; i < n; i++) {
      const v = 2 * u() - 1
      x[i * 2] = 1
      x[i * 2 + 1] = v
      y[i] = u() < 1 / (1 + Math.exp(1 - 0.8 * v)) ? 1 : 0
    }
    const seOf = async (copies: number) => {
      const xx = new Float64Array(n * 2 * copies)
      const yy = new Float64Array(n * copies)
      const cluster = new Int32Array(n * copies)
      for (let c = 0; c < copies; c++) {
        xx.set(x, c * n * 2)
        yy.set(y, c * n)
        for (let i = 0; i < n; i++) cluster[c * n + i] = i
      }
      const fit = await Effect.runPromise(fixture.kernels.fitGlm(xx, yy, new Float64Array(n * copies), n * copies, 2, "logistic"))
      const robust = clusterRobustCovariance("logistic", xx, yy, new Float64Array(n * copies), n * copies, 2, fit.beta, fit.covariance, cluster)
      return { naive: Math.sqrt(fit.covariance[3]!), robust: Math.sqrt(robust[3]!) }
    }
    const once = await seOf(1)
    const twice = await seOf(2)
    expect(twice.naive / once.naive).toBeCloseTo(Math.SQRT1_2, 3)
    expect(twice.robust / once.robust).toBeGreaterThan(0.99)
    expect(twice.robust / once.robust).toBeLessThan(1.01)
    // With one row per patient the robust SE is close to the model-based one (a correct model).
    expect(once.robust / once.naive).toBeGreaterThan(0.9)
    expect(once.robust / once.naive).toBeLessThan(1.1)
  })
})

describe("the cluster-robust covariance's small-sample factor", () => {
  it("is CR1, G/(G − 1)·(n − 1)/(n − p): a logistic intercept over 3 patients of 2 rows each, worked by hand", () => {
    // y = 1,1 | 0,0 | 0,1 → p̂ = 0.5, β = 0, B = 1/(6·0.25) = 2/3; patients' scores Σ(y − 0.5): 1, −1, 0,
    // so M = 2 and B·M·B = 8/9; CR1 = 3/2 · 5/5 → 4/3.
    const v = clusterRobustCovariance("logistic", new Float64Array(6).fill(1), Float64Array.from([1, 1, 0, 0, 0, 1]), new Float64Array(6), 6, 1, Float64Array.from([0]), Float64Array.from([2 / 3]), Int32Array.from([0, 0, 1, 1, 2, 2]))
    expect(v[0]).toBeCloseTo(4 / 3, 12)
  })
})

describe("the cluster-robust covariance's two ways of collecting scores", () => {
  /** The textbook form: every cluster's score kept in a map, M = Σ u uᵀ over the full square. */
  const naive = (family: "poisson" | "logistic", x: Float64Array, y: Float64Array, offset: Float64Array, n: number, p: number, beta: Float64Array, bread: Float64Array, cluster: Int32Array) => {
    const scores = new Map<number, Float64Array>()
    for (let i = 0; i < n; i++) {
      let eta = offset[i]!
      for (let j = 0; j < p; j++) eta += x[i * p + j]! * beta[j]!
      const mu = family === "poisson" ? Math.exp(eta) : 1 / (1 + Math.exp(-eta))
      let u = scores.get(cluster[i]!)
      if (u === undefined) scores.set(cluster[i]!, u = new Float64Array(p))
      for (let j = 0; j < p; j++) u[j]! += x[i * p + j]! * (y[i]! - mu)
    }
    const meat = new Float64Array(p * p)
    for (const u of scores.values()) for (let j = 0; j < p; j++) for (let k = 0; k < p; k++) meat[j * p + k]! += u[j]! * u[k]!
    const g = scores.size
    const factor = g > 1 && n > p ? (g / (g - 1)) * ((n - 1) / (n - p)) : 1
    const product = (a: Float64Array, b: Float64Array, scale = 1) =>
      Float64Array.from({ length: p * p }, (_, at) => {
        let sum = 0
        for (let l = 0; l < p; l++) sum += a[Math.floor(at / p) * p + l]! * b[l * p + (at % p)]!
        return scale * sum
      })
    return product(product(bread, meat), bread, factor)
  }

  it("streamed (clusters in ascending order) and kept (any order) both equal the textbook form bit for bit, zero columns included", () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 60 }),
      fc.integer({ min: 1, max: 5 }),
      fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      fc.constantFrom("poisson" as const, "logistic" as const),
      (n, p, seed, family) => {
        let state = seed
        const u = () => {
          state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
          return state / 2 ** 32
        }
        // Columns of 0/1 flags (mostly zero) beside continuous ones; 1–3 rows per cluster, ascending.
        const x = Float64Array.from({ length: n * p }, (_, at) => (at % p) % 2 === 0 ? (u() < 0.2 ? 1 : 0) : u() * 4 - 2)
        const y = Float64Array.from({ length: n }, () => (family === "poisson" ? Math.floor(u() * 3) : u() < 0.4 ? 1 : 0))
        const offset = Float64Array.from({ length: n }, () => u() - 0.5)
        const beta = Float64Array.from({ length: p }, () => u() - 0.5)
        const bread = Float64Array.from({ length: p * p }, () => u())
        const ascending = new Int32Array(n)
        for (let i = 1; i < n; i++) ascending[i] = ascending[i - 1]! + (u() < 0.5 ? 1 : 0)
        const descending = ascending.map((c) => 1000 - c)
        const interleaved = Int32Array.from({ length: n }, (_, i) => i % 3)
        for (const cluster of [ascending, descending, interleaved]) {
          const got = clusterRobustCovariance(family, x, y, offset, n, p, beta, bread, cluster)
          const want = naive(family, x, y, offset, n, p, beta, bread, cluster)
          if (!got.every((v, i) => Object.is(v, want[i]))) return false
        }
        return true
      }
    ), { numRuns: 300 })
  })
})

describe("index admissions and readmissions", () => {
  /** Encounter columns from (patient, kind, start, end) rows in (patient, start) order. */
  const encounters = (rows: ReadonlyArray<readonly [number, number, string, string]>) => ({
    patient: Int32Array.from(rows, (r) => r[0]),
    kind: Uint8Array.from(rows, (r) => r[1]),
    startDay: Float32Array.from(rows, (r) => parseDate(r[2])),
    endDay: Float32Array.from(rows, (r) => parseDate(r[3]))
  })
  const observedFrom = Float64Array.from([parseDate("2024-01-01"), parseDate("2024-01-01")])
  const asOfDay = parseDate("2026-09-30")

  it("overlapping stays are one stay: 04-23..26, 05-04..09 and 05-05..11 are one index admission and one readmission", () => {
    const e = encounters([[0, INPATIENT, "2025-04-23", "2025-04-26"], [0, INPATIENT, "2025-05-04", "2025-05-09"], [0, INPATIENT, "2025-05-05", "2025-05-11"]])
    expect(mergedStays(e).map((s) => [s.start, s.end])).toEqual([[parseDate("2025-04-23"), parseDate("2025-04-26")], [parseDate("2025-05-04"), parseDate("2025-05-11")]])
    const a = admissions({ encounters: e, asOfDay }, { n: 1, observedFrom })
    expect(a.indexCount[0]).toBe(1)
    expect(a.readmissionRows).toEqual([{ patient: 0, readmitted: true }])
  })

  it("a stay starting on the discharge day continues it; 1–30 days after is a readmission, 31 a new index admission; outpatient visits and other patients do not interfere", () => {
    const e = encounters([
      [0, INPATIENT, "2025-01-10", "2025-01-15"],
      [0, INPATIENT, "2025-01-15", "2025-01-20"], // transfer: same stay, discharged 01-20
      [0, 0, "2025-01-25", "2025-01-25"], // an outpatient visit
      [0, INPATIENT, "2025-02-19", "2025-02-21"], // 30 days after 01-20: readmission
      [0, INPATIENT, "2025-03-24", "2025-03-25"], // 31 days after 02-21: index
      [1, INPATIENT, "2025-03-30", "2025-04-02"] // another patient: index
    ])
    const a = admissions({ encounters: e, asOfDay }, { n: 2, observedFrom })
    expect(Array.from(a.indexCount)).toEqual([2, 1])
    expect(a.readmissionRows).toEqual([{ patient: 0, readmitted: true }, { patient: 0, readmitted: false }, { patient: 1, readmitted: false }])
  })

  it("an index admission before the patient's first scored month is neither counted nor a readmission row; its readmission is no index admission either", () => {
    const e = encounters([
      [0, INPATIENT, "2023-11-20", "2023-11-25"], // before observation (from 2024-01-01)
      [0, INPATIENT, "2023-12-10", "2023-12-12"], // 15 days later: its readmission, also before
      [0, INPATIENT, "2024-01-05", "2024-01-06"], // 24 days after 12-12: a readmission, inside observation
      [0, INPATIENT, "2024-03-01", "2024-03-04"] // an index admission
    ])
    const a = admissions({ encounters: e, asOfDay }, { n: 2, observedFrom })
    expect(Array.from(a.indexCount)).toEqual([1, 0])
    expect(a.readmissionRows).toEqual([{ patient: 0, readmitted: false }])
  })

  it("\"before as_of\" is on or before: a discharge whose 30th day after is as_of gives a row, one day later none; the same at the death day", () => {
    const day = (d: number) => new Date(Date.UTC(1970, 0, 1 + d)).toISOString().slice(0, 10)
    const e = encounters([[0, INPATIENT, day(asOfDay - 40), day(asOfDay - 30)], [1, INPATIENT, day(asOfDay - 40), day(asOfDay - 29)]])
    expect(admissions({ encounters: e, asOfDay }, { n: 2, observedFrom }).readmissionRows).toEqual([{ patient: 0, readmitted: false }])
    const discharge = parseDate("2025-01-15")
    const dying = encounters([[0, INPATIENT, "2025-01-10", "2025-01-15"], [1, INPATIENT, "2025-01-10", "2025-01-15"]])
    const deathDay = Float32Array.from([discharge + 30, discharge + 29])
    expect(admissions({ encounters: dying, asOfDay, patients: { deathDay } }, { n: 2, observedFrom }).readmissionRows).toEqual([{ patient: 0, readmitted: false }])
  })

  it("time at risk counts both its first and its last day: a year of 365 days from 2025-01-01 to 2025-12-31 is 365 / 365.25 years; death ends it", () => {
    expect(observedYears(parseDate("2025-01-01"), parseDate("2025-12-31"), Number.NaN)).toBe(365 / 365.25)
    expect(observedYears(parseDate("2025-01-01"), parseDate("2025-12-31"), parseDate("2025-01-31"))).toBe(31 / 365.25)
  })

  it("a patient who dies within 30 days of a discharge is no readmission row (death competes with readmission)", () => {
    const e = encounters([[0, INPATIENT, "2025-01-10", "2025-01-15"], [1, INPATIENT, "2025-01-10", "2025-01-15"]])
    const deathDay = Float32Array.from([parseDate("2025-02-01"), Number.NaN])
    const a = admissions({ encounters: e, asOfDay, patients: { deathDay } }, { n: 2, observedFrom })
    expect(Array.from(a.indexCount)).toEqual([1, 1])
    expect(a.readmissionRows).toEqual([{ patient: 1, readmitted: false }])
  })
})

describe("the endpoint", () => {
  it("answers the spec's sample with every field: the fitted model's probability, factors and rule count", async () => {
    const { status, body } = await post(sample)
    expect(status).toBe(200)
    expect(Object.keys(body).sort()).toEqual(["contributing_factors", "hcc_cost", "probability", "recommended_interventions", "risk_type"])
    const m = models.get("hospitalization")!
    const x = profileVector(m, { age: 59.5, conditions: new Set(["type_2_diabetes", "hypertension"]), axes: { PO: 6.2, NM: 4.1, ER: 7.8 } })
    const p = probabilityWithin(m, x, 90)
    expect(body.risk_type).toBe("hospitalization")
    expect(body.hcc_cost).toBe(5)
    expect(body.probability).toBe(Math.round(p * 10_000) / 10_000)
    expect(body.probability).toBeGreaterThan(0)
    expect(body.probability).toBeLessThan(0.2)
    const parts = contributions(m, x)
    expect(body.recommended_interventions).toBe(recommendedInterventions("hospitalization", p, parts).length)
    expect(body.recommended_interventions).toBeGreaterThan(0)
    const top = [...parts].sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight)).slice(0, body.contributing_factors.length)
    expect(body.contributing_factors.map((f: any) => f.factor)).toEqual(top.map((f) => f.factor))
    for (const f of body.contributing_factors) expect(f.weight).toBe(Math.round(parts.find((q) => q.factor === f.factor)!.weight * 1000) / 1000)
    // Diabetes raises the risk (planted), ER above the mean lowers it.
    expect(body.contributing_factors.find((f: any) => f.factor === "type_2_diabetes").weight).toBeGreaterThan(0)
    expect(body.contributing_factors.find((f: any) => f.factor === "ER")?.weight ?? -1).toBeLessThan(0)
    expect((await post(sample)).body).toEqual(body)
  })

  it("its view representation adds the probability's 95 % interval (η ± 1.96·√(xᵀVx), V cluster-robust, through the horizon's transformation) and the weights' scale", async () => {
    const res = await call(fixture.server, "/v1/risk-model", { body: sample, headers: { accept: "application/vnd.hcc.view+json" } })
    const body = await res.json()
    const m = models.get("hospitalization")!
    const x = profileVector(m, { age: 59.5, conditions: new Set(["type_2_diabetes", "hypertension"]), axes: { PO: 6.2, NM: 4.1, ER: 7.8 } })
    const p = x.length
    const eta = x.reduce((s, v, j) => s + v * m.beta[j]!, 0)
    const variance = x.reduce((s, xi, i) => s + xi * x.reduce((t, xj, j) => t + m.covariance[i * p + j]! * xj, 0), 0)
    // A yearly Poisson rate e^η over 90 days: 1 − exp(−e^η · 90 / 365.25).
    const at = (e: number) => 1 - Math.exp(-Math.exp(e) * 90 / 365.25)
    const round = (v: number) => Math.round(v * 10_000) / 10_000
    expect(body.view_data).toEqual({ probability_low: round(at(eta - 1.959964 * Math.sqrt(variance))), probability_high: round(at(eta + 1.959964 * Math.sqrt(variance))), scale: "log rate" })
    expect(body.view_data.probability_low).toBeLessThan(body.probability)
    expect(body.view_data.probability_high).toBeGreaterThan(body.probability)
    // The coefficients' own standard errors are the diagonal's roots.
    for (let j = 0; j < p; j++) expect(m.covariance[j * p + j]).toBeCloseTo(m.se[j]! ** 2, 12)
    const readmission = await (await call(fixture.server, "/v1/risk-model", { body: { ...sample, risk_type: "readmission" }, headers: { accept: "application/vnd.hcc.view+json" } })).json()
    expect(readmission.view_data.scale).toBe("log odds")
    expect(readmission.view_data.probability_low).toBeLessThanOrEqual(readmission.probability)
  })

  it("a longer horizon never lowers the probability, for each risk type", async () => {
    for (const risk_type of RISK_TYPES) {
      const ps: Array<number> = []
      for (const horizon of ["1_days", "30_days", "90_days", "365_days", "3650_days"]) ps.push((await post({ ...sample, risk_type, horizon })).body.probability)
      expect(ps, risk_type).toEqual([...ps].sort((a, b) => a - b))
      expect(ps[4]!, risk_type).toBeGreaterThan(ps[0]!)
    }
    // Readmission counts 30 days after discharge: later horizons add nothing.
    const r30 = (await post({ ...sample, risk_type: "readmission", horizon: "30_days" })).body.probability
    expect((await post({ ...sample, risk_type: "readmission", horizon: "365_days" })).body.probability).toBe(r30)
  })

  it("defaults: horizon 90_days, no conditions, the population's mean age and axes for what is missing", async () => {
    const explicit = (await post({ ...sample, horizon: "90_days" })).body
    const { horizon: _, ...withoutHorizon } = sample
    expect((await post(withoutHorizon)).body).toEqual(explicit)
    const minimal = (await post({ patient_profile: { axes_snapshot: { PO: 5 } }, risk_type: "hospitalization" })).body
    // Age and the other axes sit at the population's mean: they contribute nothing. Listing no
    // condition means having none, which lowers the risk below the average patient's.
    const factors = minimal.contributing_factors.map((f: any) => f.factor)
    expect(factors).toContain("PO")
    expect(factors.filter((f: string) => f === "age" || (AXES as ReadonlyArray<string>).includes(f))).toEqual(["PO"])
    for (const f of minimal.contributing_factors) if (f.factor !== "PO") expect(f.weight).toBeLessThan(0)
    const m = models.get("hospitalization")!
    expect(minimal.probability).toBe(Math.round(probabilityWithin(m, profileVector(m, { age: undefined, conditions: new Set(), axes: { PO: 5 } }), 90) * 10_000) / 10_000)
  })

  it("scores with the models fitted at load: fitted once, never per request", async () => {
    await post(sample)
    await post({ ...sample, risk_type: "readmission" })
    const fitted = fixture.server.logLines().filter((l) => l.msg === "risk model fitted")
    expect(fitted.map((l) => l.risk_type).sort()).toEqual([...RISK_TYPES].sort())
    const logged = fitted.find((l) => l.risk_type === "hospitalization")!
    expect(logged.held_out_auc).toBe(Math.round(models.get("hospitalization")!.validation.auc * 1000) / 1000)
  })

  it("an unknown condition is 422 unknown_condition with the closest names", async () => {
    const { status, body } = await post({ ...sample, patient_profile: { ...sample.patient_profile, conditions: ["type_2_diabetis"] } })
    expect(status).toBe(422)
    expect(body.code).toBe("unknown_condition")
    expect(body.suggestions[0]).toBe("type_2_diabetes")
  })

  it.each([
    [{ ...sample, risk_type: "death" }, "/risk_type"],
    [{ ...sample, horizon: "0_days" }, "/horizon"],
    [{ ...sample, horizon: "3651_days" }, "/horizon"],
    [{ ...sample, horizon: "3_months" }, "/horizon"],
    [{ ...sample, patient_profile: { axes_snapshot: {} } }, "/patient_profile/axes_snapshot"],
    [{ ...sample, patient_profile: { axes_snapshot: { PO: 11 } } }, "/patient_profile/axes_snapshot/PO"],
    [{ ...sample, patient_profile: { axes_snapshot: { XX: 5 } } }, "/patient_profile/axes_snapshot/XX"],
    [{ ...sample, patient_profile: { axes_snapshot: { PO: 5 }, age_range: "64-55" } }, "/patient_profile/age_range"],
    [{ ...sample, patient_profile: { axes_snapshot: { PO: 5 }, conditions: ["copd", "copd"] } }, "/patient_profile/conditions"],
    [{ risk_type: "hospitalization" }, "/patient_profile"]
  ])("400 names the path: %j", async (request, path) => {
    const { body, status } = await post(request)
    expect(status).toBe(400)
    expect(body.errors.map((e: any) => e.path)).toContain(path)
  })
})
