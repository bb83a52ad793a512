/**
 * The dataset as the stable plugin contract offers it (`PatientData`): counts, cohorts, monthly
 * series and windows of the axis scores — numbers and strings only, never the columns or a
 * pointer into the compute core. The service's key and types; its implementation, provided once
 * per thread beside `HealthData`, is PatientDataLive.ts.
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { Axis } from "../plugin/axes.ts"
import type { DomainError } from "../plugin/errors.ts"
import type { CohortCriteria, VocabularyDetail } from "./HealthData.ts"
import type { VocabularyKind } from "./vocabulary.ts"

/** The loaded dataset in brief. */
export interface DatasetSummary {
  /** The dataset's stamp: renewed by every replacement. */
  readonly id: string
  /** `YYYY-MM-DD`. */
  readonly asOf: string
  /** Patients in the dataset. */
  readonly patients: number
  /** The months of the axis panel, first to last (`YYYY-MM`; the last holds as_of). */
  readonly months: ReadonlyArray<string>
  readonly vocabulary: Readonly<Record<VocabularyKind, ReadonlyArray<string>>>
  readonly vocabularyDetails: Readonly<Record<VocabularyKind, ReadonlyArray<VocabularyDetail>>>
  /** Per axis: the share of patients with at least one score of it (0–1). */
  readonly axisCoverage: Readonly<Record<Axis, number>>
  /** What the dataset says of itself (source, generator, import). */
  readonly info: Readonly<Record<string, string>>
}

/** Months `from` to `to`, both included (`YYYY-MM`); the part outside the axis panel is left out. */
export interface MonthWindow {
  readonly from: string
  readonly to: string
}

/** An axis over a cohort, month by month. */
export interface AxisSeries {
  /** `YYYY-MM`, in order. */
  readonly months: ReadonlyArray<string>
  /** The mean score of the cohort's patients scored that month; null when none was. */
  readonly mean: ReadonlyArray<number | null>
  /** How many of the cohort's patients were scored that month. */
  readonly scored: ReadonlyArray<number>
}

/** An axis over a cohort across a window: each patient's mean score there, summarised. */
export interface WindowSummary {
  /** Patients with at least one score of the axis in the window. */
  readonly patients: number
  /** The mean of their means; null when no patient was scored. */
  readonly mean: number | null
  /** The sample standard deviation of their means; null with fewer than two. */
  readonly sd: number | null
}

/** What a cohort can be counted by. */
export type CountBy = "sex" | "region" | "condition" | "drug"

/** A selected cohort, to ask further questions of during the call that selected it. */
export interface CohortView {
  /** Patients in the cohort. */
  readonly size: number
  /** The cohort's patients per entry of the vocabulary (every entry, 0 included): by sex, region, condition or drug. */
  readonly counts: (by: CountBy) => Effect.Effect<Readonly<Record<string, number>>>
  /** An axis month by month over a window (default: the whole panel). */
  readonly series: (axis: Axis, window?: MonthWindow) => Effect.Effect<AxisSeries>
  /** An axis across a window (default: the whole panel): each patient's mean there, summarised. */
  readonly window: (axis: Axis, window?: MonthWindow) => Effect.Effect<WindowSummary>
}

/** The patient data service. */
export interface PatientDataService {
  /** The loaded dataset in brief; fails with `unavailable` (503) while it is still loading. */
  readonly about: Effect.Effect<DatasetSummary, DomainError>
  /**
   * The patients matching the criteria (as `HealthData.select` takes them). An unknown condition,
   * drug or region fails with `unknown_condition` / `unknown_drug` / `unknown_region` (422) and the
   * closest known codes; while the dataset loads, with `unavailable`.
   */
  readonly cohort: (criteria: CohortCriteria) => Effect.Effect<CohortView, DomainError>
}

/** The dataset through counts, cohorts, series and windows (the stable plugin contract's data interface). */
export class PatientData extends Context.Service<PatientData, PatientDataService>()("hcc/PatientData") {}

