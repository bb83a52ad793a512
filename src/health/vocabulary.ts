/**
 * The vocabularies the shipped dataset uses. They are data: the generator writes them to the
 * `vocabulary` table, `hcc data import` reads them from `vocabulary.csv`, and the service lists
 * whatever the loaded dataset holds in the catalog. Codes are snake_case; labels are for people.
 */

/** The kinds of vocabulary, each a closed list of codes per dataset. */
export const VOCABULARY_KINDS = [
  "region",
  "condition",
  "drug",
  "adverse_event",
  "device",
  "device_metric",
  "species",
  "zoonotic_condition"
] as const
/** One kind of vocabulary. */
export type VocabularyKind = (typeof VOCABULARY_KINDS)[number]

/** One vocabulary entry. */
export interface VocabularyEntry {
  readonly code: string
  readonly label: string
}

const entries = (pairs: ReadonlyArray<readonly [string, string]>): ReadonlyArray<VocabularyEntry> =>
  pairs.map(([code, label]) => ({ code, label }))

/** The vocabularies of the generated dataset, in the order the service lists them. */
export const DEFAULT_VOCABULARY: Readonly<Record<VocabularyKind, ReadonlyArray<VocabularyEntry>>> = {
  region: entries([
    ["northeast_us", "North-east United States"],
    ["southeast_us", "South-east United States"],
    ["western_europe", "Western Europe"],
    ["southern_europe", "Southern Europe"],
    ["east_asia", "East Asia"],
    ["southeast_asia", "South-east Asia"],
    ["sub_saharan_africa", "Sub-Saharan Africa"],
    ["south_america", "South America"]
  ]),
  condition: entries([
    ["type_2_diabetes", "Type 2 diabetes mellitus"],
    ["hypertension", "Hypertension"],
    ["heart_failure", "Heart failure"],
    ["copd", "Chronic obstructive pulmonary disease"],
    ["chronic_kidney_disease", "Chronic kidney disease"],
    ["depression", "Major depressive disorder"],
    ["obesity", "Obesity"],
    ["asthma", "Asthma"],
    ["hypothyroidism", "Hypothyroidism"],
    ["osteoarthritis", "Osteoarthritis"]
  ]),
  drug: entries([
    ["metformin", "Metformin"],
    ["lisinopril", "Lisinopril"],
    ["atorvastatin", "Atorvastatin"],
    ["sertraline", "Sertraline"],
    ["warfarin", "Warfarin"],
    ["aspirin", "Aspirin"],
    ["ibuprofen", "Ibuprofen"],
    ["amlodipine", "Amlodipine"],
    ["levothyroxine", "Levothyroxine"],
    ["omeprazole", "Omeprazole"]
  ]),
  adverse_event: entries([
    ["gastrointestinal_intolerance", "Gastrointestinal intolerance"],
    ["cough", "Cough"],
    ["myalgia", "Myalgia"],
    ["nausea", "Nausea"],
    ["bleeding", "Bleeding"],
    ["gastrointestinal_bleeding", "Gastrointestinal bleeding"],
    ["peripheral_edema", "Peripheral oedema"],
    ["palpitations", "Palpitations"],
    ["headache", "Headache"]
  ]),
  device: entries([
    ["insulin_pump", "Insulin pump"],
    ["continuous_glucose_monitor", "Continuous glucose monitor"],
    ["cardiac_pacemaker", "Cardiac pacemaker"],
    ["knee_implant", "Knee implant"],
    ["hip_implant", "Hip implant"],
    ["cochlear_implant", "Cochlear implant"]
  ]),
  device_metric: entries([
    ["complication_rate", "Complication within follow-up (proportion of implants)"],
    ["revision_rate", "Revision or replacement (proportion of implants)"],
    ["infection_rate", "Device-related infection (proportion of implants)"],
    ["device_failure_rate", "Device failure (proportion of implants)"],
    ["patient_satisfaction", "Patient satisfaction, 0–10"],
    ["pain_reduction", "Pain reduction on the 0–10 numeric rating scale, points"],
    ["quality_of_life", "Health-related quality of life, EQ-5D index 0–1"]
  ]),
  species: entries([
    ["poultry", "Poultry"],
    ["cattle", "Cattle"],
    ["swine", "Swine"],
    ["dogs", "Dogs"],
    ["horses", "Horses"],
    ["wild_birds", "Wild birds"],
    ["bats", "Bats"],
    ["deer", "Deer"]
  ]),
  zoonotic_condition: entries([
    ["avian_influenza", "Avian influenza"],
    ["west_nile_virus", "West Nile virus infection"],
    ["lyme_disease", "Lyme disease"],
    ["rabies", "Rabies"],
    ["leptospirosis", "Leptospirosis"],
    ["brucellosis", "Brucellosis"],
    ["salmonellosis", "Salmonellosis"]
  ])
}

/** The codes of one kind, in order. */
export const codesOf = (kind: VocabularyKind): ReadonlyArray<string> => DEFAULT_VOCABULARY[kind].map((e) => e.code)
