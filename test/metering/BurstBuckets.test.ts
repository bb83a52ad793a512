/**
 * The per-second burst buckets: never more than `limit` in any rolling 60 s, at most one second
 * more cautious than an exact log, O(1) state whatever the limit, and harmless clock steps back.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as BurstBuckets from "../../src/metering/BurstBuckets.ts"

/** Runs arrivals through the buckets (clock never back); returns the admitted times. */
const run = (limit: number, times: ReadonlyArray<number>) => {
  let text = ""
  let last = 0
  const admitted: Array<number> = []
  const decisions: Array<BurstBuckets.BurstDecision> = []
  for (const t of times) {
    const d = BurstBuckets.admit(BurstBuckets.parse(text), limit, last, t)
    text = BurstBuckets.format(d.buckets)
    last = t
    decisions.push(d)
    if (d.admitted) admitted.push(t)
  }
  return { admitted, decisions, text }
}

describe("BurstBuckets", () => {
  it("admits exactly `limit` in a burst, then refuses until the burst's second has left the window", () => {
    const { admitted, decisions } = run(10, [...Array.from({ length: 11 }, (_, i) => 1000 + i), 60_999, 61_999, 62_000])
    expect(admitted).toEqual([...Array.from({ length: 10 }, (_, i) => 1000 + i), 62_000])
    expect(decisions[10]).toMatchObject({ admitted: false, remaining: 0, used: 10, retryAfter: 61 })
    expect(decisions[12]).toMatchObject({ admitted: false })
    expect(decisions[13]).toMatchObject({ admitted: true, remaining: 9, used: 1 })
  })
  it("never admits more than `limit` in any rolling 60 s, and refuses only when an exact log would refuse within 1 s (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 15 }),
        fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 300 }),
        (limit, gaps) => {
          let t = 0
          const times = gaps.map((g) => (t += g))
          const { admitted, decisions } = run(limit, times)
          const before = (i: number) => times.slice(0, i).filter((_, j) => decisions[j]!.admitted)
          // Guarantee: any 60 s span holds at most `limit` admissions.
          for (let i = 0; i < admitted.length; i++) {
            const inSpan = admitted.filter((a) => a > admitted[i]! - 60_000 && a <= admitted[i]!).length
            if (inSpan > limit) return false
          }
          // Caution bounded: a refusal at t means an exact log would refuse at t − 1 s already.
          for (let i = 0; i < times.length; i++) {
            if (decisions[i]!.admitted) continue
            const exactUsed = before(i).filter((a) => a > times[i]! - 61_000).length
            if (exactUsed < limit) return false
          }
          return true
        }
      ),
      { numRuns: 500 }
    )
  })
  it("keeps O(1) state whatever the limit: a 5,000,000,000 limit stores at most 61 buckets", () => {
    const times = Array.from({ length: 5000 }, (_, i) => i * 30)
    const { decisions, text } = run(5_000_000_000, times)
    expect(decisions.every((d) => d.admitted)).toBe(true)
    expect(text.split(",").length).toBeLessThanOrEqual(61)
    // The last 61 whole seconds (89–149) hold the admissions from 89,000 ms to 149,970 ms.
    expect(decisions.at(-1)).toMatchObject({ used: 2033, remaining: 5_000_000_000 - 2033 })
  })
  it("a clock that steps back an hour moves the window with it: no hour-long lock-out, no extra admissions", () => {
    const hour = 3_600_000
    const start = 10 * hour
    const { text } = run(3, [start, start + 100, start + 200])
    const stepped = start + 300 - hour
    const refused = BurstBuckets.admit(BurstBuckets.parse(text), 3, start + 200, stepped)
    expect(refused.admitted).toBe(false)
    // Whole-second rounding of the step may add a second of caution, never an hour.
    expect(refused.retryAfter).toBeLessThanOrEqual(62)
    const later = BurstBuckets.admit(refused.buckets, 3, stepped, stepped + refused.retryAfter * 1000)
    expect(later.admitted).toBe(true)
  })
  it("reads malformed stored text as an empty window", () => {
    expect(BurstBuckets.parse("x:1,5:abc,,7:-2")).toEqual([])
    expect(BurstBuckets.parse("")).toEqual([])
  })
})

describe("utcDay", () => {
  it("gives the UTC calendar day, changing exactly at midnight UTC", async () => {
    const { utcDay } = await import("../../src/metering/Metering.ts")
    const midnight = Date.UTC(2026, 10, 23)
    expect(utcDay(midnight - 1)).toBe("2026-11-22")
    expect(utcDay(midnight)).toBe("2026-11-23")
    expect(utcDay(Date.UTC(2024, 1, 29, 12))).toBe("2024-02-29")
  })
})
