/**
 * What the FHIR mapping rules share (resources.ts, observations.ts): their context, the shape of
 * what a rule gives, and the readers of FHIR's dates, references and codings.
 */
import type * as fhir4 from "fhir/r4.js"
import { parseDate } from "../../health/calendar.ts"
import type { CompiledAxisModel } from "../../pipeline/AxisModel.ts"
import type { SourceCoding } from "../../pipeline/concepts.ts"
import type { Fact, Mapped, Problem } from "../../pipeline/facts.ts"
import type { RegionMap } from "../../pipeline/regions.ts"

/** What mapping reads besides the resource: phase one's Medication resources, the axis and region maps, the reader of dates. */
export interface FhirContext {
  readonly day: DayReader
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

/** Reads a FHIR date, dateTime or instant as a day (`path` names it in a problem). */
export type DayReader = (value: unknown, path: string) => number | Problem | undefined

/** date, dateTime, instant: the date, then a time with its offset (R4 requires one with a time). */
const DATE_TIME = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|([+-])(\d{2}):(\d{2}))?)?)?)?$/

const notADate = (value: unknown, path: string): Problem => ({ path, reason: typeof value === "string" ? `'${value}' is not a FHIR date or dateTime` : `expected a date, got ${JSON.stringify(value)}` })

/**
 * A FHIR date or dateTime → the day it names as written (a time zone offset does not move it); a
 * partial date (`YYYY`, `YYYY-MM`) → its first day. A Problem when it does not parse.
 */
export const dayOf: DayReader = (value, path) => {
  if (value === undefined || value === null) return undefined
  const m = typeof value === "string" ? DATE_TIME.exec(value) : null
  const day = m === null ? Number.NaN : parseDate(`${m[1]}-${m[2] ?? "01"}-${m[3] ?? "01"}`)
  return Number.isNaN(day) ? notADate(value, path) : day
}

/** Instants per cached day: a zone's local midnight falls on a quarter hour of UTC (every offset in use is a multiple of 15 minutes). */
const QUARTER_HOUR_MS = 15 * 60_000

/**
 * The reader of dates for an import: without a time zone, {@link dayOf}; with one (an IANA name),
 * a dateTime or instant that has a time and an offset is the day of that instant in the zone
 * (`2024-03-02T02:30:00Z` is 2024-03-01 in America/New_York), and a date without a time is the
 * day written. The zone's days are looked up once per quarter hour of UTC. Throws a RangeError
 * for a name the runtime's time zone database does not know.
 */
export const dayReader = (timeZone: string | undefined): DayReader => {
  if (timeZone === undefined) return dayOf
  const format = new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
  const days = new Map<number, number>()
  return (value, path) => {
    if (value === undefined || value === null) return undefined
    const m = typeof value === "string" ? DATE_TIME.exec(value) : null
    if (m === null) return notADate(value, path)
    if (m[4] === undefined || m[7] === undefined) return dayOf(value, path)
    if (Number.isNaN(parseDate(`${m[1]}-${m[2]}-${m[3]}`))) return notADate(value, path)
    const offset = m[7] === "Z" ? 0 : (m[8] === "-" ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10]))
    const instant = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0)) - offset * 60_000
    const quarter = Math.floor(instant / QUARTER_HOUR_MS)
    let day = days.get(quarter)
    if (day === undefined) {
      const parts = format.formatToParts(instant)
      const part = (type: string) => parts.find((p) => p.type === type)!.value
      day = parseDate(`${part("year")}-${part("month")}-${part("day")}`)
      if (days.size >= 1 << 20) days.clear()
      days.set(quarter, day)
    }
    return day
  }
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

/** A resource's extension of a URL, or undefined. */
export const extensionOf = (resource: { readonly extension?: ReadonlyArray<fhir4.Extension> | undefined }, url: string): fhir4.Extension | undefined =>
  Array.isArray(resource.extension) ? resource.extension.find((e) => e?.url === url) : undefined
