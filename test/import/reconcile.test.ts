/**
 * Reconciled with the source: where an OMOP folder ships the tables its ETL derived (DRUG_ERA,
 * CONDITION_ERA, OBSERVATION_PERIOD), the summary says how far the import's own eras and periods
 * agree with them; an empty table is said to be empty; the derived rows are never stored.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { tablesOf } from "../support/datasets.ts"
import { hcc, tempDataDir } from "../support/server.ts"

const csv = (rows: ReadonlyArray<ReadonlyArray<string | number>>) => rows.map((r) => r.join(",")).join("\n") + "\n"

const cdm = (drugEras: ReadonlyArray<ReadonlyArray<string | number>>, conditionEras: ReadonlyArray<ReadonlyArray<string | number>>) => {
  const folder = join(tempDataDir(), "cdm")
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, "concept.csv"), csv([
    ["concept_id", "concept_name", "domain_id", "vocabulary_id", "concept_class_id", "standard_concept", "concept_code"],
    [1503297, "metformin", "Drug", "RxNorm", "Ingredient", "S", "6809"],
    [1308216, "lisinopril", "Drug", "RxNorm", "Ingredient", "S", "29046"],
    [201826, "Type 2 diabetes mellitus", "Condition", "SNOMED", "Clinical Finding", "S", "44054006"],
    [320128, "Essential hypertension", "Condition", "SNOMED", "Clinical Finding", "S", "59621000"]
  ]))
  writeFileSync(join(folder, "person.csv"), csv([["person_id", "gender_concept_id", "year_of_birth"], [1, 8532, 1960], [2, 8507, 1955]]))
  writeFileSync(join(folder, "observation_period.csv"), csv([["observation_period_id", "person_id", "observation_period_start_date", "observation_period_end_date", "period_type_concept_id"], [1, 1, "2015-01-01", "2024-12-31", 32817]]))
  writeFileSync(join(folder, "condition_occurrence.csv"), csv([
    ["condition_occurrence_id", "person_id", "condition_concept_id", "condition_start_date", "condition_type_concept_id"],
    [1, 1, 201826, "2016-03-01", 32817],
    [2, 2, 320128, "2017-05-01", 32817]
  ]))
  writeFileSync(join(folder, "drug_exposure.csv"), csv([
    ["drug_exposure_id", "person_id", "drug_concept_id", "drug_exposure_start_date", "drug_exposure_end_date", "drug_type_concept_id", "days_supply"],
    [1, 1, 1503297, "2020-01-01", "2020-01-30", 32869, 30],
    [2, 1, 1503297, "2020-02-10", "2020-03-10", 32869, 30],
    [3, 1, 1308216, "2021-01-01", "2021-03-31", 32838, ""],
    [4, 2, 1308216, "2019-06-01", "2019-06-30", 32838, ""]
  ]))
  writeFileSync(join(folder, "drug_era.csv"), csv([["drug_era_id", "person_id", "drug_concept_id", "drug_era_start_date", "drug_era_end_date", "drug_exposure_count", "gap_days"], ...drugEras]))
  writeFileSync(join(folder, "condition_era.csv"), csv([["condition_era_id", "person_id", "condition_concept_id", "condition_era_start_date", "condition_era_end_date", "condition_occurrence_count"], ...conditionEras]))
  return folder
}

describe("the summary compares the import with the source's DRUG_ERA, CONDITION_ERA and OBSERVATION_PERIOD", () => {
  it("counts the source's eras that are the same here, those that overlap, and the pairs and periods that agree", () => {
    const folder = cdm(
      [
        [1, 1, 1503297, "2020-01-01", "2020-03-10", 2, 10], // the same era here
        [2, 1, 1308216, "2021-01-01", "2021-04-29", 1, 0], // ends elsewhere (OHDSI's script pads differently): overlapping
        [3, 2, 1503297, "2018-01-01", "2018-01-30", 1, 0] // no such era here
      ],
      [[1, 1, 201826, "2016-03-01", "2016-03-01", 1], [2, 2, 201826, "2017-05-01", "2017-05-01", 1], [3, 2, 320128, "2017-05-01", "2017-05-01", 1]]
    )
    const dir = tempDataDir()
    const summary = JSON.parse(hcc(dir, ["data", "import", "--format", "omop", folder, "--as-of", "2024-12-31", "--json"])) as Record<string, any>
    expect(summary.reconciled).toEqual({
      drug_era: { eras: 3, same: 1, overlapping: 2, imported: 3 },
      condition_era: { pairs: 3, held: 2 },
      observation_period: { patients: 2, observed: 1, eras: 3, eras_observed: 2 }
    })
    // Compared, never stored: the dataset is what the clinical tables say.
    expect(tablesOf(dir).drug_exposures!.map((d) => [d.patient_id, d.drug, d.start_date, d.end_date])).toEqual([
      ["1", "metformin", "2020-01-01", "2020-03-10"],
      ["1", "lisinopril", "2021-01-01", "2021-03-31"],
      ["2", "lisinopril", "2019-06-01", "2019-06-30"]
    ])
    const text = hcc(tempDataDir(), ["data", "import", "--format", "omop", folder, "--as-of", "2024-12-31"])
    expect(text).toMatch(/^ {2}DRUG_ERA: 3 eras; 1 \(33\.3 %\) the same here \(person, ingredient, start and end\), 2 \(66\.7 %\) overlapping one here; 3 eras here$/m)
    expect(text).toMatch(/^ {2}CONDITION_ERA: 3 person–condition pairs; 2 \(66\.7 %\) held here$/m)
  })
  it("an empty table is said to be empty", () => {
    const summary = JSON.parse(hcc(tempDataDir(), ["data", "import", "--format", "omop", cdm([], []), "--as-of", "2024-12-31", "--json"])) as Record<string, any>
    expect(summary.reconciled).toMatchObject({ drug_era: "empty", condition_era: "empty" })
  })
})
