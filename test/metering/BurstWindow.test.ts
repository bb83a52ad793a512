/** The rolling window admits at most `limit` requests in any window, and no fewer than it could. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { BurstWindow } from "../../src/metering/BurstWindow.ts"

describe("BurstWindow", () => {
  it("admits exactly `limit` in a burst, then refuses until the oldest leaves the window", () => {
    const w = new BurstWindow(10, 60_000)
    for (let i = 0; i < 10; i++) expect(w.tryAcquire(1000 + i).admitted).toBe(true)
    const refused = w.tryAcquire(1010)
    expect(refused).toEqual({ admitted: false, remaining: 0, resetSeconds: 60 })
    expect(w.tryAcquire(60_999).admitted).toBe(false)
    expect(w.tryAcquire(61_000).admitted).toBe(true) // the one at t=1000 left at 61000
  })
  it("matches a brute-force sliding log on random arrival times (property)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 200 }),
        (limit, gaps) => {
          const w = new BurstWindow(limit, 1_000)
          const admitted: Array<number> = []
          let t = 0
          for (const g of gaps) {
            t += g
            const inWindow = admitted.filter((a) => a > t - 1_000).length
            const expected = inWindow < limit
            const d = w.tryAcquire(t)
            if (d.admitted !== expected) return false
            if (d.admitted) admitted.push(t)
            if (d.remaining !== limit - admitted.filter((a) => a > t - 1_000).length) return false
          }
          return true
        }
      ),
      { numRuns: 500 }
    )
  })
  it("resizes keeping the newest admissions", () => {
    const w = new BurstWindow(5, 60_000)
    for (let i = 0; i < 5; i++) w.tryAcquire(i)
    w.resize(3)
    expect(w.peek(10)).toMatchObject({ used: 3, remaining: 0 })
    w.resize(6)
    expect(w.peek(10)).toMatchObject({ used: 3, remaining: 3 })
  })
})

describe("utcDay", () => {
  it("gives the UTC calendar day, changing exactly at midnight UTC", async () => {
    const { utcDay } = await import("../../src/metering/Metering.ts")
    const midnight = Date.UTC(2026, 10, 23)
    expect(utcDay(midnight - 1)).toBe("2026-11-22")
    expect(utcDay(midnight)).toBe("2026-11-23")
    expect(utcDay(midnight - 1)).toBe("2026-11-22")
    expect(utcDay(Date.UTC(2024, 1, 29, 12))).toBe("2024-02-29")
  })
})
