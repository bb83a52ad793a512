/**
 * The health dataset as plugins see it: typed arrays loaded once at start-up (structure of arrays),
 * and cohort selection over them by the WASM cohort-scan kernels. Part of the plugin contract
 * (re-exported by src/plugin/Plugin.ts); the loader is HealthDataLive.ts.
 *
 * Row references are indexes: `patient` columns hold the patient's index in `patients` (0-based,
 * patients ordered by id), `implant` the implant's index, and code columns the index of the code
 * in `vocabulary[kind]`. Days are day numbers since 1970-01-01 (calendar.ts), months y × 12 + m − 1.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Column, Kernels, Panel } from "../kernels/Kernels.ts"
import type { Axis } from "../plugin/axes.ts"
import type { DomainError } from "../plugin/errors.ts"
import type { Sex } from "../plugin/vocabularies.ts"
import type { VocabularyKind } from "./vocabulary.ts"

/**
 * A drug course counts as adhered to when its adherence (proportion of days covered, PDC) is at
 * least this: the conventional PQA threshold. The generator plants drug effects by it and
 * drug-outcomes reports adherence by it.
 */
export const ADHERENCE_THRESHOLD = 0.8

/**
 * One row per patient, ordered by id.
 *
 * Columns are as narrow as their values allow, and read back exactly: day numbers (days since
 * 1970-01-01, NaN where missing) as Float32Array — every integer below 2^24 (the year 47,000) is
 * exact in it; flags and small codes as Uint8Array; the axis panel in tenths when its scores allow
 * (kernels/tenths.ts).
 */
export interface PatientColumns {
  readonly count: number
  readonly ids: Int32Array
  /** Birth year (f64 so age ranges are one range scan). */
  readonly birthYear: Column<Float64Array>
  /** Index in SEXES: 0 female, 1 male, 2 other, 3 unknown. */
  readonly sex: Column<Int32Array>
  /** Day of death; NaN while alive (or not recorded). */
  readonly deathDay: Float32Array
  /** Index in vocabulary.region. */
  readonly region: Column<Int32Array>
  /** Per condition code: 1 when the patient has it. */
  readonly conditions: ReadonlyMap<string, Column<Uint8Array>>
  /** Per drug code: 1 when the patient has a course of it that overlaps the data window. */
  readonly drugs: ReadonlyMap<string, Column<Uint8Array>>
}

/** Drug courses. */
export interface ExposureColumns {
  readonly patient: Int32Array
  readonly drug: Int32Array
  readonly startDay: Float32Array
  /** NaN while ongoing at as_of. */
  readonly endDay: Float32Array
  readonly adherence: Float64Array
}

/** Adverse events. */
export interface AdverseEventColumns {
  readonly patient: Int32Array
  readonly drug: Int32Array
  readonly eventType: Int32Array
  readonly day: Float32Array
}

/** Encounter kinds, in the order of their codes. */
export const ENCOUNTER_KINDS = ["outpatient", "emergency", "inpatient"] as const

/** Encounters, ordered by patient then start day. */
export interface EncounterColumns {
  readonly patient: Int32Array
  /** Index in ENCOUNTER_KINDS. */
  readonly kind: Uint8Array
  readonly startDay: Float32Array
  readonly endDay: Float32Array
}

/** Device studies, implants and per-implant outcomes. */
export interface DeviceColumns {
  readonly studies: { readonly ids: ReadonlyArray<string>; readonly device: Int32Array; readonly region: Int32Array }
  readonly implants: { readonly patient: Int32Array; readonly device: Int32Array; readonly study: Int32Array; readonly day: Float32Array }
  readonly outcomes: { readonly implant: Int32Array; readonly metric: Int32Array; readonly value: Float64Array }
}

/** Weekly surveillance series, aligned on `firstWeek` (NaN where a week has no row). */
export interface SurveillanceSeries {
  /** Day number of the first Monday. */
  readonly firstWeek: number
  readonly weeks: number
  /** Key `species/condition/region`. */
  readonly animal: ReadonlyMap<string, Float64Array>
  /** Key `condition/region`. */
  readonly human: ReadonlyMap<string, Float64Array>
}

/** What the dataset says about one vocabulary entry besides its code. */
export interface VocabularyDetail {
  readonly label: string
  /** Its standard code as `system:code` (codeSystems.ts), or null when it has none. */
  readonly standard: string | null
}

/** Everything the analytics read. */
export interface Dataset {
  /** The dataset's stamp: renewed by every replacement, so two datasets never share it. */
  readonly id: string
  /** `YYYY-MM-DD`; time ranges count back from it. */
  readonly asOf: string
  readonly asOfDay: number
  /** First month of the axis panel, and how many months it has (the last one holds as_of). */
  readonly firstMonth: number
  readonly months: number
  readonly vocabulary: Readonly<Record<VocabularyKind, ReadonlyArray<string>>>
  /** Label and standard code of each entry, in the order of `vocabulary`. */
  readonly vocabularyDetails: Readonly<Record<VocabularyKind, ReadonlyArray<VocabularyDetail>>>
  /** Per axis: the share of patients with at least one score of it (0–1); 0 when no data informs the axis. */
  readonly axisCoverage: Readonly<Record<Axis, number>>
  readonly info: Readonly<Record<string, string>>
  readonly patients: PatientColumns
  /** Monthly axis scores: axes in canonical order, patients in `patients` order, `months` months. */
  readonly panel: Panel
  readonly exposures: ExposureColumns
  readonly adverseEvents: AdverseEventColumns
  readonly encounters: EncounterColumns
  readonly devices: DeviceColumns
  readonly surveillance: SurveillanceSeries
}

/** A cohort definition; every part is optional and the parts combine with AND. */
export interface CohortCriteria {
  /** Inclusive ages at as_of (age = as_of year − birth year). */
  readonly ageRange?: readonly [number, number]
  readonly sex?: ReadonlyArray<Sex>
  /** Any of these regions. */
  readonly regions?: ReadonlyArray<string>
  /** All of these conditions. */
  readonly conditions?: ReadonlyArray<string>
  /** A course of each of these drugs. */
  readonly drugs?: ReadonlyArray<string>
  /** Bounds on the patient's mean score of each axis over `months` (inclusive). */
  readonly axes?: Readonly<Partial<Record<Axis, { readonly min?: number | undefined; readonly max?: number | undefined }>>>
  /** Panel month indexes [from, to) the axis bounds look at (default: the whole panel). */
  readonly months?: { readonly from: number; readonly to: number }
}

/** A selected cohort: mask over `patients` (1 = in) and its size. */
export interface Cohort {
  readonly mask: Uint8Array
  readonly size: number
}

/** The health data service. */
export interface HealthDataService {
  /** The loaded dataset; fails with DomainError `unavailable` (503) while it is still loading. */
  readonly dataset: Effect.Effect<Dataset, DomainError>
  /**
   * Patients matching the criteria. An unknown condition, drug or region fails with
   * `unknown_condition` / `unknown_drug` / `unknown_region` (422) and the closest known codes.
   */
  readonly select: (criteria: CohortCriteria) => Effect.Effect<Cohort, DomainError>
}

/** The health data, as plugins require it. */
export class HealthData extends Context.Service<HealthData, HealthDataService>()("hcc/HealthData") {}

/**
 * Work a plugin does once per loaded dataset, before the service reports ready (e.g. fitting a
 * model): never per request. `HealthDataLive` runs each one after loading; a failure is logged and
 * leaves only that plugin's answers unavailable.
 */
export interface DatasetPreparation {
  /** The plugin's name (for the log). */
  readonly name: string
  readonly prepare: (dataset: Dataset) => Effect.Effect<void, unknown, Kernels>
}

/** The preparations the loader runs; the composition root fills it from the loaded plugins. */
export const DatasetPreparations = Context.Reference<ReadonlyArray<DatasetPreparation>>("hcc/DatasetPreparations", {
  defaultValue: () => []
})
