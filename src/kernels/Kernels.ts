/**
 * The compute core as an Effect service. `layerWasm` runs the AssemblyScript kernels (one .wasm
 * instance per process, memory owned by an Arena: every call is one batch whose scratch is freed
 * when it returns); `layerReference` runs the TypeScript twins behind the same interface, for
 * differential tests and as the benchmark baseline. Inputs are checked once here (shapes);
 * values are the caller's business (NaN = missing).
 */
import { Context, Effect, Layer } from "effect"
import { Arena } from "./Arena.ts"
import { KernelError } from "./KernelError.ts"
import { breathe } from "../eventLoop.ts"
import { recordKernel } from "../observability/Metrics.ts"
import * as RefCohort from "./reference/cohort.ts"
import * as RefCorrelation from "./reference/correlation.ts"
import * as RefGlm from "./reference/glm.ts"
import * as RefPanel from "./reference/panel.ts"
import * as RefRules from "./reference/decayRules.ts"
import * as RefTrajectory from "./reference/trajectory.ts"
import { instantiateCore } from "./WasmModule.ts"

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
export interface Column<A extends Float64Array | Int32Array> {
  readonly data: A
  /** Pointer in the WASM core's memory (−1 for the reference layer). */
  readonly ptr: number
}

/** The axis panel (f32, axis-major: [(axis × nPatients + patient) × nMonths + month], NaN = missing), resident once. */
export interface Panel {
  readonly data: Float32Array
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
  /** maskIn & (lo ≤ col ≤ hi). */
  readonly maskRange: (col: Column<Float64Array>, lo: number, hi: number, maskIn: Uint8Array) => Effect.Effect<Uint8Array, KernelError>
  /** maskIn & (set[col] ≠ 0). */
  readonly maskInSet: (col: Column<Int32Array>, set: Uint8Array, maskIn: Uint8Array) => Effect.Effect<Uint8Array, KernelError>
  readonly maskCount: (mask: Uint8Array) => Effect.Effect<number, KernelError>
  readonly groupStats: (groups: Column<Int32Array>, values: Column<Float64Array>, mask: Uint8Array, nGroups: number) => Effect.Effect<GroupStatsResult, KernelError>
  /** Type-7 quantiles of the selected present values. */
  readonly quantiles: (values: Column<Float64Array>, mask: Uint8Array, qs: ReadonlyArray<number>) => Effect.Effect<{ readonly values: Float64Array; readonly n: number }, KernelError>
  /** Makes the axis panel resident (start-up). */
  readonly panel: (data: Float32Array, nPatients: number, nAxes: number, nMonths: number) => Effect.Effect<Panel, KernelError>
  /** maskIn & (lo ≤ the patient's mean `axis` score over months [from, to) ≤ hi); no score in range → not selected. */
  readonly panelMeanMask: (panel: Panel, axis: number, from: number, to: number, lo: number, hi: number, maskIn: Uint8Array) => Effect.Effect<Uint8Array, KernelError>
  /** Per selected patient and axis over months [from[p], to[p]): count, mean and least-squares slope of the present scores. */
  readonly panelWindows: (panel: Panel, axes: Int32Array, from: Int32Array, to: Int32Array, mask: Uint8Array) => Effect.Effect<PanelWindowsResult, KernelError>
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
   * Fits a GLM by IRLS: x n × p row-major (include a column of ones for an intercept), y counts or
   * 0/1, offset added to each linear predictor (log exposure for rates). Fails when a column is
   * constant or collinear (the information matrix is not positive definite).
   */
  readonly fitGlm: (x: Float64Array, y: Float64Array, offset: Float64Array, n: number, p: number, family: GlmFamily) => Effect.Effect<GlmResult, KernelError>
  /** x_i·β for each of n rows of p columns. */
  readonly linearPredictor: (x: Float64Array, n: number, p: number, beta: Float64Array) => Effect.Effect<Float64Array, KernelError>
}

/** Checks that an array has the length its dimensions promise. */
const expectLength = (kernel: string, what: string, actual: number, expected: number): void => {
  if (!Number.isInteger(expected) || expected < 0) throw new KernelError({ kernel, reason: `${what}: dimensions must be non-negative integers` })
  if (actual !== expected) throw new KernelError({ kernel, reason: `${what} has ${actual} values, dimensions say ${expected}` })
}

/**
 * The kernels as plain synchronous functions on typed arrays (the package's `./core` entry): the
 * same calls as {@link KernelsService}, returning their results and throwing {@link KernelError}
 * for inputs of the wrong shape.
 */
export type CoreKernels = {
  readonly [K in keyof KernelsService]: KernelsService[K] extends (...args: infer A) => Effect.Effect<infer R, KernelError> ? (...args: A) => R : KernelsService[K]
}

/** A kernel body, run as it is (the plain functions); the Effect service wraps each call ({@link toService}). */
const run = <A>(body: () => A): A => body()

/** Every kernel call of `kernels` replaced by `wrap(name, call)`; `implementation` kept. */
const mapCalls = <Out>(
  kernels: CoreKernels | KernelsService,
  wrap: (name: string, call: (...args: ReadonlyArray<unknown>) => any) => (...args: ReadonlyArray<unknown>) => unknown
): Out => {
  const out: Record<string, unknown> = { implementation: kernels.implementation }
  for (const [name, call] of Object.entries(kernels)) if (typeof call === "function") out[name] = wrap(name, call)
  return out as Out
}

/**
 * The Effect service over plain kernels: each call runs when the effect runs; a KernelError it
 * throws is a failure, anything else a defect.
 */
export const toService = (core: CoreKernels): KernelsService =>
  mapCalls(core, (_name, call) => (...args) =>
    Effect.suspend(() => {
      try {
        return Effect.succeed(call(...args))
      } catch (e) {
        return e instanceof KernelError ? Effect.fail(e) : Effect.die(e)
      }
    }))

const sameLength = (kernel: string, mask: Uint8Array, n: number) => expectLength(kernel, "mask", mask.length, n)

/** Checks a panel call's mask length (if it has one), month range, axes and (for panelTrend) month groups. */
const checkPanel = (kernel: string, panel: Panel, mask: Uint8Array | undefined, from: number, to: number, axes: ReadonlyArray<number>, monthGroup?: Int32Array) => {
  if (mask !== undefined) sameLength(kernel, mask, panel.nPatients)
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 0 || to > panel.nMonths || from > to) {
    throw new KernelError({ kernel, reason: `month range [${from}, ${to}) is not within [0, ${panel.nMonths})` })
  }
  for (const a of axes) if (!Number.isInteger(a) || a < 0 || a >= panel.nAxes) throw new KernelError({ kernel, reason: `axis ${a} is not within [0, ${panel.nAxes})` })
  if (monthGroup !== undefined) expectLength(kernel, "monthGroup", monthGroup.length, panel.nMonths)
}

/** Checks per-patient windows: one [from, to) per patient (or per listed patient) within the panel's months. */
const checkWindows = (panel: Panel, from: Int32Array, to: Int32Array, patients?: Int32Array) => {
  const kernel = patients === undefined ? "panelWindows" : "panelWindowsOf"
  const count = patients?.length ?? panel.nPatients
  expectLength(kernel, "from", from.length, count)
  expectLength(kernel, "to", to.length, count)
  for (let j = 0; j < count; j++) {
    const p = patients === undefined ? j : patients[j]!
    if (!Number.isInteger(p) || p < 0 || p >= panel.nPatients) throw new KernelError({ kernel, reason: `patient ${p} is not within [0, ${panel.nPatients})` })
    if (from[j]! < 0 || to[j]! > panel.nMonths || from[j]! > to[j]!) {
      throw new KernelError({ kernel, reason: `patient ${p}: window [${from[j]}, ${to[j]}) is not within [0, ${panel.nMonths})` })
    }
  }
}

const makePanel = (data: Float32Array, nPatients: number, nAxes: number, nMonths: number, ptr: number): Panel => {
  expectLength("panel", "data", data.length, nPatients * nAxes * nMonths)
  return { data, ptr, nPatients, nAxes, nMonths }
}

/** Checks a GLM's shapes (fit or prediction). */
const checkGlm = (kernel: string, x: Float64Array, n: number, p: number, vectors: ReadonlyArray<readonly [string, Float64Array, number]>) => {
  if (!Number.isInteger(p) || p < 1) throw new KernelError({ kernel, reason: "p must be an integer ≥ 1" })
  expectLength(kernel, "x", x.length, n * p)
  for (const [what, v, len] of vectors) expectLength(kernel, what, v.length, len)
}

/** A fit's outcome, or the failure a non-positive-definite information matrix means. */
const glmResult = (status: number, beta: Float64Array, covariance: Float64Array, info: Float64Array): GlmResult => {
  if (status !== 0) throw new KernelError({ kernel: "fitGlm", reason: "the information matrix is not positive definite (a constant or collinear column)" })
  return { beta, covariance, iterations: info[0]!, converged: info[1] === 1 }
}

/** A column copied into the core's memory, its data then read from there (one copy, not two). */
const residentColumn = <A extends Float64Array | Int32Array>(arena: Arena, data: A): Column<A> => {
  const { ptr, view } = arena.residentView(data)
  return { data: view, ptr }
}

/** The WASM implementation over one core instance, as plain functions. */
export const makeWasmCore = (arena: Arena): CoreKernels => {
  const core = arena.core
  return {
    implementation: "wasm",
    correlationMatrix: (data, nSeries, nAxes, nPoints, options) =>
      run(() => {
        expectLength("correlationMatrix", "data", data.length, nSeries * nAxes * nPoints)
        const nPairs = (nAxes * (nAxes - 1)) / 2
        const spearman = options?.spearman !== false
        return arena.batch((s) => {
          const d = s.copyIn(data)
          const op = s.alloc(nSeries * nPairs * 8)
          const os = spearman ? s.alloc(nSeries * nPairs * 8) : 0
          const oc = s.alloc(nSeries * nPairs * 8)
          const scratch = s.alloc(nPoints * 36 + 64)
          core.correlationMatrix(d, nSeries, nAxes, nPoints, op, os, oc, scratch)
          return {
            pearson: s.f64(op, nSeries * nPairs),
            spearman: spearman ? s.f64(os, nSeries * nPairs) : new Float64Array(nSeries * nPairs).fill(Number.NaN),
            count: s.f64(oc, nSeries * nPairs)
          }
        })
      }),
    laggedXcorr: (xs, ys, nSeries, n, maxLag) =>
      run(() => {
        expectLength("laggedXcorr", "xs", xs.length, nSeries * n)
        expectLength("laggedXcorr", "ys", ys.length, nSeries * n)
        if (!Number.isInteger(maxLag) || maxLag < 0) throw new KernelError({ kernel: "laggedXcorr", reason: "maxLag must be an integer ≥ 0" })
        return arena.batch((s) => {
          const px = s.copyIn(xs)
          const py = s.copyIn(ys)
          const outs = [0, 1, 2, 3].map(() => s.alloc(nSeries * 8))
          core.laggedXcorr(px, py, nSeries, n, maxLag, outs[0]!, outs[1]!, outs[2]!, outs[3]!, s.alloc(n * 16 + 32))
          return { lag: s.f64(outs[0]!, nSeries), r: s.f64(outs[1]!, nSeries), p: s.f64(outs[2]!, nSeries), n: s.f64(outs[3]!, nSeries) }
        })
      }),
    fitTrajectories: (data, nSeries, nPoints, horizon) =>
      run(() => {
        expectLength("fitTrajectories", "data", data.length, nSeries * nPoints)
        if (!Number.isInteger(horizon) || horizon < 0) throw new KernelError({ kernel: "fitTrajectories", reason: "horizon must be an integer ≥ 0" })
        return arena.batch((s) => {
          const d = s.copyIn(data)
          const om = s.alloc(nSeries * 8)
          const opar = s.alloc(nSeries * 32)
          const oa = s.alloc(nSeries * 40)
          const [pp, pl, ph] = [0, 1, 2].map(() => s.alloc(nSeries * horizon * 8))
          core.fitTrajectories(d, nSeries, nPoints, horizon, om, opar, oa, pp!, pl!, ph!, s.alloc(nPoints * 24 + 256))
          return {
            model: s.f64(om, nSeries),
            params: s.f64(opar, nSeries * 4),
            aicc: s.f64(oa, nSeries * 5),
            pred: s.f64(pp!, nSeries * horizon),
            lo: s.f64(pl!, nSeries * horizon),
            hi: s.f64(ph!, nSeries * horizon)
          }
        })
      }),
    evaluateRules: (data, nPatients, nAxes, nPoints, axisCodes) =>
      run(() => {
        expectLength("evaluateRules", "data", data.length, nPatients * nAxes * nPoints)
        expectLength("evaluateRules", "axisCodes", axisCodes.length, nAxes)
        return arena.batch((s) => {
          const d = s.copyIn(data)
          const codes = s.copyIn(axisCodes)
          const om = s.alloc(nPatients * 4)
          const oa = s.alloc(nPatients * nAxes * 4)
          core.evaluateRules(d, nPatients, nAxes, nPoints, codes, om, oa, s.alloc((2 * nAxes * nPoints + 4 * nPoints + 2 * nAxes) * 8 + 64))
          return { mask: s.i32(om, nPatients), axisMask: s.i32(oa, nPatients * nAxes) }
        })
      }),
    columnF64: (data) => run(() => residentColumn(arena, data)),
    columnI32: (data) => run(() => residentColumn(arena, data)),
    maskRange: (col, lo, hi, maskIn) =>
      run(() => {
        sameLength("maskRange", maskIn, col.data.length)
        return arena.batch((s) => {
          const m = s.copyIn(maskIn)
          core.maskRange(col.ptr, col.data.length, lo, hi, m, m)
          return s.u8(m, maskIn.length)
        })
      }),
    maskInSet: (col, set, maskIn) =>
      run(() => {
        sameLength("maskInSet", maskIn, col.data.length)
        return arena.batch((s) => {
          const m = s.copyIn(maskIn)
          core.maskInSet(col.ptr, col.data.length, s.copyIn(set), set.length, m, m)
          return s.u8(m, maskIn.length)
        })
      }),
    maskCount: (mask) => run(() => arena.batch((s) => core.maskCount(s.copyIn(mask), mask.length))),
    groupStats: (groups, values, mask, nGroups) =>
      run(() => {
        sameLength("groupStats", mask, groups.data.length)
        expectLength("groupStats", "values", values.data.length, groups.data.length)
        return arena.batch((s) => {
          const [c, sum, mean] = [0, 1, 2].map(() => s.alloc(nGroups * 8))
          core.groupStats(groups.ptr, values.ptr, s.copyIn(mask), mask.length, nGroups, c!, sum!, mean!)
          return { count: s.f64(c!, nGroups), sum: s.f64(sum!, nGroups), mean: s.f64(mean!, nGroups) }
        })
      }),
    quantiles: (values, mask, qs) =>
      run(() => {
        sameLength("quantiles", mask, values.data.length)
        return arena.batch((s) => {
          const out = s.alloc(qs.length * 8)
          const n = core.quantiles(values.ptr, s.copyIn(mask), mask.length, s.copyIn(Float64Array.from(qs)), qs.length, out, s.alloc(values.data.length * 8))
          return { values: s.f64(out, qs.length), n }
        })
      }),
    panel: (data, nPatients, nAxes, nMonths) =>
      run(() => {
        expectLength("panel", "data", data.length, nPatients * nAxes * nMonths)
        const { ptr, view } = arena.residentView(data)
        return makePanel(view, nPatients, nAxes, nMonths, ptr)
      }),
    panelMeanMask: (panel, axis, from, to, lo, hi, maskIn) =>
      run(() => {
        checkPanel("panelMeanMask", panel, maskIn, from, to, [axis])
        return arena.batch((s) => {
          const m = s.copyIn(maskIn)
          core.panelMeanMask(panel.ptr, panel.nPatients, panel.nMonths, axis, from, to, lo, hi, m, m)
          return s.u8(m, maskIn.length)
        })
      }),
    panelWindows: (panel, axes, from, to, mask) =>
      run(() => {
        checkPanel("panelWindows", panel, mask, 0, panel.nMonths, Array.from(axes))
        checkWindows(panel, from, to)
        const size = axes.length * panel.nPatients
        return arena.batch((s) => {
          const [on, om, os] = [0, 1, 2].map(() => s.alloc(size * 8))
          core.panelWindows(panel.ptr, panel.nPatients, panel.nMonths, s.copyIn(axes), axes.length, s.copyIn(from), s.copyIn(to), s.copyIn(mask), on!, om!, os!)
          return { n: s.f64(on!, size), mean: s.f64(om!, size), slope: s.f64(os!, size) }
        })
      }),
    panelWindowsOf: (panel, axes, patients, from, to) =>
      run(() => {
        checkPanel("panelWindowsOf", panel, undefined, 0, panel.nMonths, Array.from(axes))
        checkWindows(panel, from, to, patients)
        const size = axes.length * patients.length
        return arena.batch((s) => {
          const [on, om, os] = [0, 1, 2].map(() => s.alloc(size * 8))
          core.panelWindowsOf(panel.ptr, panel.nPatients, panel.nMonths, s.copyIn(axes), axes.length, s.copyIn(patients), patients.length, s.copyIn(from), s.copyIn(to), on!, om!, os!)
          return { n: s.f64(on!, size), mean: s.f64(om!, size), slope: s.f64(os!, size) }
        })
      }),
    panelTrend: (panel, axes, from, to, monthGroup, nGroups, mask) =>
      run(() => {
        checkPanel("panelTrend", panel, mask, from, to, Array.from(axes), monthGroup)
        return arena.batch((s) => {
          const [c, sum] = [0, 1].map(() => s.alloc(axes.length * nGroups * 8))
          const slope = s.alloc(axes.length * 24)
          core.panelTrend(panel.ptr, panel.nPatients, panel.nMonths, s.copyIn(axes), axes.length, from, to, s.copyIn(monthGroup), nGroups, s.copyIn(mask), c!, sum!, slope, s.alloc(panel.nMonths * 16))
          return { count: s.f64(c!, axes.length * nGroups), sum: s.f64(sum!, axes.length * nGroups), slope: s.f64(slope, axes.length * 3) }
        })
      }),
    panelSums: (panel, axes, from, to, monthGroup, nGroups, mask) =>
      run(() => {
        checkPanel("panelSums", panel, mask, from, to, Array.from(axes), monthGroup)
        return arena.batch((s) => {
          const [c, sum] = [0, 1].map(() => s.alloc(axes.length * nGroups * 8))
          core.panelSums(panel.ptr, panel.nPatients, panel.nMonths, s.copyIn(axes), axes.length, from, to, s.copyIn(monthGroup), nGroups, s.copyIn(mask), c!, sum!, s.alloc(panel.nMonths * 16))
          return { count: s.f64(c!, axes.length * nGroups), sum: s.f64(sum!, axes.length * nGroups) }
        })
      }),
    fitGlm: (x, y, offset, n, p, family) =>
      run(() => {
        checkGlm("fitGlm", x, n, p, [["y", y, n], ["offset", offset, n]])
        return arena.batch((s) => {
          const [ob, oc, oi] = [p * 8, p * p * 8, 24].map((bytes) => s.alloc(bytes))
          const status = core.fitGlm(s.copyIn(x), s.copyIn(y), s.copyIn(offset), n, p, GLM_FAMILIES.indexOf(family), GLM_MAX_ITERATIONS, ob!, oc!, oi!, s.alloc((p * p + 2 * p) * 8))
          return glmResult(status, s.f64(ob!, p), s.f64(oc!, p * p), s.f64(oi!, 3))
        })
      }),
    linearPredictor: (x, n, p, beta) =>
      run(() => {
        checkGlm("linearPredictor", x, n, p, [["beta", beta, p]])
        return arena.batch((s) => {
          const out = s.alloc(n * 8)
          core.linearPredictor(s.copyIn(x), n, p, s.copyIn(beta), out)
          return s.f64(out, n)
        })
      })
  }
}

/** A call that held the thread this long is followed by a turn of the event loop (see {@link timed}). */
const LONG_CALL_MS = 10

/**
 * The service as the server holds it: every call's time recorded (`hcc_kernel_duration_seconds{kernel}`;
 * the calls are synchronous inside their Effect, so the time is the kernel's own), and a call that
 * took over {@link LONG_CALL_MS} followed by a turn of the event loop, so a run of heavy calls (the
 * risk model's fits while the dataset loads, a cold query's scans) lets probes and other requests in
 * between them instead of after all of them.
 */
export const timed = (service: KernelsService, record: (kernel: string, seconds: number) => void = recordKernel): KernelsService =>
  mapCalls(service, (name, call) => (...args) =>
    Effect.suspend(() => {
      const started = performance.now()
      return Effect.flatMap(Effect.exit(call(...args) as Effect.Effect<unknown, KernelError>), (exit) => {
        const ms = performance.now() - started
        record(name, ms / 1000)
        return ms > LONG_CALL_MS ? Effect.andThen(breathe, exit) : exit
      })
    }))

/** The WASM implementation over one core instance. */
export const makeWasm = (arena: Arena): KernelsService => toService(makeWasmCore(arena))

/** The TypeScript twins behind the same interface, as plain functions. */
export const referenceCore: CoreKernels = {
  implementation: "reference",
  correlationMatrix: (data, nSeries, nAxes, nPoints, options) =>
    run(() => {
      expectLength("correlationMatrix", "data", data.length, nSeries * nAxes * nPoints)
      const nPairs = (nAxes * (nAxes - 1)) / 2
      const spearman = options?.spearman !== false
      const out = { pearson: new Float64Array(nSeries * nPairs), spearman: new Float64Array(nSeries * nPairs), count: new Float64Array(nSeries * nPairs) }
      RefCorrelation.correlationMatrix(data, nSeries, nAxes, nPoints, out.pearson, spearman ? out.spearman : undefined, out.count)
      if (!spearman) out.spearman.fill(Number.NaN)
      return out
    }),
  laggedXcorr: (xs, ys, nSeries, n, maxLag) =>
    run(() => {
      expectLength("laggedXcorr", "xs", xs.length, nSeries * n)
      expectLength("laggedXcorr", "ys", ys.length, nSeries * n)
      if (!Number.isInteger(maxLag) || maxLag < 0) throw new KernelError({ kernel: "laggedXcorr", reason: "maxLag must be an integer ≥ 0" })
      const out = { lag: new Float64Array(nSeries), r: new Float64Array(nSeries), p: new Float64Array(nSeries), n: new Float64Array(nSeries) }
      RefCorrelation.laggedXcorr(xs, ys, nSeries, n, maxLag, out.lag, out.r, out.p, out.n)
      return out
    }),
  fitTrajectories: (data, nSeries, nPoints, horizon) =>
    run(() => {
      expectLength("fitTrajectories", "data", data.length, nSeries * nPoints)
      if (!Number.isInteger(horizon) || horizon < 0) throw new KernelError({ kernel: "fitTrajectories", reason: "horizon must be an integer ≥ 0" })
      const out = {
        model: new Float64Array(nSeries),
        params: new Float64Array(nSeries * 4),
        aicc: new Float64Array(nSeries * 5),
        pred: new Float64Array(nSeries * horizon),
        lo: new Float64Array(nSeries * horizon),
        hi: new Float64Array(nSeries * horizon)
      }
      RefTrajectory.fitTrajectories(data, nSeries, nPoints, horizon, out.model, out.params, out.aicc, out.pred, out.lo, out.hi)
      return out
    }),
  evaluateRules: (data, nPatients, nAxes, nPoints, axisCodes) =>
    run(() => {
      expectLength("evaluateRules", "data", data.length, nPatients * nAxes * nPoints)
      expectLength("evaluateRules", "axisCodes", axisCodes.length, nAxes)
      const out = { mask: new Int32Array(nPatients), axisMask: new Int32Array(nPatients * nAxes) }
      RefRules.evaluateRules(data, nPatients, nAxes, nPoints, axisCodes, out.mask, out.axisMask)
      return out
    }),
  columnF64: (data) => ({ data, ptr: -1 }),
  columnI32: (data) => ({ data, ptr: -1 }),
  maskRange: (col, lo, hi, maskIn) =>
    run(() => {
      sameLength("maskRange", maskIn, col.data.length)
      const out = new Uint8Array(maskIn.length)
      RefCohort.maskRange(col.data, lo, hi, maskIn, out)
      return out
    }),
  maskInSet: (col, set, maskIn) =>
    run(() => {
      sameLength("maskInSet", maskIn, col.data.length)
      const out = new Uint8Array(maskIn.length)
      RefCohort.maskInSet(col.data, set, maskIn, out)
      return out
    }),
  maskCount: (mask) => RefCohort.maskCount(mask),
  groupStats: (groups, values, mask, nGroups) =>
    run(() => {
      sameLength("groupStats", mask, groups.data.length)
      expectLength("groupStats", "values", values.data.length, groups.data.length)
      const out = { count: new Float64Array(nGroups), sum: new Float64Array(nGroups), mean: new Float64Array(nGroups) }
      RefCohort.groupStats(groups.data, values.data, mask, nGroups, out.count, out.sum, out.mean)
      return out
    }),
  quantiles: (values, mask, qs) =>
    run(() => {
      sameLength("quantiles", mask, values.data.length)
      const out = new Float64Array(qs.length)
      const n = RefCohort.quantiles(values.data, mask, Float64Array.from(qs), out)
      return { values: out, n }
    }),
  panel: (data, nPatients, nAxes, nMonths) => run(() => makePanel(data, nPatients, nAxes, nMonths, -1)),
  panelMeanMask: (panel, axis, from, to, lo, hi, maskIn) =>
    run(() => {
      checkPanel("panelMeanMask", panel, maskIn, from, to, [axis])
      const out = new Uint8Array(maskIn.length)
      RefPanel.panelMeanMask(panel.data, panel.nPatients, panel.nMonths, axis, from, to, lo, hi, maskIn, out)
      return out
    }),
  panelWindows: (panel, axes, from, to, mask) =>
    run(() => {
      checkPanel("panelWindows", panel, mask, 0, panel.nMonths, Array.from(axes))
      checkWindows(panel, from, to)
      const size = axes.length * panel.nPatients
      const out = { n: new Float64Array(size), mean: new Float64Array(size), slope: new Float64Array(size) }
      RefPanel.panelWindows(panel.data, panel.nPatients, panel.nMonths, axes, from, to, mask, out.n, out.mean, out.slope)
      return out
    }),
  panelWindowsOf: (panel, axes, patients, from, to) =>
    run(() => {
      checkPanel("panelWindowsOf", panel, undefined, 0, panel.nMonths, Array.from(axes))
      checkWindows(panel, from, to, patients)
      const size = axes.length * patients.length
      const out = { n: new Float64Array(size), mean: new Float64Array(size), slope: new Float64Array(size) }
      RefPanel.panelWindowsOf(panel.data, panel.nPatients, panel.nMonths, axes, patients, from, to, out.n, out.mean, out.slope)
      return out
    }),
  panelTrend: (panel, axes, from, to, monthGroup, nGroups, mask) =>
    run(() => {
      checkPanel("panelTrend", panel, mask, from, to, Array.from(axes), monthGroup)
      const out = { count: new Float64Array(axes.length * nGroups), sum: new Float64Array(axes.length * nGroups), slope: new Float64Array(axes.length * 3) }
      RefPanel.panelTrend(panel.data, panel.nPatients, panel.nMonths, axes, from, to, monthGroup, nGroups, mask, out.count, out.sum, out.slope)
      return out
    }),
  panelSums: (panel, axes, from, to, monthGroup, nGroups, mask) =>
    run(() => {
      checkPanel("panelSums", panel, mask, from, to, Array.from(axes), monthGroup)
      const out = { count: new Float64Array(axes.length * nGroups), sum: new Float64Array(axes.length * nGroups) }
      RefPanel.panelSums(panel.data, panel.nPatients, panel.nMonths, axes, from, to, monthGroup, nGroups, mask, out.count, out.sum)
      return out
    }),
  fitGlm: (x, y, offset, n, p, family) =>
    run(() => {
      checkGlm("fitGlm", x, n, p, [["y", y, n], ["offset", offset, n]])
      const beta = new Float64Array(p)
      const covariance = new Float64Array(p * p)
      const info = new Float64Array(3)
      const status = RefGlm.fitGlm(x, y, offset, n, p, GLM_FAMILIES.indexOf(family), GLM_MAX_ITERATIONS, beta, covariance, info)
      return glmResult(status, beta, covariance, info)
    }),
  linearPredictor: (x, n, p, beta) =>
    run(() => {
      checkGlm("linearPredictor", x, n, p, [["beta", beta, p]])
      const out = new Float64Array(n)
      RefGlm.linearPredictor(x, n, p, beta, out)
      return out
    })
}

/** The TypeScript twins behind the same interface. */
export const reference: KernelsService = toService(referenceCore)

/** The compute core, as plugins require it. */
export class Kernels extends Context.Service<Kernels, KernelsService>()("hcc/Kernels") {
  /** The WASM core: instantiated once when the layer is built (start-up), fails start-up if missing. */
  static readonly layerWasm = Layer.effect(
    Kernels,
    Effect.try({
      try: () => timed(makeWasm(new Arena(instantiateCore()))),
      catch: (e) => new KernelError({ kernel: "instantiate", reason: e instanceof Error ? e.message : String(e) })
    })
  )
  /** The TypeScript twins (tests, benchmark baseline). */
  static readonly layerReference = Layer.succeed(Kernels, reference)
}
