/** A FHIR Patient's sex where `gender` is absent: US Core's sex extensions (docs/data.md, the Patient rule). */
import type * as fhir4 from "fhir/r4.js"
import type { Sex } from "../../plugin/vocabularies.ts"
import { extensionOf } from "./common.ts"

/**
 * US Core's sex extensions, read when `gender` is absent: US Core 6+ `us-core-individual-sex`
 * (a SNOMED CT coding: 248152002 Female, 248153007 Male; other codes say nothing we hold), else
 * US Core 3–6's `us-core-birthsex` (valueCode F, M; UNK and others unknown).
 */
const US_CORE_SEX = "http://hl7.org/fhir/us/core/StructureDefinition/us-core-individual-sex"
const US_CORE_BIRTH_SEX = "http://hl7.org/fhir/us/core/StructureDefinition/us-core-birthsex"
const SNOMED_SEX: Readonly<Record<string, Sex>> = { "248152002": "female", "248153007": "male" }
const BIRTH_SEX: Readonly<Record<string, Sex>> = { F: "female", M: "male" }
/** A Patient's sex from US Core's extensions (see above), else undefined. */
export const extensionSexOf = (r: fhir4.Patient): Sex | undefined => {
  const coding = extensionOf(r, US_CORE_SEX)?.valueCoding
  const individual = coding?.code === undefined ? undefined : SNOMED_SEX[coding.code]
  if (individual !== undefined) return individual
  const birth = extensionOf(r, US_CORE_BIRTH_SEX)?.valueCode
  return birth === undefined ? undefined : BIRTH_SEX[birth]
}

