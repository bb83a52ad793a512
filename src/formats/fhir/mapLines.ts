/**
 * One piece of a bulk file's lines → what the import keeps of it: facts (each with its line),
 * problems (`path: reason` at a line) and the records left out, by reason. A pure function of the
 * lines and the mapping context, run on the import's parse threads (parseWorker.ts), or on the
 * importing thread for a small export (parsePool.ts).
 */
import type * as fhir4 from "fhir/r4.js"
import { type AxisModelFile, compileAxisModel } from "../../pipeline/AxisModel.ts"
import type { Fact } from "../../pipeline/facts.ts"
import { compileRegionMap, type RegionMapFile } from "../../pipeline/regions.ts"
import { dayReader } from "./common.ts"
import { type FhirContext, mapResource, type MedicationCode } from "./resources.ts"

/** What a thread reading the export starts with: the mapping context's parts, as plain data. */
export interface ParseThreadInit {
  readonly axisModel: AxisModelFile
  readonly regionMap: RegionMapFile
  /** The IANA time zone instants are read in (undefined: dates as written). */
  readonly timeZone: string | undefined
}

/** The mapping context made from what a thread starts with; phase one's Medications go into `medications` once read. */
export const parseContext = (init: ParseThreadInit, medications: Map<string, MedicationCode>): FhirContext => ({
  day: dayReader(init.timeZone),
  axisModel: compileAxisModel(init.axisModel),
  regions: compileRegionMap(init.regionMap),
  medications
})

/** What a piece of lines gave. */
export interface LinesBatch {
  /** Facts with the line each came from. */
  readonly facts: Array<readonly [number, Fact]>
  /**
   * Every resource read with its id, as line, id and `meta.lastUpdated` (epoch milliseconds, or
   * null when absent or not an instant): a resource read again (an incremental export beside the
   * one it updates) is resolved by its versions (Staging.ts), in line order.
   */
  readonly records: Array<readonly [number, string, number | null]>
  readonly problems: Array<{ readonly line: number; readonly path: string; readonly reason: string }>
  /** Records left out, by reason. */
  readonly notes: Record<string, number>
  /** Resources read. */
  read: number
}

/** JSON.parse that returns its error instead of throwing it. */
const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch (e) {
    return e instanceof SyntaxError ? e : new SyntaxError(String(e))
  }
}

/** `meta.lastUpdated` in epoch milliseconds (FHIR R4 instant: always with a time zone), or null. */
const lastUpdatedOf = (resource: fhir4.FhirResource): number | null => {
  const text = resource.meta?.lastUpdated
  if (typeof text !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text)) return null
  const ms = Date.parse(text)
  return Number.isNaN(ms) ? null : ms
}

/** Maps the lines of a file of `type` resources, the first being line `first`. */
export const mapLines = (lines: ReadonlyArray<string>, first: number, type: string, ctx: FhirContext): LinesBatch => {
  const batch: LinesBatch = { facts: [], records: [], problems: [], notes: {}, read: 0 }
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!
    if (text.trim() === "") continue
    const line = first + i
    const parsed = parseJson(text)
    if (parsed instanceof SyntaxError) {
      batch.problems.push({ line, path: "", reason: `not JSON: ${parsed.message}` })
      continue
    }
    const resource = parsed as fhir4.FhirResource
    if (typeof resource !== "object" || resource === null || typeof resource.resourceType !== "string") {
      batch.problems.push({ line, path: "resourceType", reason: "is required (each line is one FHIR resource)" })
      continue
    }
    if (resource.resourceType !== type) {
      batch.problems.push({ line, path: "resourceType", reason: `'${resource.resourceType}' in a file of ${type} resources (a bulk file holds one type)` })
      continue
    }
    batch.read++
    if (typeof resource.id === "string" && resource.id !== "") batch.records.push([line, resource.id, lastUpdatedOf(resource)])
    const mapped = mapResource(resource, ctx)
    for (const p of mapped.problems) batch.problems.push({ line, path: p.path, reason: p.reason })
    for (const n of mapped.notes ?? []) batch.notes[n] = (batch.notes[n] ?? 0) + 1
    if (mapped.problems.length > 0) continue
    for (const f of mapped.facts) batch.facts.push([line, f])
  }
  return batch
}

/** The non-empty lines of a piece (for files of types the importer does not read). */
export const countLines = (lines: ReadonlyArray<string>): number => {
  let n = 0
  for (const l of lines) if (l.trim() !== "") n++
  return n
}
