/**
 * PRAPARE answers as real exports write them: the LOINC answer code (LA…) with a display of the
 * writer's own. Synthea writes employment status 67875-5 as LA17956-6 "Unemployed (finding)" —
 * the SNOMED CT finding's name, not LOINC's "Unemployed" — and other writers translate or shorten
 * displays; the code is what the LOINC answer list (as the HL7 SDOH Clinical Care IG's PRAPARE
 * Questionnaire and US Core's PRAPARE examples give it) fixes. So an answer is matched by its code
 * first, and every answer of every "answers" instrument of the shipped model carries its code.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import model from "../../src/pipeline/axis-model.json" with { type: "json" }
import { type Table, tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

/** One answer: patient, question (LOINC), answer code (LOINC LA…), the display the source writes, the model's display of that answer. */
interface Answer {
  readonly patient: string
  readonly question: string
  readonly code: string
  readonly written: string
  readonly answer: string
}

// Every display below differs from the model's: only the code can match. Displays of SNOMED CT
// findings, as Synthea writes them, where one fits; a translation or paraphrase otherwise.
const ANSWERS: ReadonlyArray<Answer> = [
  { patient: "p1", question: "67875-5", code: "LA17956-6", written: "Unemployed (finding)", answer: "Unemployed" },
  { patient: "p1", question: "71802-3", code: "LA30190-5", written: "Homeless (finding)", answer: "I do not have housing (staying with others, in a hotel, in a shelter, living outside on the street, on a beach, in a car, or in a park)" },
  { patient: "p1", question: "93038-8", code: "LA13902-4", written: "Stress (finding)", answer: "Quite a bit" },
  { patient: "p1", question: "93029-7", code: "LA27722-0", written: "Social isolation (finding)", answer: "Less than once a week" },
  { patient: "p1", question: "82589-3", code: "LA30191-3", written: "Only received primary school education (finding)", answer: "Less than high school degree" },
  { patient: "p1", question: "93030-5", code: "LA30133-5", written: "Lack of access to transportation (finding)", answer: "Yes, it has kept me from medical appointments or from getting my medications" },
  { patient: "p1", question: "93026-3", code: "LA14072-5", written: "No estoy seguro", answer: "Unsure" },
  { patient: "p2", question: "67875-5", code: "LA30136-8", written: "Full-time employment (finding)", answer: "Full-time work" },
  { patient: "p2", question: "93033-9", code: "LA33-6", written: "Housing unsatisfactory (finding)", answer: "Yes" },
  { patient: "p2", question: "93038-8", code: "LA6568-5", written: "Not stressed", answer: "Not at all" },
  { patient: "p2", question: "93029-7", code: "LA30132-7", written: "Daily", answer: "5 or more times a week" },
  { patient: "p2", question: "82589-3", code: "LA30193-9", written: "Received higher education (finding)", answer: "More than high school" },
  { patient: "p2", question: "93030-5", code: "LA30134-3", written: "Transport problem (finding)", answer: "Yes, it has kept me from non-medical meetings, appointments, work, or from getting things that I need" },
  { patient: "p3", question: "67875-5", code: "LA30138-4", written: "Part-time employment (finding)", answer: "Part-time or temporary work" },
  { patient: "p3", question: "93038-8", code: "LA13863-8", written: "Un poco", answer: "A little bit" },
  { patient: "p3", question: "93029-7", code: "LA30130-1", written: "Limited social contact (finding)", answer: "1 or 2 times a week" },
  { patient: "p4", question: "93038-8", code: "LA13909-9", written: "Moderately stressed", answer: "Somewhat" }
]

type ModelAnswers = ReadonlyArray<{ readonly display: string; readonly score: number }>
const instrumentOf = (question: string) => model.instruments.find((i) => i.code.code === question)!

/** The model's score of an answer, by the model's display of it (displays and scores are the model's data). */
const scoreOf = (a: Answer): number => {
  const found = (instrumentOf(a.question).transform as { readonly answers: ModelAnswers }).answers.find((x) => x.display === a.answer)
  if (found === undefined) throw new Error(`the model has no answer "${a.answer}" for ${a.question}`)
  return found.score
}

/**
 * A patient's axis score in the month, written from docs/data.md ("The axis model"): the mean of
 * the scores its instruments gave in that calendar month, rounded to one decimal (the export writes
 * the number without trailing zeros). None of the means here falls on a half of the last digit.
 */
const expectedScores = (patient: string): Record<string, string> => {
  const byAxis = new Map<string, Array<number>>()
  for (const a of ANSWERS.filter((x) => x.patient === patient)) {
    const axis = instrumentOf(a.question).axis.toLowerCase()
    byAxis.set(axis, [...(byAxis.get(axis) ?? []), scoreOf(a)])
  }
  return Object.fromEntries([...byAxis].map(([axis, xs]) => [axis, String(Math.round((xs.reduce((s, x) => s + x, 0) / xs.length) * 10) / 10)]))
}

const PATIENTS = [...new Set(ANSWERS.map((a) => a.patient))]

let t: Record<string, Table>
let summary: Record<string, any>
const idOf = (source: string) => t.source_ids!.find((r) => r.table_name === "patients" && r.source_id === `Patient/${source}`)!.id
const march = (source: string) => t.axis_scores!.find((r) => r.patient_id === idOf(source) && r.month === "2024-03")

beforeAll(() => {
  const bulk = join(tempDataDir(), "bulk")
  mkdirSync(bulk, { recursive: true })
  writeFileSync(join(bulk, "Patient.ndjson"), PATIENTS.map((id) => JSON.stringify({ resourceType: "Patient", id, gender: "female", birthDate: "1970-06-01" })).join("\n") + "\n")
  // One Observation per answer, as Synthea writes PRAPARE items: the question's LOINC code, the answer as a coded concept whose text repeats the display.
  writeFileSync(join(bulk, "Observation.ndjson"), ANSWERS.map((a, i) => JSON.stringify({
    resourceType: "Observation",
    id: `o${i}`,
    status: "final",
    category: [{ coding: [{ system: "http://terminology.hl7.org/CodeSystem/observation-category", code: "survey" }] }],
    code: { coding: [{ system: "http://loinc.org", code: a.question }] },
    subject: { reference: `Patient/${a.patient}` },
    effectiveDateTime: "2024-03-05T10:00:00-05:00",
    valueCodeableConcept: { coding: [{ system: "http://loinc.org", code: a.code, display: a.written }], text: a.written }
  })).join("\n") + "\n")
  const dir = tempDataDir()
  summary = JSON.parse(hcc(dir, ["data", "import", "--format", "fhir", bulk, "--as-of", "2024-03-31", "--json"]))
  t = tablesOf(dir)
})

describe("PRAPARE answers matched by their LOINC answer code, whatever the display", () => {
  it("every answer is scored: none is left out as an answer the model does not score", () => {
    const unscored = Object.keys(summary.left_out ?? {}).filter((k) => k.includes("answer the model does not score"))
    expect(unscored).toEqual([])
  })
  it.each(PATIENTS)("%s: each axis is the month's mean of the coded answers' scores", (patient) => {
    expect(march(patient)).toMatchObject(expectedScores(patient))
  })
  it("Synthea's LA17956-6 'Unemployed (finding)' scores as 'Unemployed', with the home of p1 on the same axis (PV (2 + 1) / 2)", () => {
    expect(march("p1")?.pv).toBe("1.5")
  })
})
