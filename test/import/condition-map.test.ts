/**
 * The condition map follows the ICD-10-CM tabular list, not only its category headings: E66.3
 * (overweight) is not obesity though E66 is "Overweight and obesity"; F32.81 (premenstrual
 * dysphoric disorder) is not depression though it sits under F32; I11–I13 (hypertensive heart and
 * kidney disease) are hypertension. What a source's coding maps to is what its import counts.
 */
import { describe, expect, it } from "vitest"
import { conceptOf } from "../../src/pipeline/concepts.ts"

const ICD10CM = "http://hl7.org/fhir/sid/icd-10-cm"
const ICD10 = "http://hl7.org/fhir/sid/icd-10"
const targets = (system: string, code: string) => conceptOf("condition", [{ system, code }]).targets

describe("the condition map's ICD-10 categories", () => {
  it("overweight (E66.3) is not obesity; the rest of E66 is", () => {
    expect(targets(ICD10CM, "E66.3")).toEqual([])
    expect(targets(ICD10CM, "E663")).toEqual([])
    for (const code of ["E66.01", "E66.09", "E66.811", "E66.9"]) expect(targets(ICD10CM, code)).toEqual(["obesity"])
  })

  it("premenstrual dysphoric disorder (F32.81) is not depression; the other F32 codes are", () => {
    expect(targets(ICD10CM, "F32.81")).toEqual([])
    for (const code of ["F32.0", "F32.89", "F32.9", "F32.A"]) expect(targets(ICD10CM, code)).toEqual(["depression"])
  })

  it("hypertensive heart and kidney disease (I11–I13) are hypertension, in ICD-10-CM and WHO ICD-10", () => {
    for (const code of ["I11.0", "I11.9", "I12.9", "I13.10", "I13.2"]) expect(targets(ICD10CM, code)).toEqual(["hypertension"])
    for (const code of ["I11.9", "I12.0", "I13.1"]) expect(targets(ICD10, code)).toEqual(["hypertension"])
  })
})
