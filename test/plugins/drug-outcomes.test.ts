/**
 * POST /v1/drug-outcomes on the run's generated population (30,000 patients, default seed): the
 * planted metformin effect on NM and its adverse-event rate are recovered inside their 95 %
 * intervals, the endpoint reports what the analysis computes, and every error is there.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { analyzeDrug } from "../../plugins/drug-outcomes/analysis.ts"
import { ADHERENT_SHARE, ADVERSE_EVENT_RATES, DRUG_AXIS_EFFECTS } from "../../src/synthetic/truths.ts"
import { scoreReader } from "../../src/kernels/tenths.ts"
import { AXES } from "../../src/plugin/axes.ts"
import { useFixture } from "../support/fixture.ts"
import { call } from "../support/server.ts"

const fixture = useFixture()

const analyze = (drug: string, outcomeType: "efficacy" | "adherence" | "adverse_events", axes = [...AXES]) =>
  Effect.runPromise(analyzeDrug(fixture.kernels, fixture.data, fixture.data.vocabulary.drug.indexOf(drug), outcomeType, axes))

const post = async (body: unknown) => {
  const res = await call(fixture.server, "/v1/drug-outcomes", { body })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}

const metformin = DRUG_AXIS_EFFECTS.find((e) => e.drug === "metformin")!
const inCi = (value: number, estimate: number, se: number) => Math.abs(value - estimate) <= 1.959964 * se

describe("planted truths", () => {
  it(`metformin raises NM by ${metformin.adherent} in adherent patients: inside the 95 % CI (outcome_type adherence)`, async () => {
    const nm = (await analyze("metformin", "adherence")).axes.get("NM")!
    expect(nm.difference).toBeGreaterThan(0)
    expect(inCi(metformin.adherent, nm.difference, nm.se)).toBe(true)
  })

  it("and by the adherence-weighted mixture over all exposed patients (outcome_type efficacy)", async () => {
    const expected = ADHERENT_SHARE * metformin.adherent + (1 - ADHERENT_SHARE) * metformin.nonAdherent
    const nm = (await analyze("metformin", "efficacy")).axes.get("NM")!
    expect(inCi(expected, nm.difference, nm.se)).toBe(true)
  })

  // 21 axis checks below: at |d| < 3 SE each, the chance that any fails without a real effect is about 6 %.
  it("moves no other axis of metformin users, and no axis of a drug with no planted effect (|d| < 3 SE or < 0.1)", async () => {
    for (const [drug, axes] of [["metformin", AXES.filter((a) => a !== "NM")], ["lisinopril", AXES], ["sertraline", AXES]] as const) {
      const a = await analyze(drug, "efficacy")
      for (const axis of axes) {
        const e = a.axes.get(axis)!
        expect(Math.abs(e.difference) < 3 * e.se || Math.abs(e.difference) < 0.1, `${drug} ${axis}: ${e.difference} ± ${e.se}`).toBe(true)
      }
    }
  })

  it("recovers metformin's adverse-event rate inside its 95 % CI", async () => {
    const rate = ADVERSE_EVENT_RATES.find((r) => r.drug === "metformin")!.rate
    const a = await analyze("metformin", "efficacy", ["NM"])
    expect(inCi(rate, a.eventRate, a.eventRateSe)).toBe(true)
  })

  it("recovers every drug's adverse-event rate with 95 % family-wise confidence (Bonferroni over the drugs: z = 2.81)", async () => {
    let checked = 0
    for (const ae of ADVERSE_EVENT_RATES) {
      const a = await analyze(ae.drug, "efficacy", ["NM"])
      if (a.cohortSize < 500) continue
      checked++
      expect(Math.abs(ae.rate - a.eventRate) <= 2.807 * a.eventRateSe, `${ae.drug}: ${a.eventRate} ± ${2.807 * a.eventRateSe}`).toBe(true)
    }
    expect(checked).toBeGreaterThanOrEqual(7)
  })

  it("finds the adherence–NM correlation among new metformin users, and none on PO", async () => {
    const a = await analyze("metformin", "efficacy")
    expect(a.axes.get("NM")!.correlation).toBeGreaterThan(0.3)
    expect(Math.abs(a.axes.get("PO")!.correlation)).toBeLessThan(0.15)
  })

  it("stratifies on the drug's indications (lisinopril: heart failure, CKD, hypertension)", async () => {
    expect((await analyze("lisinopril", "efficacy", ["PO"])).indications).toEqual(expect.arrayContaining(["heart_failure", "chronic_kidney_disease", "hypertension"]))
    expect((await analyze("metformin", "efficacy", ["NM"])).indications[0]).toBe("type_2_diabetes")
  })
})

describe("efficacy_score (Cohen's d) on one scale", () => {
  it("every drug divides an axis's difference by the same SD — the within-age-band × sex SD of whole-window patient means — so the same effect in points is the same d", async () => {
    const { nMonths, nPatients } = fixture.data.panel
    const score = scoreReader(fixture.data.panel.data)
    const asOfYear = Number(fixture.data.asOf.slice(0, 4))
    for (const axis of ["NM", "PO"] as const) {
      // Independent recomputation of the reference SD from the panel.
      const a = AXES.indexOf(axis)
      const cells = Array.from({ length: 6 }, () => ({ n: 0, s: 0, ss: 0 }))
      for (let p = 0; p < nPatients; p++) {
        let k = 0
        let sum = 0
        for (let m = 0; m < nMonths; m++) {
          const x = score((a * nPatients + p) * nMonths + m)
          if (!Number.isNaN(x)) {
            k++
            sum += x
          }
        }
        if (k === 0) continue
        const age = asOfYear - fixture.data.patients.birthYear.data[p]!
        const c = cells[(age < 45 ? 0 : age < 65 ? 1 : 2) * 2 + fixture.data.patients.sex.data[p]!]!
        c.n++
        c.s += sum / k
        c.ss += (sum / k) ** 2
      }
      const sd = Math.sqrt(cells.reduce((t, c) => t + (c.ss - c.s * c.s / c.n), 0) / cells.reduce((t, c) => t + c.n - 1, 0))
      for (const drug of fixture.data.vocabulary.drug) {
        const e = (await analyze(drug, "efficacy", [axis])).axes.get(axis)!
        expect(e.difference / e.standardized, `${drug} ${axis}`).toBeCloseTo(sd, 9)
      }
    }
  })

  it("metformin's d on NM covers its planted effect in points over that SD", async () => {
    const expected = ADHERENT_SHARE * metformin.adherent + (1 - ADHERENT_SHARE) * metformin.nonAdherent
    const nm = (await analyze("metformin", "efficacy")).axes.get("NM")!
    const sd = nm.difference / nm.standardized
    expect(Math.abs(nm.standardized - expected / sd)).toBeLessThanOrEqual(1.959964 * nm.se / sd)
  })
})

describe("each axis on its own", () => {
  it("an axis's figures are the same whichever other axes are computed with it (a question computes only the axes it names)", async () => {
    for (const outcomeType of ["efficacy", "adherence", "adverse_events"] as const) {
      const all = await analyze("lisinopril", outcomeType)
      for (const subset of [["NM"], ["PO", "NM"], ["ER", "TA", "PV"]] as const) {
        const some = await analyze("lisinopril", outcomeType, [...subset])
        expect([...some.axes.keys()]).toEqual(subset)
        for (const axis of subset) expect(some.axes.get(axis)).toEqual(all.axes.get(axis))
        expect({ ...some, axes: undefined }).toEqual({ ...all, axes: undefined })
      }
    }
  })
})

describe("the endpoint", () => {
  it("answers the spec's sample with every field, the analysis' numbers, and the same body twice", async () => {
    const request = { drug: "metformin", outcome_type: "efficacy", axes_filter: ["NM", "PO"], population_size: "minimum_500" }
    const { body, status } = await post(request)
    expect(status).toBe(200)
    const a = await analyze("metformin", "efficacy", ["PO", "NM"])
    expect(body).toEqual({
      drug: "metformin",
      outcome_type: "efficacy",
      cohort_size: a.cohortSize,
      efficacy_score: Math.round(((a.axes.get("PO")!.standardized + a.axes.get("NM")!.standardized) / 2) * 1000) / 1000,
      adverse_event_rate: Math.round(a.eventRate * 10_000) / 10_000,
      axis_breakdown: {
        PO: { correlation: Math.round(a.axes.get("PO")!.correlation * 1000) / 1000, trend: a.axes.get("PO")!.trend },
        NM: { correlation: Math.round(a.axes.get("NM")!.correlation * 1000) / 1000, trend: a.axes.get("NM")!.trend }
      },
      hcc_cost: 3
    })
    expect(Object.keys(body.axis_breakdown)).toEqual(["PO", "NM"])
    expect(body.efficacy_score).toBeGreaterThan(0.1)
    expect((await post(request)).body).toEqual(body)
  })

  it("the three outcome types are three cohorts: all users ⊇ adherent users, and users with an adverse event", async () => {
    const all = (await post({ drug: "metformin" })).body
    const adherent = (await post({ drug: "metformin", outcome_type: "adherence" })).body
    const withEvents = (await post({ drug: "metformin", outcome_type: "adverse_events" })).body
    expect(all.outcome_type).toBe("efficacy")
    expect(Object.keys(all.axis_breakdown)).toEqual([...AXES])
    expect(adherent.cohort_size).toBeLessThan(all.cohort_size)
    expect(adherent.cohort_size / all.cohort_size).toBeCloseTo(ADHERENT_SHARE, 1)
    expect(withEvents.cohort_size).toBeLessThan(all.cohort_size)
    expect(withEvents.adverse_event_rate).toBeGreaterThanOrEqual(1)
  })

  it("a cohort under population_size is 422 cohort_too_small with both numbers", async () => {
    const { body, status } = await post({ drug: "warfarin", population_size: "minimum_100000" })
    expect(status).toBe(422)
    expect(body.code).toBe("cohort_too_small")
    expect(body.context.required).toBe(100000)
    expect(body.context.cohort_size).toBeGreaterThan(0)
  })

  it("an unknown drug is 422 unknown_drug with the closest names", async () => {
    const { body, status } = await post({ drug: "metfromin" })
    expect(status).toBe(422)
    expect(body.code).toBe("unknown_drug")
    expect(body.suggestions[0]).toBe("metformin")
  })

  it.each([
    [{ drug: "metformin", outcome_type: "safety" }, "/outcome_type"],
    [{ drug: "metformin", population_size: "minimum_0" }, "/population_size"],
    [{ drug: "metformin", population_size: "500" }, "/population_size"],
    [{ drug: "metformin", axes_filter: [] }, "/axes_filter"],
    [{ drug: "metformin", axes_filter: ["NM", "XX"] }, "/axes_filter/1"],
    [{ drug: "Metformin" }, "/drug"]
  ])("400 names the path: %j", async (request, path) => {
    const { body, status } = await post(request)
    expect(status).toBe(400)
    expect(body.errors.map((e: any) => e.path)).toContain(path)
  })
})
