/**
 * The calendar's month of a day is worked out by arithmetic (it runs per row of the tables); it
 * must be the month a JavaScript Date gives for the same day, across centuries, leap days and
 * both sides of the epoch, and NaN where a Date is invalid.
 */
import { describe, expect, it } from "vitest"
import { monthOfDay } from "../../src/health/calendar.ts"

const DAY_MS = 86_400_000
const byDate = (day: number) => {
  const d = new Date(day * DAY_MS)
  return d.getUTCFullYear() * 12 + d.getUTCMonth()
}

describe("monthOfDay", () => {
  it("is the month a Date gives for every day from 1353 to 2700", () => {
    for (let day = -225_000; day <= 267_000; day++) {
      if (monthOfDay(day) !== byDate(day)) expect([day, monthOfDay(day)]).toEqual([day, byDate(day)])
    }
  })
  it("agrees at leap days, century years and the ends of a Date's range; NaN where a Date is invalid", () => {
    for (const text of ["2000-02-29", "2000-03-01", "1900-02-28", "1900-03-01", "2100-02-28", "2100-03-01", "1970-01-01", "1969-12-31", "0000-03-01", "-000001-12-31"]) {
      const day = Date.parse(`${text}T00:00:00Z`) / DAY_MS
      expect(monthOfDay(day)).toBe(byDate(day))
    }
    for (const day of [100_000_000, -100_000_000, 99_999_999, -99_999_999]) expect(monthOfDay(day)).toBe(byDate(day))
    for (const day of [100_000_001, -100_000_001, Number.NaN, Number.POSITIVE_INFINITY]) expect(monthOfDay(day)).toBeNaN()
  })
})
