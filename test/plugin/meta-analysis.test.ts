/**
 * metaAnalysis (src/plugin/metaAnalysis.ts) against a second reading of the same methods written
 * from the papers alone (test/fixtures/meta/meta_reference.py, Python's standard library: REML by
 * maximising the restricted likelihood directly, not by the fixed point): the BCG vaccine trials
 * (Colditz et al. 1994, the example of metafor's documentation), and generated sets of 2 to 12
 * studies on scales from 1e-3 to 1e3.
 */
import { describe, expect, it } from "vitest"
import { metaAnalysis } from "../../src/plugin/metaAnalysis.ts"
import { metaReference, type Study } from "../support/metaReference.ts"
import { mulberry32 } from "../support/random.ts"

/** Log risk ratios and their variances of the 13 BCG trials (tpos, tneg, cpos, cneg per trial). */
const BCG = [[4, 119, 11, 128], [6, 300, 29, 274], [3, 228, 11, 209], [62, 13536, 248, 12619], [33, 5036, 47, 5761], [180, 1361, 372, 1079], [8, 2537, 10, 619], [505, 87886, 499, 87892], [29, 7470, 45, 7232], [17, 1699, 65, 1600], [186, 50448, 141, 27197], [5, 2493, 3, 2338], [27, 16886, 29, 17825]]
  .map(([a, b, c, d]) => ({ estimate: Math.log((a! / (a! + b!)) / (c! / (c! + d!))), variance: 1 / a! - 1 / (a! + b!) + 1 / c! - 1 / (c! + d!) }))

/** Each set of studies pooled by metaAnalysis as the reference pools it. */
const expectAgrees = (sets: ReadonlyArray<ReadonlyArray<Study>>) => {
  const refs = metaReference(sets)
  expect(refs).toHaveLength(sets.length)
  for (const [i, studies] of sets.entries()) expectAgreesOn(studies, refs[i], `set ${i} of ${sets.length}: `)
}

const expectAgreesOn = (studies: ReadonlyArray<Study>, ref: any, label: string) => {
  const ours = metaAnalysis(studies)
  const near = (a: number, b: number | null, what: string) => {
    if (b === null) return expect(Number.isNaN(a), label + what).toBe(true)
    expect(Math.abs(a - b), `${label}${what}: ${a} against ${b}`).toBeLessThanOrEqual(1e-7 * Math.max(1, Math.abs(b)))
  }
  near(ours.fixed.estimate, ref.fixed.estimate, "fixed")
  near(ours.fixed.se, ref.fixed.se, "fixed se")
  near(ours.q, ref.q, "Q")
  near(ours.qP, ref.q_p, "Q's p")
  near(ours.i2, ref.i2, "I²")
  near(ours.dl.tau2, ref.dl.tau2, "τ² DL")
  near(ours.dl.estimate, ref.dl.estimate, "DL")
  near(ours.dl.ciLow, ref.dl.ci_low, "DL low")
  near(ours.reml.tau2, ref.reml.tau2, "τ² REML")
  near(ours.reml.estimate, ref.reml.estimate, "REML")
  near(ours.reml.se, ref.reml.se, "REML se")
  near(ours.remlHartungKnapp.ciLow, ref.reml_hk.ci_low, "REML HK low")
  near(ours.remlHartungKnapp.ciHigh, ref.reml_hk.ci_high, "REML HK high")
  near(ours.dlHartungKnapp.se, ref.dl_hk.se, "DL HK se")
  near(ours.prediction[0], ref.prediction?.low ?? null, "prediction low")
  near(ours.prediction[1], ref.prediction?.high ?? null, "prediction high")
}

describe("metaAnalysis", () => {
  it("pools the BCG trials as the reference does (metafor's REML τ² 0.3132, μ −0.7145)", () => {
    expectAgrees([BCG])
    const m = metaAnalysis(BCG)
    expect(m.reml.tau2).toBeCloseTo(0.3132, 4)
    expect(m.reml.estimate).toBeCloseTo(-0.7145, 4)
    expect(m.weights.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12)
  })

  it("agrees with the reference on generated sets of 2 to 12 studies, with and without heterogeneity", () => {
    const rnd = mulberry32(20_261_206)
    const sets: Array<Array<Study>> = []
    for (let i = 0; i < 40; i++) {
      const k = 2 + Math.floor(rnd() * 11)
      const scale = 10 ** (Math.floor(rnd() * 7) - 3)
      const tau = rnd() < 0.3 ? 0 : scale * rnd()
      const studies = Array.from({ length: k }, () => {
        const variance = (scale * (0.2 + rnd())) ** 2
        return { estimate: scale + tau * (rnd() - 0.5) * 3 + Math.sqrt(variance) * (rnd() - 0.5) * 2, variance }
      })
      sets.push(studies)
    }
    expectAgrees(sets)
  })

  it("one study: the study itself, no heterogeneity, no Hartung–Knapp or prediction interval", () => {
    const m = metaAnalysis([{ estimate: 0.3, variance: 0.04 }])
    expect([m.fixed.estimate, m.reml.estimate, m.reml.tau2, m.i2]).toEqual([0.3, 0.3, 0, 0])
    expect(Number.isNaN(m.remlHartungKnapp.ciLow) && Number.isNaN(m.prediction[0]) && Number.isNaN(m.qP)).toBe(true)
  })
})
