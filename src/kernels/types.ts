/** The kernels' results and the service plugins call (the WASM core and its twins implement it). */
import type * as Effect from "effect/Effect"
import type { KernelError } from "./KernelError.ts"

/** Correlations of every axis pair of every series (pairs (i,j), i<j, in row order). */
export interface CorrelationResult {
  readonly pearson: Float64Array
  /** All NaN when asked for Pearson only. */
  readonly spearman: Float64Array
  /** Complete pairs of points each coefficient used. */
  readonly count: Float64Array
}

/** Best lag of x leading y for each series pair. */
export interface LaggedResult {
  /** −1 where no lag had 3 complete pairs. */
  readonly lag: Float64Array
  readonly r: Float64Array
  /** Two-sided, Bonferroni-corrected over the lags tried. */
  readonly p: Float64Array
  readonly n: Float64Array
}

/** Fitted and selected trajectory models with predictions. */
export interface TrajectoryResult {
  /** Model code per series (0 stable, 1 linear, 2 exponential_decay, 3 exponential_plateau, 4 logistic). */
  readonly model: Float64Array
  /** 4 per series. */
  readonly params: Float64Array
  /** 5 per series (NaN where a model is ineligible). */
  readonly aicc: Float64Array
  /** horizon per series, clamped to [0, 10]. */
  readonly pred: Float64Array
  readonly lo: Float64Array
  readonly hi: Float64Array
}

/** Fired decay rules. */
export interface RulesResult {
  /** Per patient: bit n−1 set when rule n fired. */
  readonly mask: Int32Array
  /** Per patient per axis: the single-axis rules that fired on that axis. */
  readonly axisMask: Int32Array
}

/** Per-group aggregates. */
export interface GroupStatsResult {
  readonly count: Float64Array
  readonly sum: Float64Array
  readonly mean: Float64Array
}

/** A column made resident in the core's memory once (for repeated scans). */
export interface Column<A extends Float64Array | Int32Array | Uint8Array> {
  readonly data: A
  /** Pointer in the WASM core's memory (−1 for the reference layer). */
  readonly ptr: number
}

/**
 * The axis panel, axis-major ([(axis × nPatients + patient) × nMonths + month]), resident once, in
 * one of two storages of the same scores: wide (Float32Array, NaN = missing) or tenths (Uint8Array:
 * the score × 10, 255 = missing; src/kernels/tenths.ts). Every kernel gives the same bits over
 * either; read an element as a score with `scoreReader`.
 */
export interface Panel {
  readonly data: Float32Array | Uint8Array
  readonly ptr: number
  readonly nPatients: number
  readonly nAxes: number
  readonly nMonths: number
}

/** Per-period counts and sums of a cohort's present scores (see panelSums). */
export interface PanelSumsResult {
  /** nAxes × nGroups present scores per period group. */
  readonly count: Float64Array
  readonly sum: Float64Array
}

/**
 * Per-period patient moments of a cohort (see panelPeriods): with Sᵢ and nᵢ patient i's sum and
 * number of present scores in a period, each nAxes × nGroups.
 */
export interface PanelPeriodsResult {
  /** Patients with a present score in the period. */
  readonly patients: Float64Array
  /** Σ Sᵢ² over them. */
  readonly sumSquares: Float64Array
  /** Σ Sᵢ·nᵢ. */
  readonly sumCounts: Float64Array
  /** Σ nᵢ². */
  readonly countSquares: Float64Array
}

/** Per-period sums and per-patient slope summaries of a cohort (see panelTrend). */
export interface PanelTrendResult {
  /** nAxes × nGroups present scores per period group. */
  readonly count: Float64Array
  readonly sum: Float64Array
  /** nAxes × 3: patients with a slope, Σ slope, Σ slope² (slopes in points per month). */
  readonly slope: Float64Array
}

/** Per-patient statistics over each patient's own month window (nAxes × nPatients, axis-major). */
export interface PanelWindowsResult {
  readonly n: Float64Array
  /** NaN without a score in the window. */
  readonly mean: Float64Array
  /** Points per month; NaN with fewer than 3 scores or a single month. */
  readonly slope: Float64Array
}

/**
 * Which of panelWindows' outputs a caller keeps (all three when not said): one not asked for comes
 * back empty, never computed into an array of its own — over millions of patients each output is
 * axes × patients f64 (610 MiB for 8 axes at ten million).
 */
export interface PanelWindowsOptions {
  readonly outputs?: ReadonlyArray<keyof PanelWindowsResult>
  /**
   * The outputs over SharedArrayBuffers: for a value kept per dataset and shared with the compute
   * threads, which then needs no copy of its own (a copy of each output at ten million patients
   * would be garbage of 610 MiB in a process that is near its memory bound once ready).
   */
  readonly shared?: boolean
}

/** GLM families, each with its canonical link: Poisson (log) for counts, logistic (logit) for 0/1 outcomes. */
export const GLM_FAMILIES = ["poisson", "logistic"] as const
export type GlmFamily = (typeof GLM_FAMILIES)[number]

/** A fitted generalized linear model. */
export interface GlmResult {
  readonly beta: Float64Array
  /** p × p covariance of beta (inverse Fisher information at the last step). */
  readonly covariance: Float64Array
  readonly iterations: number
  readonly converged: boolean
}

/** IRLS steps allowed before a fit reports `converged: false`. */
export const GLM_MAX_ITERATIONS = 50

/** The kernels plugins may call. Every method is one batch: one boundary crossing per call. */
export interface KernelsService {
  /** Which implementation this is. */
  readonly implementation: "wasm" | "reference"
  /** data: nSeries × nAxes × nPoints. */
  readonly correlationMatrix: (
    data: Float64Array,
    nSeries: number,
    nAxes: number,
    nPoints: number,
    /** `{ spearman: false }`: Pearson only — the ranks, most of the work, are skipped. */
    options?: { readonly spearman?: boolean }
  ) => Effect.Effect<CorrelationResult, KernelError>
  /** xs, ys: nSeries × n; lags 0..maxLag. */
  readonly laggedXcorr: (xs: Float64Array, ys: Float64Array, nSeries: number, n: number, maxLag: number) => Effect.Effect<LaggedResult, KernelError>
  /** data: nSeries × nPoints; predictions for t = nPoints − 1 + 1..horizon. */
  readonly fitTrajectories: (data: Float64Array, nSeries: number, nPoints: number, horizon: number) => Effect.Effect<TrajectoryResult, KernelError>
  /** data: nPatients × nAxes × nPoints; axisCodes: canonical index (0 = PO … 7 = PV) of each axis. */
  readonly evaluateRules: (data: Float64Array, nPatients: number, nAxes: number, nPoints: number, axisCodes: Int32Array) => Effect.Effect<RulesResult, KernelError>
  /** Makes a column resident (call at start-up, not per request). */
  readonly columnF64: (data: Float64Array) => Effect.Effect<Column<Float64Array>, KernelError>
  readonly columnI32: (data: Int32Array) => Effect.Effect<Column<Int32Array>, KernelError>
  readonly columnU8: (data: Uint8Array) => Effect.Effect<Column<Uint8Array>, KernelError>
  /** maskIn & (lo ≤ col ≤ hi). */
  readonly maskRange: (col: Column<Float64Array>, lo: number, hi: number, maskIn: Uint8Array) => Effect.Effect<Uint8Array, KernelError>
  /** maskIn & (set[col] ≠ 0). */
  readonly maskInSet: (col: Column<Int32Array>, set: Uint8Array, maskIn: Uint8Array) => Effect.Effect<Uint8Array, KernelError>
  /** maskIn & (flags ≠ 0). */
  readonly maskFlag: (flags: Column<Uint8Array>, maskIn: Uint8Array) => Effect.Effect<Uint8Array, KernelError>
  readonly maskCount: (mask: Uint8Array) => Effect.Effect<number, KernelError>
  readonly groupStats: (groups: Column<Int32Array>, values: Column<Float64Array>, mask: Uint8Array, nGroups: number) => Effect.Effect<GroupStatsResult, KernelError>
  /** Type-7 quantiles of the selected present values. */
  readonly quantiles: (values: Column<Float64Array>, mask: Uint8Array, qs: ReadonlyArray<number>) => Effect.Effect<{ readonly values: Float64Array; readonly n: number }, KernelError>
  /** Makes the axis panel resident (start-up): a Float32Array is kept wide, a Uint8Array in tenths (see {@link Panel}). */
  readonly panel: (data: Float32Array | Uint8Array, nPatients: number, nAxes: number, nMonths: number) => Effect.Effect<Panel, KernelError>
  /** maskIn & (lo ≤ the patient's mean `axis` score over months [from, to) ≤ hi); no score in range → not selected. */
  readonly panelMeanMask: (panel: Panel, axis: number, from: number, to: number, lo: number, hi: number, maskIn: Uint8Array) => Effect.Effect<Uint8Array, KernelError>
  /**
   * Per selected patient and axis over months [from[p], to[p]): count, mean and least-squares slope
   * of the present scores (`options.outputs`: only those; the others come back empty).
   */
  readonly panelWindows: (panel: Panel, axes: Int32Array, from: Int32Array, to: Int32Array, mask: Uint8Array, options?: PanelWindowsOptions) => Effect.Effect<PanelWindowsResult, KernelError>
  /**
   * panelWindows for a list of patients (e.g. a cohort), outputs for those only: axes × patients,
   * entry k × patients.length + j for patients[j] over its window [from[j], to[j]). The same numbers
   * panelWindows gives them, without an entry (and a copy out of the core) for every other patient.
   */
  readonly panelWindowsOf: (panel: Panel, axes: Int32Array, patients: Int32Array, from: Int32Array, to: Int32Array) => Effect.Effect<PanelWindowsResult, KernelError>
  /** Per axis: per-period-group sums (monthGroup[m], −1 = none) and per-patient OLS slope summaries over months [from, to). */
  readonly panelTrend: (panel: Panel, axes: Int32Array, from: number, to: number, monthGroup: Int32Array, nGroups: number, mask: Uint8Array) => Effect.Effect<PanelTrendResult, KernelError>
  /** panelTrend's `count` and `sum` without the slopes (about half its work), for callers that keep per-patient slopes (panelWindows). */
  readonly panelSums: (panel: Panel, axes: Int32Array, from: number, to: number, monthGroup: Int32Array, nGroups: number, mask: Uint8Array) => Effect.Effect<PanelSumsResult, KernelError>
  /**
   * Per axis and period group (monthGroup[m], −1 = none) over months [from, to): the selected
   * patients scored in the group and the moments of their per-patient sums and counts there — what
   * a period mean's cluster-robust variance needs beside panelSums' count and sum.
   */
  readonly panelPeriods: (panel: Panel, axes: Int32Array, from: number, to: number, monthGroup: Int32Array, nGroups: number, mask: Uint8Array) => Effect.Effect<PanelPeriodsResult, KernelError>
  /**
   * Fits a GLM by IRLS: x n × p row-major (include a column of ones for an intercept), y counts or
   * 0/1, offset added to each linear predictor (log exposure for rates). Fails when a column is
   * constant or collinear (the information matrix is not positive definite).
   */
  readonly fitGlm: (x: Float64Array, y: Float64Array, offset: Float64Array, n: number, p: number, family: GlmFamily) => Effect.Effect<GlmResult, KernelError>
  /** x_i·β for each of n rows of p columns. */
  readonly linearPredictor: (x: Float64Array, n: number, p: number, beta: Float64Array) => Effect.Effect<Float64Array, KernelError>
}


/**
 * The kernels as plain synchronous functions on typed arrays (the package's `./core` entry): the
 * same calls as {@link KernelsService}, returning their results and throwing {@link KernelError}
 * for inputs of the wrong shape.
 */
export type CoreKernels = {
  readonly [K in keyof KernelsService]: KernelsService[K] extends (...args: infer A) => Effect.Effect<infer R, KernelError> ? (...args: A) => R : KernelsService[K]
}
