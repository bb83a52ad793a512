/**
 * `--time-zone`: an instant (a dateTime with a time and an offset) falls on the calendar day of the
 * zone given — a UTC evening timestamp from an American hospital is the day before in UTC's
 * morning — across daylight-saving changes and quarter-hour offsets; a date without a time stays
 * the day written; without the option every dateTime is the date as written.
 */
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { formatDate } from "../../src/health/calendar.ts"
import { dayOf, dayReader } from "../../src/formats/fhir/common.ts"
import { ehrFiles, writeEhrExport } from "../fixtures/fhir/ehr.ts"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tryHcc, tempDataDir } from "../support/server.ts"

const dayIn = (zone: string | undefined, value: string) => {
  const day = dayReader(zone)(value, "x")
  return typeof day === "number" ? formatDate(day) : day
}

describe("dates of instants in a time zone", () => {
  it("an instant is the day it falls on in the zone; a date without a time the day written", () => {
    expect(dayIn("America/New_York", "2024-03-02T02:30:00Z")).toBe("2024-03-01")
    expect(dayIn("America/New_York", "2024-03-01T23:30:00-05:00")).toBe("2024-03-01")
    expect(dayIn("America/New_York", "2024-03-02T06:30:00+02:00")).toBe("2024-03-01")
    expect(dayIn("Europe/Paris", "2024-03-01T23:30:00Z")).toBe("2024-03-02")
    expect(dayIn("America/New_York", "2024-03-02")).toBe("2024-03-02")
    expect(dayIn("America/New_York", "2024-03")).toBe("2024-03-01")
  })

  it("follows daylight-saving changes and offsets of a quarter hour", () => {
    // New York: EST (−5) until 2024-03-10 07:00 UTC, EDT (−4) until 2024-11-03 06:00 UTC.
    expect(dayIn("America/New_York", "2024-03-10T04:30:00Z")).toBe("2024-03-09")
    expect(dayIn("America/New_York", "2024-03-11T03:30:00Z")).toBe("2024-03-10")
    expect(dayIn("America/New_York", "2024-03-11T04:30:00Z")).toBe("2024-03-11")
    expect(dayIn("America/New_York", "2024-11-04T04:30:00Z")).toBe("2024-11-03")
    expect(dayIn("America/New_York", "2024-11-04T05:30:00Z")).toBe("2024-11-04")
    // Kathmandu is UTC+05:45: its midnight is 18:15 UTC.
    expect(dayIn("Asia/Kathmandu", "2024-03-01T18:14:59Z")).toBe("2024-03-01")
    expect(dayIn("Asia/Kathmandu", "2024-03-01T18:15:00Z")).toBe("2024-03-02")
  })

  it("without a zone, the date as written; what is not a date is a problem either way", () => {
    expect(dayIn(undefined, "2024-03-02T02:30:00Z")).toBe("2024-03-02")
    expect(dayReader(undefined)).toBe(dayOf)
    for (const zone of [undefined, "America/New_York"]) {
      expect(dayIn(zone, "2024-13-01T00:00:00Z")).toMatchObject({ path: "x" })
      expect(dayIn(zone, "yesterday")).toMatchObject({ path: "x" })
    }
    expect(() => dayReader("Mars/Olympus_Mons")).toThrow(RangeError)
  })

  it("hcc data import --time-zone puts an export's evening UTC timestamps on the local day", () => {
    const files = ehrFiles()
    files["Encounter.ndjson"] = files["Encounter.ndjson"]!.map((e) => (e as { id: string }).id === "e2" ? { ...e, period: { start: "2024-03-02T02:30:00Z", end: "2024-03-02T04:00:00Z" } } : e)
    const bulk = writeEhrExport(join(tempDataDir(), "bulk"), files)
    const visitDays = (...args: ReadonlyArray<string>) => {
      const dir = tempDataDir()
      hcc(dir, ["data", "import", "--format", "fhir", bulk, "--as-of", "2024-12-31", ...args])
      return tablesOf(dir)["encounters"]!.map((r) => r["start_date"]).sort()
    }
    const asWritten = visitDays()
    const local = visitDays("--time-zone", "America/New_York")
    expect(asWritten).toContain("2024-03-02")
    expect(local).toContain("2024-03-01")
    expect(local).not.toContain("2024-03-02")
    expect(local.length).toBe(asWritten.length)

    const wrong = tryHcc(tempDataDir(), ["data", "import", "--format", "fhir", bulk, "--time-zone", "Mars/Olympus_Mons"])
    expect(wrong.status).not.toBe(0)
    expect(wrong.stderr).toContain("--time-zone: 'Mars/Olympus_Mons' is not an IANA time zone name")
    const omop = tryHcc(tempDataDir(), ["data", "import", "--format", "omop", bulk, "--time-zone", "UTC"])
    expect(omop.stderr).toContain("--time-zone is for --format fhir")
  })
})
