/**
 * What the FHIR mapping rules share (resources.ts, observations.ts): their context, the shape of
 * what a rule gives, and the readers of FHIR's dates, references and codings.
 */
import type * as fhir4 from "fhir/r4.js"
import { parseDate } from "../../health/calendar.ts"
import type { CompiledAxisModel } from "../AxisModel.ts"
import type { SourceCoding } from "../concepts.ts"
import type { Fact, Mapped, Problem } from "../facts.ts"
import type { RegionMap } from "../regions.ts"

/** What mapping reads besides the resource: phase one's Medication resources, the axis and region maps. */
export interface FhirContext {
  readonly axisModel: CompiledAxisModel
  readonly regions: RegionMap
  /** Medication resources by id: their codings and text. */
  readonly medications: ReadonlyMap<string, MedicationCode>
}

/** A Medication resource's code. */
export interface MedicationCode {
  readonly codings: ReadonlyArray<SourceCoding>
  readonly text?: string | undefined
}

/** A rule that gives facts. */
export const fact = (...facts: ReadonlyArray<Fact>): Mapped => ({ facts, problems: [] })
export const skip = (note: string): Mapped => ({ facts: [], problems: [], notes: [note] })
export const problem = (path: string, reason: string): Mapped => ({ facts: [], problems: [{ path, reason }] })
export const isProblem = (x: unknown): x is Problem => typeof x === "object" && x !== null && "reason" in x && "path" in x

/**
 * A FHIR date or dateTime → the day it names (the date as written: a time zone offset does not
 * move it); a partial date (`YYYY`, `YYYY-MM`) → its first day. A Problem when it does not parse.
 */
export const dayOf = (value: unknown, path: string): number | Problem | undefined => {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "string") return { path, reason: `expected a date, got ${JSON.stringify(value)}` }
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?)?)?$/.exec(value)
  const day = m === null ? Number.NaN : parseDate(`${m[1]}-${m[2] ?? "01"}-${m[3] ?? "01"}`)
  return Number.isNaN(day) ? { path, reason: `'${value}' is not a FHIR date or dateTime` } : day
}

/**
 * The id a reference names, for a resource type: `Type/id`, an absolute URL ending so, a version
 * (`/_history/n`) dropped, `urn:uuid:id` (Bundle-style, any type); a conditional reference
 * (`Type?identifier=system|value`) or a logical one (`identifier`) → `?system|value`, resolved
 * against the identifiers of the export's resources. A Problem when it names another type or
 * cannot be read; undefined when there is no reference.
 */
export const referenceId = (ref: fhir4.Reference | undefined, type: string, path: string): string | Problem | undefined => {
  if (ref === undefined || ref === null) return undefined
  if (typeof ref !== "object") return { path, reason: "expected a Reference" }
  const text = ref.reference
  if (text === undefined) {
    const id = ref.identifier
    if (id?.value !== undefined) return `?${id.system ?? ""}|${id.value}`
    return undefined
  }
  if (typeof text !== "string") return { path, reason: "expected a Reference" }
  if (text.startsWith("urn:uuid:") || text.startsWith("urn:oid:")) return text.slice(text.indexOf(":", 4) + 1)
  const conditional = new RegExp(`(?:^|/)${type}\\?identifier=([^&]*)`).exec(text)
  if (conditional !== null) {
    const value = decodeURIComponent(conditional[1]!)
    return `?${value.includes("|") ? value : `|${value}`}`
  }
  const parts = text.replace(/\/_history\/[^/]+$/, "").split("/")
  const at = parts.length - 2
  if (at < 0 || parts[at + 1] === "") return { path, reason: `'${text}' is not a reference to a ${type}` }
  if (parts[at] !== type) return { path, reason: `'${text}' refers to a ${parts[at]}, not a ${type}` }
  return parts[at + 1]!
}

export const codingsOf = (cc: fhir4.CodeableConcept | undefined): ReadonlyArray<SourceCoding> =>
  Array.isArray(cc?.coding) ? cc.coding.filter((c) => typeof c === "object" && c !== null) : []

/** Whether a CodeableConcept names something (a coding with a code, or a text). */
export const hasCode = (cc: fhir4.CodeableConcept | undefined) => codingsOf(cc).some((c) => c.code !== undefined) || typeof cc?.text === "string"

/** The patient a resource is about (required): its id, or a Problem. */
export const subjectOf = (ref: fhir4.Reference | undefined, path: string): string | Problem => {
  const id = referenceId(ref, "Patient", path)
  return id === undefined ? { path, reason: "is required (the patient the resource is about)" } : id
}

