/**
 * `hcc data export --format fhir`: any dataset (the generated one too) as FHIR R4 Bulk Data files
 * (`<Type>.ndjson`, or `.ndjson.gz`), written so that importing them gives the same dataset and so
 * the same answers. Codes carry the service's own code system (`urn:hcc:vocabulary:<kind>`) beside
 * their standard code; what FHIR has no element for is written in the service's own terms, which
 * the importer reads first: direct axis observations (system `urn:hcc:axis`), a course's adherence
 * (extension `urn:hcc:fhir:adherence`), a region (extension `urn:hcc:fhir:region`), device outcome
 * observations (system `urn:hcc:vocabulary:device_metric`, about the implant Procedure), and the
 * vocabularies as CodeSystem resources. The surveillance series, which FHIR does not hold, are
 * written beside as CSV in the layout of docs/data.md.
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"
import { AXES } from "../../plugin/axes.ts"
import { lastDayOfMonth, parseDate, parseMonth } from "../../health/calendar.ts"
import { fhirUriOf } from "../../plugin/codeSystems.ts"
import { forEachPage, writeTable } from "../csv/exportCsv.ts"
import { tableSpec } from "../../health/healthTables.ts"
import { formatDate } from "../../health/calendar.ts"
import { ownSystem } from "../../pipeline/concepts.ts"
import { HCC_ADHERENCE_EXTENSION, HCC_REGION_EXTENSION, HCC_VOCABULARY_PREFIX } from "./resources.ts"

/** The system of direct axis observations (the axis model's `direct_system`). */
const AXIS_SYSTEM = "urn:hcc:axis"
const ACT_CODE = "http://terminology.hl7.org/CodeSystem/v3-ActCode"
const ENCOUNTER_CLASS: Readonly<Record<string, string>> = { outpatient: "AMB", emergency: "EMER", inpatient: "IMP" }
/** A FHIR id: letters, digits, `-` and `.`, at most 64. */
const FHIR_ID = /^[A-Za-z0-9.-]{1,64}$/

interface Entry {
  readonly code: string
  readonly label: string
  readonly system: string | null
  readonly standard: string | null
}

/** One output file: lines are buffered and written a page at a time (gzip'd as one member per page). */
const output = (folder: string, type: string, gzip: boolean) => {
  const fd = openSync(join(folder, `${type}.ndjson${gzip ? ".gz" : ""}`), "w")
  let buffer: Array<string> = []
  let lines = 0
  const flush = () => {
    if (buffer.length === 0) return
    const text = buffer.join("\n") + "\n"
    if (gzip) writeSync(fd, gzipSync(text))
    else writeSync(fd, text)
    buffer = []
  }
  return {
    write: (resource: object) => {
      buffer.push(JSON.stringify(resource))
      lines++
      if (buffer.length >= 5000) flush()
    },
    close: () => {
      flush()
      closeSync(fd)
      return lines
    }
  }
}

/** Options of an export. */
export interface FhirExportOptions {
  readonly folder: string
  readonly gzip?: boolean
  readonly onProgress?: (done: number) => Effect.Effect<void>
}

/** The CodeSystem of one kind of the dataset's vocabulary, each entry with its standard code as a property. */
const codeSystemOf = (kind: string, entries: ReadonlyArray<Entry>) => ({
  resourceType: "CodeSystem",
  id: `hcc-${kind.replaceAll("_", "-")}`,
  url: `${HCC_VOCABULARY_PREFIX}${kind}`,
  name: kind,
  status: "active",
  content: "complete",
  property: [{ code: "standard", description: "The entry's standard code", type: "Coding" }],
  concept: entries.map((e) => ({
    code: e.code,
    display: e.label,
    ...(e.system === null || e.standard === null ? {} : { property: [{ code: "standard", valueCoding: { system: fhirUriOf(e.system) ?? e.system, code: e.standard } }] })
  }))
})

const patientRef = (id: unknown) => ({ reference: `Patient/${String(id)}` })

/** A patients row as a Patient. */
const patientOf = ([id, birthYear, sex, region, death]: ReadonlyArray<unknown>) => ({
  resourceType: "Patient",
  id: String(id),
  extension: [{ url: HCC_REGION_EXTENSION, valueCode: String(region) }],
  gender: String(sex),
  birthDate: String(birthYear).padStart(4, "0"),
  ...(death === null ? {} : { deceasedDateTime: String(death) })
})

/** An encounters row as an Encounter. */
const encounterOf = ([id, patient, kind, start, end]: ReadonlyArray<unknown>) => ({
  resourceType: "Encounter",
  id: String(id),
  status: "finished",
  class: { system: ACT_CODE, code: ENCOUNTER_CLASS[String(kind)] },
  subject: patientRef(patient),
  period: { start: String(start), end: String(end) }
})

/** A drug_exposures row as a MedicationRequest, its adherence an extension. */
const medicationRequestOf = ([id, patient, drug, start, end, adherence]: ReadonlyArray<unknown>, concept: (kind: string, code: string) => object) => ({
  resourceType: "MedicationRequest",
  id: String(id),
  ...(adherence === null ? {} : { extension: [{ url: HCC_ADHERENCE_EXTENSION, valueDecimal: Number(adherence) }] }),
  status: end === null ? "active" : "completed",
  intent: "order",
  medicationCodeableConcept: concept("drug", String(drug)),
  subject: patientRef(patient),
  authoredOn: String(start),
  dosageInstruction: [{ timing: { repeat: { boundsPeriod: { start: String(start), ...(end === null ? {} : { end: String(end) }) } } } }]
})

/** A patient's condition as a Condition: active and confirmed. */
const conditionOf = (id: string, patient: unknown, code: object) => ({
  resourceType: "Condition",
  id,
  clinicalStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-clinical", code: "active" }] },
  verificationStatus: { coding: [{ system: "http://terminology.hl7.org/CodeSystem/condition-ver-status", code: "confirmed" }] },
  code,
  subject: patientRef(patient)
})

/** An adverse event as an AdverseEvent, its drug the suspect Medication. */
const adverseEventOf = (id: unknown, patient: unknown, event: object, date: unknown, medication: string | undefined) => ({
  resourceType: "AdverseEvent",
  id: String(id),
  actuality: "actual",
  event,
  subject: patientRef(patient),
  date: String(date),
  suspectEntity: [{ instance: { reference: `Medication/${medication}` } }]
})

/** An implant as a Procedure, performed by (and on behalf of) its study's Organization. */
const procedureOf = (id: unknown, patient: unknown, code: object, date: unknown, organization: string | undefined) => {
  const org = { reference: `Organization/${organization}` }
  return {
    resourceType: "Procedure",
    id: String(id),
    status: "completed",
    code,
    subject: patientRef(patient),
    performedDateTime: String(date),
    performer: [{ actor: org, onBehalfOf: org }]
  }
}

/**
 * The Observations: each implant's outcomes (focused on its Procedure), and the monthly scores as
 * one observation a month, dated the month's last day (as_of in as_of's month, so the latest date of
 * the export is the dataset's as_of).
 */
const writeObservations = (out: ReturnType<typeof output>, implants: ReadonlyMap<number, { readonly date: string; readonly patient: unknown }>, asOfDay: number, within: (share: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    let n = 0
    yield* forEachPage(tableSpec("device_outcomes"), (rows) =>
      Effect.sync(() => {
        for (const [implant, metric, value] of rows) {
          out.write({
            resourceType: "Observation",
            id: `o${++n}`,
            status: "final",
            code: { coding: [{ system: ownSystem("device_metric"), code: String(metric) }] },
            subject: patientRef(implants.get(Number(implant))?.patient),
            focus: [{ reference: `Procedure/${String(implant)}` }],
            effectiveDateTime: implants.get(Number(implant))?.date,
            valueQuantity: { value: Number(value) }
          })
        }
      }))
    // Monthly scores as one observation a month, dated the month's last day (as_of in as_of's
    // month, so the latest date of the export is the dataset's as_of).
    yield* forEachPage(tableSpec("axis_scores"), (rows) =>
      Effect.sync(() => {
        for (const row of rows) {
          const component: Array<object> = []
          AXES.forEach((axis, a) => {
            const v = row[a + 2]
            if (v !== null && v !== undefined) component.push({ code: { coding: [{ system: AXIS_SYSTEM, code: axis }] }, valueQuantity: { value: Number(v) } })
          })
          if (component.length === 0) continue
          const month = parseMonth(String(row[1]))
          out.write({
            resourceType: "Observation",
            id: `s${++n}`,
            status: "final",
            code: { coding: [{ system: AXIS_SYSTEM, code: "scores", display: "Monthly axis scores" }] },
            subject: patientRef(row[0]),
            effectiveDateTime: formatDate(Math.min(lastDayOfMonth(month), asOfDay)),
            component
          })
        }
      }), within)
  })

/** Writes the dataset as FHIR Bulk Data files; returns the resources written by type. */
export const exportFhir = (options: FhirExportOptions) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const folder = options.folder
    const gzip = options.gzip === true
    const progress = options.onProgress ?? (() => Effect.void)
    yield* Effect.try(() => mkdirSync(folder, { recursive: true }))
    const info = new Map((yield* sql`SELECT key, value FROM dataset_info`.values).map((r) => [String(r[0]), String(r[1])]))
    const asOfDay = parseDate(info.get("as_of") ?? "")
    if (Number.isNaN(asOfDay)) return yield* Effect.fail(new Error("the database holds no complete dataset (dataset_info has no as_of)"))

    const vocabulary = new Map<string, Array<Entry>>()
    for (const [kind, code, label, system, standard] of yield* sql`SELECT kind, code, label, system, standard_code FROM vocabulary`.values) {
      const list = vocabulary.get(String(kind)) ?? []
      list.push({ code: String(code), label: String(label), system: system === null ? null : String(system), standard: standard === null ? null : String(standard) })
      vocabulary.set(String(kind), list)
    }
    for (const list of vocabulary.values()) list.sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
    const entryOf = (kind: string, code: string) => vocabulary.get(kind)?.find((e) => e.code === code)
    /** Our coding, then the entry's standard coding. */
    const concept = (kind: string, code: string) => {
      const e = entryOf(kind, code)
      const coding: Array<object> = [{ system: ownSystem(kind), code, display: e?.label ?? code }]
      if (e?.system != null && e.standard !== null) coding.push({ system: fhirUriOf(e.system) ?? e.system, code: e.standard })
      return { coding, text: e?.label ?? code }
    }
    const written: Record<string, number> = {}
    const steps = 11
    let step = 0
    const next = () => progress(++step / steps)
    /** Within the step under way: the largest tables are most of an export's time. */
    const within = (share: number) => progress((step + share) / steps)
    const file = <A>(type: string, body: (out: ReturnType<typeof output>) => Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
      Effect.gen(function*() {
        const out = yield* Effect.try(() => output(folder, type, gzip))
        yield* body(out).pipe(Effect.ensuring(Effect.sync(() => {
          written[type] = (written[type] ?? 0) + out.close()
        })))
        yield* next()
      })

    yield* file("CodeSystem", (out) =>
      Effect.sync(() => {
        for (const [kind, entries] of [...vocabulary].sort(([a], [b]) => (a < b ? -1 : 1))) out.write(codeSystemOf(kind, entries))
      }))

    const studyIds = new Map<string, string>()
    yield* file("Organization", (out) =>
      forEachPage(tableSpec("device_studies"), (rows) =>
        Effect.sync(() => {
          for (const [id, device, region] of rows) {
            const fhirId = FHIR_ID.test(String(id)) ? String(id) : `study-${studyIds.size + 1}`
            studyIds.set(String(id), fhirId)
            out.write({
              resourceType: "Organization",
              id: fhirId,
              identifier: [{ system: "urn:hcc:device-study", value: String(id) }],
              name: `${String(id)} (${String(device)} study)`,
              extension: [{ url: HCC_REGION_EXTENSION, valueCode: String(region) }]
            })
          }
        })))

    const drugIds = new Map((vocabulary.get("drug") ?? []).map((e, i) => [e.code, `drug-${i + 1}`]))
    yield* file("Medication", (out) =>
      Effect.sync(() => {
        for (const [code, id] of drugIds) out.write({ resourceType: "Medication", id, code: concept("drug", code) })
      }))

    yield* file("Patient", (out) =>
      forEachPage(tableSpec("patients"), (rows) =>
        Effect.sync(() => {
          for (const row of rows) out.write(patientOf(row))
        })))

    yield* file("Condition", (out) => {
      let n = 0
      return forEachPage(tableSpec("patient_conditions"), (rows) =>
        Effect.sync(() => {
          for (const [patient, code] of rows) out.write(conditionOf(`c${++n}`, patient, concept("condition", String(code))))
        }))
    })

    yield* file("Encounter", (out) =>
      forEachPage(tableSpec("encounters"), (rows) =>
        Effect.sync(() => {
          for (const row of rows) out.write(encounterOf(row))
        }), within))

    yield* file("MedicationRequest", (out) =>
      forEachPage(tableSpec("drug_exposures"), (rows) =>
        Effect.sync(() => {
          for (const row of rows) out.write(medicationRequestOf(row, concept))
        })))

    yield* file("AdverseEvent", (out) =>
      forEachPage(tableSpec("adverse_events"), (rows) =>
        Effect.sync(() => {
          for (const [id, patient, drug, eventType, date] of rows) out.write(adverseEventOf(id, patient, concept("adverse_event", String(eventType)), date, drugIds.get(String(drug))))
        })))

    const implants = new Map<number, { readonly date: string; readonly patient: unknown }>()
    yield* file("Procedure", (out) =>
      forEachPage(tableSpec("device_implants"), (rows) =>
        Effect.sync(() => {
          for (const [id, patient, device, study, date] of rows) {
            implants.set(Number(id), { date: String(date), patient })
            out.write(procedureOf(id, patient, concept("device", String(device)), date, studyIds.get(String(study))))
          }
        })))

    yield* file("Observation", (out) => writeObservations(out, implants, asOfDay, within))

    for (const table of ["animal_surveillance", "human_surveillance"] as const) yield* writeTable(folder, tableSpec(table))
    yield* next()
    return written
  })
