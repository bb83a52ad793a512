/**
 * The small-cell rule as the platform applies it to an encoded answer (src/plugin/disclosure.ts):
 * cohorts, counts, statistics with their recorded bases, rounding, and `suppressed`.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { datasetCache } from "../../src/plugin/cache.ts"
import { Disclosure, makeDisclosure, recordingBases, roundCount, withhold } from "../../src/plugin/disclosure.ts"

const k11 = { minimum: 11, rounding: 1 }
const answer = { cohort_size: 40, groups: [{ patients: 7, mean: 2.5 }, { patients: 0, mean: null }, { patients: 12, mean: 3.5 }], rate: 0.1 }

describe("withhold", () => {
  it("a declared cohort of 1 to k − 1 is refused, naming the minimum; zero is not a small cell", () => {
    expect(withhold(k11, { cohort: "/cohort_size" }, { cohort_size: 10 }, [])).toEqual({ _tag: "CohortTooSmall", minimum: 11 })
    expect(withhold(k11, { cohort: "/cohort_size" }, { cohort_size: 0 }, [])).toEqual({ _tag: "Answer", body: { cohort_size: 0 } })
    expect(withhold(k11, { cohort: "/cohort_size" }, { cohort_size: 11 }, [])).toEqual({ _tag: "Answer", body: { cohort_size: 11 } })
  })

  it("counts of 1 to k − 1 and statistics resting on them become null, listed in suppressed; the rest is untouched", () => {
    const bases = [{ pointer: "/groups/0/mean", counts: [7] }, { pointer: "/groups/2/mean", counts: [12] }, { pointer: "/rate", counts: [40, 4, 36] }]
    const r = withhold(k11, { cohort: "/cohort_size", counts: ["/groups/*/patients"], statistics: ["/groups/*/mean", "/rate"] }, answer, bases)
    expect(r).toEqual({
      _tag: "Answer",
      body: {
        cohort_size: 40,
        groups: [{ patients: null, mean: null }, { patients: 0, mean: null }, { patients: 12, mean: 3.5 }],
        rate: null,
        suppressed: ["/groups/0/mean", "/groups/0/patients", "/rate"]
      }
    })
    // The encoded answer itself is not changed (it may be a cached value).
    expect(answer.groups[0]!.patients).toBe(7)
  })

  it("with nothing to withhold or round the answer is given as it is, without `suppressed`", () => {
    const r = withhold(k11, { counts: ["/groups/2/patients"] }, answer, [{ pointer: "/rate", counts: [40, 11, 29] }])
    expect(r).toEqual({ _tag: "Answer", body: answer })
  })

  it("rounding applies to cohorts and counts (halves up, never to zero), not to statistics", () => {
    expect([1, 2, 3, 7, 12, 13, 40].map((n) => roundCount({ minimum: 1, rounding: 5 }, n))).toEqual([5, 5, 5, 5, 10, 15, 40])
    expect(roundCount({ minimum: 1, rounding: 5 }, 0)).toBe(0)
    const r = withhold({ minimum: 11, rounding: 5 }, { cohort: "/cohort_size", counts: ["/groups/*/patients"] }, { ...answer, cohort_size: 43 }, [])
    expect(r._tag === "Answer" && r.body).toMatchObject({ cohort_size: 45, groups: [{ patients: null, mean: 2.5 }, { patients: 0 }, { patients: 10, mean: 3.5 }], rate: 0.1 })
  })

  it("a plugin that declares nothing is refused when a cohort it selected is small, answered otherwise", () => {
    expect(withhold(k11, undefined, { x: 1 }, [{ pointer: undefined, counts: [5000] }, { pointer: undefined, counts: [3] }])._tag).toBe("CohortTooSmall")
    expect(withhold(k11, undefined, { x: 1 }, [{ pointer: undefined, counts: [0] }, { pointer: undefined, counts: [11] }])).toEqual({ _tag: "Answer", body: { x: 1 } })
    // With a declaration, selections are the plugin's to judge.
    expect(withhold(k11, {}, { x: 1 }, [{ pointer: undefined, counts: [3] }])._tag).toBe("Answer")
  })

  it("with a minimum of 1 nothing is withheld", () => {
    const r = withhold({ minimum: 1, rounding: 1 }, { cohort: "/cohort_size", counts: ["/groups/*/patients"], statistics: ["/groups/*/mean"] }, answer, [{ pointer: "/groups/0/mean", counts: [1] }])
    expect(r).toEqual({ _tag: "Answer", body: answer })
  })
})

describe("the Disclosure service", () => {
  it("counts and text as they may be published", () => {
    const d = makeDisclosure({ minimum: 11, rounding: 5 })
    expect([0, 3, 10, 11, 13].map(d.count)).toEqual([0, null, null, 10, 15])
    expect([0, 3, 12].map(d.text)).toEqual(["0", "fewer than 11", "10"])
    expect(Effect.runSync(Effect.flip(d.cohort(4, "The implants")))).toMatchObject({ code: "cohort_too_small", context: { minimum: 11 } })
    expect(Effect.runSync(Effect.flip(d.cohort(4))).detail).not.toMatch(/\b4\b/)
    expect(Effect.runSync(d.cohort(0))).toBeUndefined()
  })

  it("a cached result reports its bases again on every request it answers", async () => {
    const cache = datasetCache<number>(4)
    const dataset = {}
    let computed = 0
    const compute = Effect.gen(function*() {
      computed++
      ;(yield* Disclosure).rests("/mean", 3)
      return 42
    })
    const ask = Effect.gen(function*() {
      const d = makeDisclosure(k11)
      const value = yield* Effect.provideService(cache(dataset, "q", compute), Disclosure, d)
      return { value, bases: d.bases }
    })
    const first = await Effect.runPromise(ask)
    const second = await Effect.runPromise(ask)
    expect(computed).toBe(1)
    expect(first).toEqual({ value: 42, bases: [{ pointer: "/mean", counts: [3] }] })
    expect(second).toEqual(first)
    // recordingBases alone: the bases of one computation, apart from the caller's.
    const outer = makeDisclosure(k11)
    const r = await Effect.runPromise(Effect.provideService(recordingBases(compute), Disclosure, outer))
    expect(r.bases).toEqual([{ pointer: "/mean", counts: [3] }])
    expect(outer.bases).toEqual([])
  })
})
