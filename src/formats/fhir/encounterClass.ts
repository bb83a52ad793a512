/**
 * Encounter.class → the dataset's encounter kind: the shipped encounter-class map (HL7 v3 ActCode
 * under its R4 and earlier URIs, HL7 v2 table 0004), else, for a system the map does not know, the
 * class's display.
 */
import type * as fhir4 from "fhir/r4.js"
import { lookup } from "../../health/ConceptMaps.ts"
import { systemOfFhirUri } from "../../plugin/codeSystems.ts"
import { systemName } from "../../pipeline/concepts.ts"
import type { EncounterKind } from "../../pipeline/facts.ts"

/**
 * The kind a class's display names, for a class of a system the encounter-class map does not know
 * (R4's binding of Encounter.class is extensible: Epic sends its own, `urn:oid:1.2.840.114350…`,
 * with displays such as "Inpatient", "Emergency", "Hospital Outpatient Visit"). An admission is
 * inpatient, also from the emergency department; words that name no visit kind give none.
 */
export const kindOfDisplay = (display: string | undefined): EncounterKind | null => {
  const text = display?.toLowerCase() ?? ""
  if (/\b(inpatient|admission|admit|admitted)\b/.test(text)) return "inpatient"
  if (/\bemergency\b/.test(text)) return "emergency"
  if (/\b(outpatient|ambulatory|office visit|clinic visit|telehealth|telemedicine|virtual visit)\b/.test(text)) return "outpatient"
  return null
}

/** How the summary names a class left out: its code, and for a system the map does not know, its display and system. */
export const classLabel = (cls: fhir4.Coding | undefined): string => {
  if (cls === undefined) return "(none)"
  const code = cls.code ?? "(no code)"
  return cls.system === undefined || systemOfFhirUri(cls.system) !== undefined ? code : `${code}${cls.display === undefined ? "" : ` '${cls.display}'`} of ${cls.system}`
}

export const encounterKind = (cls: fhir4.Coding | undefined): EncounterKind | null => {
  const system = systemName(cls?.system) ?? "actcode"
  if (cls?.code === undefined) return null
  const hit = lookup("encounter_class", { system, code: cls.code })[0]
  if (hit !== undefined) return hit.target as EncounterKind
  return systemOfFhirUri(cls.system) === undefined && cls.system !== undefined ? kindOfDisplay(cls.display) : null
}
