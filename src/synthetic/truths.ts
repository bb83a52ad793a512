/**
 * The planted truths of the generated dataset: every effect the generator puts into the data on
 * purpose, with the value the analytics must recover. One module, read by the generator (which
 * plants them), the tests (which check the endpoints recover them) and docs/data.md (a table a test
 * keeps in step). Change a number here and the data, the tests and the docs follow.
 *
 * Background rates are chosen in the range of the public figure cited beside each; they make the
 * data believable, they are not estimates of anything.
 */
import type { Axis } from "../plugin/axes.ts"

// ---------------------------------------------------------------------------------------------
// The window
// ---------------------------------------------------------------------------------------------

/** The generated data covers 36 calendar months ending at `as_of`. */
export const WINDOW = { firstMonth: "2023-10", months: 36, asOf: "2026-09-30", firstWeek: "2023-10-02", weeks: 157 } as const

// ---------------------------------------------------------------------------------------------
// Population
// ---------------------------------------------------------------------------------------------

/**
 * Adult age bands (age at as_of) and their shares: US Census Bureau 2023 population estimates,
 * adults 18+ (18–29 ≈ 20 %, 30–44 ≈ 26 %, 45–64 ≈ 32 %, 65–79 ≈ 17 %, 80+ ≈ 5 %).
 */
export const AGE_BANDS: ReadonlyArray<{ readonly from: number; readonly to: number; readonly share: number }> = [
  { from: 18, to: 29, share: 0.2 },
  { from: 30, to: 44, share: 0.26 },
  { from: 45, to: 64, share: 0.32 },
  { from: 65, to: 79, share: 0.17 },
  { from: 80, to: 95, share: 0.05 }
]

/** Share of women (US Census Bureau: 50.5 % of the population). */
export const FEMALE_SHARE = 0.505

/**
 * Conditions: target adult prevalence and how steeply it rises with age (odds ratio per 10 years,
 * centred at 50). The generator scales the odds so the population prevalence lands near the target.
 */
export const CONDITIONS: ReadonlyArray<{ readonly code: string; readonly prevalence: number; readonly orPer10y: number; readonly source: string }> = [
  { code: "type_2_diabetes", prevalence: 0.11, orPer10y: 1.6, source: "CDC National Diabetes Statistics Report 2023: 11.6 % of US adults (diagnosed + undiagnosed)" },
  { code: "hypertension", prevalence: 0.45, orPer10y: 1.8, source: "CDC: 48 % of US adults have hypertension (2017 ACC/AHA definition)" },
  { code: "heart_failure", prevalence: 0.025, orPer10y: 2.2, source: "AHA Heart Disease & Stroke Statistics 2024: 6.7 million US adults (≈ 2.5 %)" },
  { code: "copd", prevalence: 0.06, orPer10y: 1.7, source: "CDC BRFSS: 6 % of US adults report COPD" },
  { code: "chronic_kidney_disease", prevalence: 0.14, orPer10y: 1.7, source: "CDC Chronic Kidney Disease in the US 2023: about 14 % of adults" },
  { code: "depression", prevalence: 0.08, orPer10y: 0.85, source: "NIMH: 8.3 % of US adults had a major depressive episode in 2021 (highest at 18–25)" },
  { code: "obesity", prevalence: 0.4, orPer10y: 1.1, source: "CDC NHANES Aug 2021–Aug 2023: 40.3 % of US adults" },
  { code: "asthma", prevalence: 0.08, orPer10y: 0.95, source: "CDC: 8 % of US adults have current asthma" },
  { code: "hypothyroidism", prevalence: 0.05, orPer10y: 1.4, source: "American Thyroid Association: about 5 % of Americans 12+ have hypothyroidism" },
  { code: "osteoarthritis", prevalence: 0.14, orPer10y: 2.0, source: "CDC: 32.5 million US adults (≈ 13 %) have osteoarthritis" }
]

// ---------------------------------------------------------------------------------------------
// Axes
// ---------------------------------------------------------------------------------------------

/** Each patient's baseline per axis: MEAN + COMMON_SD·g + OWN_SD·z (g shared by the patient's axes). */
export const AXIS_BASELINE = { mean: 6.6, commonSd: 0.8, ownSd: 0.9 } as const
/** Lower baselines for conditions (points on the 0–10 scale). */
export const CONDITION_AXIS_SHIFT: Readonly<Record<string, Partial<Record<Axis, number>>>> = {
  heart_failure: { PO: -1.0, ER: -0.3 },
  copd: { PO: -0.8 },
  type_2_diabetes: { NM: -0.8 },
  obesity: { NM: -0.6, PO: -0.4 },
  depression: { ER: -1.2, SC: -0.6, PV: -0.4 },
  chronic_kidney_disease: { PO: -0.4, NM: -0.3 },
  osteoarthritis: { PO: -0.5 }
}
/** PO baseline change per 10 years of age above 50 (cross-sectional only: no age slope within a patient). */
export const PO_PER_DECADE_OVER_50 = -0.3
/** Each patient's own monthly drift per axis: normal with mean 0 and this SD (points per month). */
export const PATIENT_SLOPE_SD = 0.01
/** Month-to-month measurement noise (SD, points); scores are clamped to [0, 10] and rounded to 0.1. */
export const AXIS_NOISE_SD = 0.5
/** Share of patients enrolled after the first month (enrolment month uniform in months 2–24). */
export const LATE_ENROLMENT_SHARE = 0.15
/** Share of monthly records missing entirely, and of single axis values left empty. */
export const MISSING_MONTH_SHARE = 0.05
export const MISSING_VALUE_SHARE = 0.02

/** PLANTED: an axis trend over time for a stated cohort. */
export const PLANTED_TREND = {
  cohort: { conditions: ["heart_failure"] as ReadonlyArray<string> },
  axis: "PO" as Axis,
  /** Points per month (−0.15 per quarter). */
  perMonth: -0.05
} as const
/** PLANTED: a cohort with no trend on any axis (patient drifts average zero). */
export const NO_TREND_COHORT = { conditions: ["asthma"] as ReadonlyArray<string>, ageRange: "18-44" } as const

// ---------------------------------------------------------------------------------------------
// Drugs
// ---------------------------------------------------------------------------------------------

/**
 * Who takes each drug: the probability a patient with an indication is exposed (first matching
 * indication wins), and the probability for everyone else from `minAge`.
 */
export const DRUG_USE: ReadonlyArray<{
  readonly drug: string
  readonly indications: ReadonlyArray<readonly [condition: string, p: number]>
  readonly otherwise: number
  readonly minAge: number
}> = [
  // ADA Standards of Care: metformin is first-line; ~70 % of treated US T2D adults use it (Montvida 2018, Diabetes Care).
  { drug: "metformin", indications: [["type_2_diabetes", 0.7]], otherwise: 0, minAge: 18 },
  { drug: "lisinopril", indications: [["heart_failure", 0.5], ["chronic_kidney_disease", 0.3], ["hypertension", 0.3]], otherwise: 0, minAge: 18 },
  { drug: "amlodipine", indications: [["hypertension", 0.25]], otherwise: 0, minAge: 18 },
  // ~ 35 % of US adults 40+ take a statin (NCHS Data Brief 2021).
  { drug: "atorvastatin", indications: [["type_2_diabetes", 0.5], ["hypertension", 0.35], ["heart_failure", 0.5]], otherwise: 0.1, minAge: 40 },
  { drug: "sertraline", indications: [["depression", 0.4]], otherwise: 0.01, minAge: 18 },
  { drug: "warfarin", indications: [["heart_failure", 0.12]], otherwise: 0.02, minAge: 65 },
  // USPSTF: ~ 1 in 4 adults 60+ take low-dose aspirin (Rhee 2024, JAMA).
  { drug: "aspirin", indications: [["heart_failure", 0.4]], otherwise: 0.2, minAge: 50 },
  { drug: "ibuprofen", indications: [["osteoarthritis", 0.3]], otherwise: 0.05, minAge: 18 },
  { drug: "levothyroxine", indications: [["hypothyroidism", 0.85]], otherwise: 0, minAge: 18 },
  { drug: "omeprazole", indications: [], otherwise: 0.08, minAge: 18 }
]
/** Share of exposures that start inside the window (new users, start month uniform in 3–30); the rest began up to 5 years before it. */
export const NEW_USER_SHARE = 0.3
/** Share of exposures that stop before as_of (stop month uniform between start and the end of the window). */
export const DISCONTINUATION_SHARE = 0.15
/** Adherence (PDC): this share of courses is adherent, PDC uniform in [0.8, 1]; the rest uniform in [0.2, 0.8). WHO 2003: ~50 % adherence to long-term therapies. */
export const ADHERENT_SHARE = 0.6
/** The conventional PDC threshold for adherence (PQA); the dataset's convention, defined with it. */
export { ADHERENCE_THRESHOLD } from "../health/HealthData.ts"

/**
 * PLANTED: drug effects on axes. While exposed, the axis rises by `adherent` points (PDC ≥ 0.8) or
 * `nonAdherent` points (PDC < 0.8), reached linearly over `rampMonths` after the start (new users;
 * prevalent users are at the full effect throughout). No other drug moves any axis.
 */
export const DRUG_AXIS_EFFECTS: ReadonlyArray<{ readonly drug: string; readonly axis: Axis; readonly adherent: number; readonly nonAdherent: number; readonly rampMonths: number }> = [
  { drug: "metformin", axis: "NM", adherent: 0.8, nonAdherent: 0.2, rampMonths: 3 }
]

/**
 * PLANTED: adverse-event rates: the probability that an exposure has one event of `type` inside the
 * window (so the rate per exposed patient equals `rate`). Orders of magnitude from the FDA labels
 * (Glucophage §6.1 GI reactions; Zestril §6.1 cough; Coumadin §5.1 bleeding; Zoloft §6.1 nausea).
 */
export const ADVERSE_EVENT_RATES: ReadonlyArray<{ readonly drug: string; readonly type: string; readonly rate: number }> = [
  { drug: "metformin", type: "gastrointestinal_intolerance", rate: 0.08 },
  { drug: "lisinopril", type: "cough", rate: 0.06 },
  { drug: "atorvastatin", type: "myalgia", rate: 0.04 },
  { drug: "sertraline", type: "nausea", rate: 0.1 },
  { drug: "warfarin", type: "bleeding", rate: 0.09 },
  { drug: "aspirin", type: "gastrointestinal_bleeding", rate: 0.02 },
  { drug: "ibuprofen", type: "gastrointestinal_bleeding", rate: 0.015 },
  { drug: "amlodipine", type: "peripheral_edema", rate: 0.07 },
  { drug: "levothyroxine", type: "palpitations", rate: 0.02 },
  { drug: "omeprazole", type: "headache", rate: 0.03 }
]

// ---------------------------------------------------------------------------------------------
// Encounters
// ---------------------------------------------------------------------------------------------

/**
 * PLANTED: hospitalization hazard. Each month, admissions ~ Poisson(exp(η)/12) with
 * η = intercept + age·(age − 60)/10 + Σ condition terms + Σ axis·(score − 5), the axes taken at the
 * patient's underlying (noise-free) level that month. Intercept: HCUP Statistical Brief #277
 * (≈ 1 stay per 10 persons per year); age slope: HCUP rates roughly 2.5× from 45–64 to 65–84.
 */
export const HOSPITALIZATION = {
  intercept: Math.log(0.06),
  agePer10y: 0.45,
  conditions: {
    heart_failure: 0.9,
    copd: 0.6,
    chronic_kidney_disease: 0.5,
    type_2_diabetes: 0.3,
    depression: 0.2,
    asthma: 0.2,
    hypertension: 0.15,
    obesity: 0.1
  } as Readonly<Record<string, number>>,
  axes: { PO: -0.2, NM: -0.1, ER: -0.1 } as Readonly<Partial<Record<Axis, number>>>
} as const

/**
 * PLANTED: readmission. After each discharge, the probability of an admission within 30 days is
 * logistic(intercept + Σ terms) (HCUP: ≈ 14 % all-cause 30-day readmission); the readmission day
 * is uniform in 1–30 days after discharge.
 */
export const READMISSION = {
  intercept: -2.0,
  agePer10y: 0.2,
  conditions: { heart_failure: 0.5, chronic_kidney_disease: 0.4, copd: 0.3 } as Readonly<Record<string, number>>,
  axes: { PO: -0.15 } as Readonly<Partial<Record<Axis, number>>>
} as const

/** Length of stay in days: 1 + Poisson(3.5) (HCUP: mean stay 4.6 days). */
export const LENGTH_OF_STAY_EXTRA_MEAN = 3.5
/** Emergency visits per year: 0.4 × exp(0.5 × (η − intercept)) (CDC NHAMCS: ≈ 40 visits per 100 persons per year). */
export const EMERGENCY = { perYear: 0.4, hazardShare: 0.5 } as const
/** Outpatient visits per year: base + per chronic condition (CDC NAMCS: ≈ 3 physician-office visits per person per year). */
export const OUTPATIENT = { perYear: 1.5, perCondition: 0.8 } as const

// ---------------------------------------------------------------------------------------------
// Devices
// ---------------------------------------------------------------------------------------------

/** Studies per device category (study codes `<DEVICE>-<nn>`, each in one region). */
export const STUDIES_PER_DEVICE = 8

/**
 * Who receives each device, and PLANTED per-study event rates: study s of a device has true rate
 * mean + spread·z_s for each *_rate metric (z_s standard normal, clamped to ≥ 0.002); each implant's
 * outcome is 1 with that probability. Knee complications: ≈ 4–5 % at one year (AJRR annual report).
 */
export const DEVICES: ReadonlyArray<{
  readonly device: string
  readonly candidates: { readonly minAge: number; readonly condition?: string; readonly p: number }
  readonly rates: Readonly<Record<"complication_rate" | "revision_rate" | "infection_rate" | "device_failure_rate", { readonly mean: number; readonly spread: number }>>
  /** Study-level means of the score metrics (patient SD: satisfaction 1.2, pain 1.8, QoL 0.12; study SD a quarter of that). */
  readonly scores: { readonly patient_satisfaction: number; readonly pain_reduction: number; readonly quality_of_life: number }
}> = [
  {
    device: "knee_implant",
    candidates: { minAge: 50, condition: "osteoarthritis", p: 0.15 },
    rates: { complication_rate: { mean: 0.045, spread: 0.012 }, revision_rate: { mean: 0.02, spread: 0.006 }, infection_rate: { mean: 0.01, spread: 0.003 }, device_failure_rate: { mean: 0.008, spread: 0.003 } },
    scores: { patient_satisfaction: 7.8, pain_reduction: 5.5, quality_of_life: 0.74 }
  },
  {
    device: "hip_implant",
    candidates: { minAge: 55, condition: "osteoarthritis", p: 0.08 },
    rates: { complication_rate: { mean: 0.035, spread: 0.01 }, revision_rate: { mean: 0.015, spread: 0.005 }, infection_rate: { mean: 0.008, spread: 0.003 }, device_failure_rate: { mean: 0.006, spread: 0.002 } },
    scores: { patient_satisfaction: 8.2, pain_reduction: 6.0, quality_of_life: 0.78 }
  },
  {
    device: "cardiac_pacemaker",
    candidates: { minAge: 65, condition: "heart_failure", p: 0.12 },
    rates: { complication_rate: { mean: 0.06, spread: 0.015 }, revision_rate: { mean: 0.025, spread: 0.008 }, infection_rate: { mean: 0.01, spread: 0.004 }, device_failure_rate: { mean: 0.012, spread: 0.004 } },
    scores: { patient_satisfaction: 8.0, pain_reduction: 1.5, quality_of_life: 0.7 }
  },
  {
    device: "insulin_pump",
    candidates: { minAge: 18, condition: "type_2_diabetes", p: 0.04 },
    rates: { complication_rate: { mean: 0.08, spread: 0.02 }, revision_rate: { mean: 0.03, spread: 0.01 }, infection_rate: { mean: 0.02, spread: 0.006 }, device_failure_rate: { mean: 0.05, spread: 0.015 } },
    scores: { patient_satisfaction: 7.2, pain_reduction: 0.5, quality_of_life: 0.72 }
  },
  {
    device: "continuous_glucose_monitor",
    candidates: { minAge: 18, condition: "type_2_diabetes", p: 0.15 },
    rates: { complication_rate: { mean: 0.03, spread: 0.01 }, revision_rate: { mean: 0.01, spread: 0.004 }, infection_rate: { mean: 0.005, spread: 0.002 }, device_failure_rate: { mean: 0.04, spread: 0.012 } },
    scores: { patient_satisfaction: 8.3, pain_reduction: 0.3, quality_of_life: 0.76 }
  },
  {
    device: "cochlear_implant",
    candidates: { minAge: 60, p: 0.006 },
    rates: { complication_rate: { mean: 0.05, spread: 0.015 }, revision_rate: { mean: 0.03, spread: 0.01 }, infection_rate: { mean: 0.015, spread: 0.005 }, device_failure_rate: { mean: 0.02, spread: 0.006 } },
    scores: { patient_satisfaction: 8.5, pain_reduction: 0.2, quality_of_life: 0.75 }
  }
]

// ---------------------------------------------------------------------------------------------
// Surveillance
// ---------------------------------------------------------------------------------------------

/** Species that carry each zoonotic condition in the data (one animal series per pair and region). */
export const ZOONOTIC_HOSTS: Readonly<Record<string, ReadonlyArray<string>>> = {
  avian_influenza: ["poultry", "wild_birds"],
  west_nile_virus: ["wild_birds", "horses"],
  lyme_disease: ["deer", "dogs"],
  rabies: ["dogs", "bats"],
  leptospirosis: ["cattle", "swine", "dogs"],
  brucellosis: ["cattle", "swine"],
  salmonellosis: ["poultry", "swine", "cattle"]
}

/**
 * Animal series: cases ~ Poisson(base · exp(x_t)) with x an AR(1) process x_t = φ·x_{t−1} + σ·ε_t.
 * Human series with no planted link: the same kind of process, independent of every animal series.
 * No seasonal term anywhere, so any correlation outside the planted links is chance.
 */
export const SURVEILLANCE = { animalBase: 12, humanBase: 4, phi: 0.85, sigma: 0.45 } as const

/**
 * PLANTED: animal → human leads. The human series of the condition in the region is
 * Poisson(humanBase + perAnimalCase · animal cases `lagDays` earlier); every other human series is
 * independent of every animal series.
 */
export const ZOONOTIC_LINKS: ReadonlyArray<{ readonly species: string; readonly condition: string; readonly region: string; readonly lagDays: number; readonly perAnimalCase: number }> = [
  { species: "poultry", condition: "avian_influenza", region: "southeast_asia", lagDays: 14, perAnimalCase: 0.5 },
  { species: "wild_birds", condition: "west_nile_virus", region: "northeast_us", lagDays: 21, perAnimalCase: 0.5 },
  { species: "deer", condition: "lyme_disease", region: "northeast_us", lagDays: 28, perAnimalCase: 0.6 }
]

/** PLANTED: pairs with no link (both series exist; they are independent). */
export const UNLINKED_PAIRS: ReadonlyArray<{ readonly species: string; readonly condition: string; readonly region: string }> = [
  { species: "dogs", condition: "rabies", region: "western_europe" },
  { species: "cattle", condition: "brucellosis", region: "south_america" },
  { species: "wild_birds", condition: "avian_influenza", region: "southeast_asia" }
]
