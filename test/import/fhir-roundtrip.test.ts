/**
 * Generated dataset → `hcc data export --format fhir` → `hcc data import --format fhir`: the same
 * dataset (every table but the import's own bookkeeping), so the README's sample calls give
 * identical answers from both.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { readmeCalls } from "../support/datasets.ts"
import { call, hcc, startServer, tempDataDir, type TestServer, waitReady } from "../support/server.ts"

const csvExport = (dataDir: string) => {
  const out = join(tempDataDir(), "csv")
  hcc(dataDir, ["data", "export", out])
  return Object.fromEntries(readdirSync(out).map((f) => [f, readFileSync(join(out, f), "utf8")]))
}

/**
 * Enough patients for every README question to be answered from the EHR-style import (the
 * drug-outcomes question asks for at least 500 patients on metformin; half as many give 345),
 * and for the export to be read on parse threads (over 32 MiB of NDJSON).
 */
const PATIENTS = 8000

let original: string
let imported: string
let bulk: string
let summary: Record<string, any>
let servers: ReadonlyArray<TestServer> = []
let ehrSummary: Record<string, any>
let vendorSummary: Record<string, any>

/** What an EHR's export leaves out of one line of ours: the service's own codings and adherence extensions; device outcome observations whole. */
const ehrLine = (text: string): string | undefined => {
  // A line naming none of them is written back as it was read (the export's lines are JSON.stringify's own).
  if (!text.includes("urn:hcc:vocabulary:") && !text.includes("urn:hcc:fhir:adherence") && !text.includes('"focus"')) return text
  const resource = JSON.parse(text) as Record<string, unknown>
  if (resource.resourceType === "Observation" && resource.focus !== undefined) return undefined
  return JSON.stringify(resource, (key, value) => {
    if (key === "coding" && Array.isArray(value)) return value.filter((c: { system?: string }) => !c.system?.startsWith("urn:hcc:vocabulary:"))
    if (key === "extension" && Array.isArray(value)) return value.filter((e: { url?: string }) => e.url !== "urn:hcc:fhir:adherence")
    return value
  })
}

/**
 * The export as an EHR would write it: the service's own codings, CodeSystems, adherence and
 * device outcome observations taken out, so only standard codes (SNOMED CT, RxNorm, …) are left.
 */
const asEhrExport = (from: string): string => {
  const to = join(tempDataDir(), "ehr")
  mkdirSync(to)
  for (const file of readdirSync(from)) {
    // The surveillance series come beside the export, as an operator brings them.
    if (file.endsWith("_surveillance.csv")) copyFileSync(join(from, file), join(to, file))
    if (!file.endsWith(".ndjson.gz") || file.startsWith("CodeSystem")) continue
    const kept = gunzipSync(readFileSync(join(from, file))).toString("utf8").trim().split("\n").flatMap((line) => ehrLine(line) ?? [])
    writeFileSync(join(to, file.replace(/\.gz$/, "")), kept.join("\n") + "\n")
  }
  return to
}

/** A day (YYYY-MM-DD) as an instant in UTC at 03:00 the next day: 22:00 or 23:00 of that day in New York (EST or EDT). */
const evenings = new Map<string, string>()
const eveningInNewYork = (day: string): string => {
  const known = evenings.get(day)
  if (known !== undefined) return known
  const next = new Date(`${day}T00:00:00Z`)
  next.setUTCDate(next.getUTCDate() + 1)
  const evening = `${next.toISOString().slice(0, 10)}T03:00:00Z`
  evenings.set(day, evening)
  return evening
}

/** Epic's own encounter class system (an `urn:oid:1.2.840.114350…` system, R4's extensible binding), by the HL7 v3 class it stands for. */
const EPIC_CLASS = "urn:oid:1.2.840.114350.1.72.1.7.7.10.696784.13260"
const EPIC_CLASSES: Readonly<Record<string, { readonly code: string; readonly display: string }>> = {
  AMB: { code: "5", display: "Hospital Outpatient Visit" },
  IMP: { code: "1", display: "Inpatient" },
  EMER: { code: "3", display: "Emergency" }
}
const DATE_TIME_KEYS = new Set(["start", "end", "effectiveDateTime", "onsetDateTime", "authoredOn", "recordedDate", "performedDateTime", "date"])
/** A date-only value of one of those keys, at any depth, in a line as JSON.stringify writes it (no spaces; a key in a string value would have its quotes escaped). */
const DATE_ONLY_VALUE = new RegExp(`"(${[...DATE_TIME_KEYS].join("|")})":"(\\d{4}-\\d{2}-\\d{2})"`, "g")

/** One line in the vendor's shapes: a line with an encounter class is read and rewritten; any other only has its dates changed, in place. */
const vendorLine = (text: string): string =>
  text.includes('"class"')
    ? JSON.stringify(JSON.parse(text, (key, value) => {
      if (DATE_TIME_KEYS.has(key) && typeof value === "string" && /^\d{4}-\d{2}-\d{2}$/.test(value)) return eveningInNewYork(value)
      if (key === "class" && value !== null && typeof value === "object" && EPIC_CLASSES[value.code] !== undefined) return { system: EPIC_CLASS, ...EPIC_CLASSES[value.code] }
      return value
    }))
    : text.replace(DATE_ONLY_VALUE, (_, key: string, day: string) => `"${key}":"${eveningInNewYork(day)}"`)

/**
 * The EHR-style export in a vendor's shapes: Epic's encounter classes; every date-time an instant in
 * UTC (a New York evening is the next day in UTC); Synthea's social-history findings written as
 * Conditions; a Patient without a birth date, with a condition. None of it changes what the data
 * says, read with `--time-zone America/New_York`.
 */
const asVendorExport = (from: string): string => {
  const to = join(tempDataDir(), "vendor")
  mkdirSync(to)
  for (const file of readdirSync(from)) {
    if (!file.endsWith(".ndjson")) {
      copyFileSync(join(from, file), join(to, file))
      continue
    }
    const lines = readFileSync(join(from, file), "utf8").trim().split("\n").map(vendorLine)
    if (file === "Patient.ndjson") lines.push(JSON.stringify({ resourceType: "Patient", id: "no-birth-date", gender: "female" }))
    if (file === "Condition.ndjson") {
      const condition = (id: string, patient: string, code: string, display: string) =>
        JSON.stringify({ resourceType: "Condition", id, subject: { reference: `Patient/${patient}` }, code: { coding: [{ system: "http://snomed.info/sct", code, display }] }, onsetDateTime: eveningInNewYork("2025-01-06") })
      lines.push(condition("sdoh-1", "1", "160903007", "Full-time employment (finding)"), condition("sdoh-2", "2", "73595000", "Stress (finding)"), condition("orphan", "no-birth-date", "44054006", "Diabetes mellitus type 2 (disorder)"))
    }
    writeFileSync(join(to, file), lines.join("\n") + "\n")
  }
  return to
}

beforeAll(async () => {
  original = tempDataDir()
  hcc(original, ["data", "generate", "--patients", String(PATIENTS), "--seed", "11"])
  bulk = join(tempDataDir(), "bulk")
  hcc(original, ["data", "export", "--format", "fhir", "--gzip", bulk])
  imported = tempDataDir()
  summary = JSON.parse(hcc(imported, ["data", "import", "--format", "fhir", bulk, "--json"]))
  const ehr = tempDataDir()
  const ehrExport = asEhrExport(bulk)
  ehrSummary = JSON.parse(hcc(ehr, ["data", "import", "--format", "fhir", ehrExport, "--json"]))
  const vendor = tempDataDir()
  vendorSummary = JSON.parse(hcc(vendor, ["data", "import", "--format", "fhir", asVendorExport(ehrExport), "--time-zone", "America/New_York", "--json"]))
  servers = await Promise.all([original, imported, ehr, vendor].map((dataDir) => startServer({ dataDir })))
  await Promise.all(servers.map((s) => waitReady(s)))
  // About a minute on an idle machine; a full run shares both cores with other files' servers.
}, 480_000)

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()))
})

describe("FHIR export → import", () => {
  it("writes Bulk Data files, one resource type each, gzip'd", () => {
    const files = readdirSync(bulk).filter((f) => f.endsWith(".ndjson.gz")).sort()
    expect(files).toEqual(["AdverseEvent", "CodeSystem", "Condition", "Encounter", "Medication", "MedicationRequest", "Observation", "Organization", "Patient", "Procedure"].map((t) => `${t}.ndjson.gz`))
    expect(summary.read.Patient).toBe(PATIENTS)
    // A large export is read on parse threads, one per core (parse-threads.test.ts: a small one is not).
    expect(summary.parse_threads).toBe(availableParallelism())
    expect(summary.as_of).toBe("2026-09-30")
    expect(summary.unmapped).toEqual([])
  })

  it("gives back the same tables (ids, codes, dates, scores, adherence, outcomes, surveillance)", () => {
    const a = csvExport(original)
    const b = csvExport(imported)
    for (const file of Object.keys(a)) {
      if (file === "dataset_info.csv" || file === "source_ids.csv") continue
      if (file === "device_studies.csv") {
        // Studies without an implant have no Procedure to come back with; every other comes back the same.
        const back = new Set(b[file]!.split("\n"))
        const used = new Set(b["device_implants.csv"]!.split("\n").slice(1).map((l) => l.split(",")[3]))
        for (const line of a[file]!.split("\n").slice(1)) if (used.has(line.split(",")[0])) expect(back.has(line), line).toBe(true)
        continue
      }
      expect(b[file], file).toBe(a[file])
    }
    expect(b["source_ids.csv"]).toContain("patients,1,Patient/1\n")
  })

  it("the README's sample calls give identical answers", async () => {
    const calls = readmeCalls()
    expect(calls.map(([path]) => path)).toEqual(["/v1/clinical", "/v1/population", "/v1/drug-outcomes", "/v1/risk-model", "/v1/one-health", "/v1/device-outcomes", "/v1/temporal"])
    let answered = 0
    for (const [path, body] of calls) {
      const [a, b] = await Promise.all(servers.slice(0, 2).map((s) => call(s, path, { body })))
      expect(b!.status, path).toBe(a!.status)
      const [ja, jb] = await Promise.all([a!.json(), b!.json()]) as [Record<string, unknown>, Record<string, unknown>]
      delete ja.request_id
      delete jb.request_id
      expect(jb, path).toEqual(ja)
      if (a!.status === 200) answered++
    }
    expect(answered).toBeGreaterThanOrEqual(6)
  })
})

describe("an EHR-style export (standard codes only)", () => {
  const ehr = () => servers[2]!
  it("imports with every code mapped through the shipped concept maps (the CGM, which has no standard code, is left out)", () => {
    expect(ehrSummary.unmapped).toEqual([])
    expect(ehrSummary.rows.patients).toBe(PATIENTS)
    expect(ehrSummary.left_out["Procedure not about an implant: left out"]).toBeGreaterThan(0)
  })

  it("answers all seven endpoints from the imported data", async () => {
    for (const [path, body] of readmeCalls()) {
      const r = await call(ehr(), path, { body })
      expect(r.status, `${path}: ${await r.clone().text()}`).toBe(200)
      expect(r.headers.get("hcc-dataset-source")).toBe("imported")
    }
  })

  it("the catalog lists the standard codes and the axis coverage", async () => {
    const catalog = (await (await call(ehr(), "/v1/catalog")).json()) as Record<string, any>
    expect(catalog.standard_codes.condition.type_2_diabetes).toBe("snomed:44054006")
    expect(catalog.standard_codes.drug.metformin).toBe("rxnorm:6809")
    expect(catalog.dataset).toMatchObject({ source: "imported", format: "fhir", patients: PATIENTS })
    for (const axis of catalog.axes) expect(catalog.dataset.axis_coverage[axis]).toBeGreaterThan(0.9)
  })

  it("a condition named by SNOMED CT or ICD-10-CM code selects the same cohort as by the service's code", async () => {
    const ask = async (conditions: ReadonlyArray<string>) => {
      const r = await call(ehr(), "/v1/population", { body: { cohort_definition: { age_range: "45-65", conditions }, analysis_type: "trend" } })
      expect(r.status).toBe(200)
      return (await r.json()) as Record<string, unknown>
    }
    const byCode = await ask(["type_2_diabetes"])
    expect(byCode.cohort_size).toBeGreaterThan(100)
    expect(await ask(["snomed:44054006"])).toEqual(byCode)
    expect(await ask(["icd10cm:E11.9"])).toEqual(byCode)
    expect(await ask(["icd10cm:E11"])).toEqual(byCode)
    const unknown = await call(ehr(), "/v1/population", { body: { cohort_definition: { conditions: ["snomed:999999999"] }, analysis_type: "trend" } })
    expect(unknown.status).toBe(422)
    expect(((await unknown.json()) as Record<string, unknown>).code).toBe("unknown_condition")
  })
})

describe("the same export in a vendor's shapes (Epic classes, UTC instants, social history as conditions, a patient without a birth date)", () => {
  it("reads every shape: the same patients, encounters and conditions, what is no diagnosis left out and counted", () => {
    expect(vendorSummary.rows).toEqual({ ...ehrSummary.rows })
    expect(vendorSummary.left_out["Patient without a birth date: left out, with all that is about them (every cohort needs an age)"]).toBe(1)
    expect(vendorSummary.left_out["Condition about a patient left out: left out"]).toBe(1)
    expect(vendorSummary.left_out["Condition recording social history or a care situation (e.g. employment, stress, medication review due), not a diagnosis: left out"]).toBe(2)
  })

  it("the README's sample calls give the answers the EHR-style export gives", async () => {
    for (const [path, body] of readmeCalls()) {
      const [a, b] = await Promise.all([servers[2]!, servers[3]!].map((s) => call(s, path, { body })))
      expect(b!.status, path).toBe(a!.status)
      const [ja, jb] = await Promise.all([a!.json(), b!.json()]) as [Record<string, unknown>, Record<string, unknown>]
      delete ja.request_id
      delete jb.request_id
      expect(jb, path).toEqual(ja)
    }
  })
})
