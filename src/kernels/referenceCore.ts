/**
 * The TypeScript twins of the WASM kernels (src/kernels/reference/), behind the same interface as
 * plain functions: the same arithmetic in the same order, for the differential tests and as the
 * benchmark baseline. Shapes are checked around them (checks.ts).
 */
import { familyIndex, glmResult, withShapeChecks } from "./checks.ts"
import * as RefCohort from "./reference/cohort.ts"
import * as RefCorrelation from "./reference/correlation.ts"
import * as RefGlm from "./reference/glm.ts"
import * as RefPanel from "./reference/panel.ts"
import * as RefPeriods from "./reference/panelPeriods.ts"
import * as RefRules from "./reference/decayRules.ts"
import * as RefTrajectory from "./reference/trajectory.ts"
import { type CoreKernels, GLM_MAX_ITERATIONS } from "./types.ts"

/** The TypeScript twins behind the same interface, as plain functions. */
const twins: CoreKernels = {
  implementation: "reference",
  correlationMatrix: (data, nSeries, nAxes, nPoints, options) => {
    const nPairs = (nAxes * (nAxes - 1)) / 2
    const spearman = options?.spearman !== false
    const out = { pearson: new Float64Array(nSeries * nPairs), spearman: new Float64Array(nSeries * nPairs), count: new Float64Array(nSeries * nPairs) }
    RefCorrelation.correlationMatrix(data, nSeries, nAxes, nPoints, out.pearson, spearman ? out.spearman : undefined, out.count)
    if (!spearman) out.spearman.fill(Number.NaN)
    return out
  },
  laggedXcorr: (xs, ys, nSeries, n, maxLag) => {
    const out = { lag: new Float64Array(nSeries), r: new Float64Array(nSeries), p: new Float64Array(nSeries), n: new Float64Array(nSeries) }
    RefCorrelation.laggedXcorr(xs, ys, nSeries, n, maxLag, out.lag, out.r, out.p, out.n)
    return out
  },
  fitTrajectories: (data, nSeries, nPoints, horizon) => {
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
  },
  evaluateRules: (data, nPatients, nAxes, nPoints, axisCodes) => {
    const out = { mask: new Int32Array(nPatients), axisMask: new Int32Array(nPatients * nAxes) }
    RefRules.evaluateRules(data, nPatients, nAxes, nPoints, axisCodes, out.mask, out.axisMask)
    return out
  },
  columnF64: (data) => ({ data, ptr: -1 }),
  columnI32: (data) => ({ data, ptr: -1 }),
  columnU8: (data) => ({ data, ptr: -1 }),
  maskRange: (col, lo, hi, maskIn) => {
    const out = new Uint8Array(maskIn.length)
    RefCohort.maskRange(col.data, lo, hi, maskIn, out)
    return out
  },
  maskInSet: (col, set, maskIn) => {
    const out = new Uint8Array(maskIn.length)
    RefCohort.maskInSet(col.data, set, maskIn, out)
    return out
  },
  maskFlag: (flags, maskIn) => {
    const out = new Uint8Array(maskIn.length)
    RefCohort.maskFlag(flags.data, maskIn, out)
    return out
  },
  maskCount: (mask) => RefCohort.maskCount(mask),
  groupStats: (groups, values, mask, nGroups) => {
    const out = { count: new Float64Array(nGroups), sum: new Float64Array(nGroups), mean: new Float64Array(nGroups) }
    RefCohort.groupStats(groups.data, values.data, mask, nGroups, out.count, out.sum, out.mean)
    return out
  },
  quantiles: (values, mask, qs) => {
    const out = new Float64Array(qs.length)
    const n = RefCohort.quantiles(values.data, mask, Float64Array.from(qs), out)
    return { values: out, n }
  },
  panel: (data, nPatients, nAxes, nMonths) => ({ data, ptr: -1, nPatients, nAxes, nMonths }),
  panelMeanMask: (panel, axis, from, to, lo, hi, maskIn) => {
    const out = new Uint8Array(maskIn.length)
    RefPanel.panelMeanMask(panel.data, panel.nPatients, panel.nMonths, axis, from, to, lo, hi, maskIn, out)
    return out
  },
  panelWindows: (panel, axes, from, to, mask, options) => {
    const size = axes.length * panel.nPatients
    const array = () => new Float64Array(options?.shared === true ? new SharedArrayBuffer(size * 8) : new ArrayBuffer(size * 8))
    const out = { n: array(), mean: array(), slope: array() }
    RefPanel.panelWindows(panel.data, panel.nPatients, panel.nMonths, axes, from, to, mask, out.n, out.mean, out.slope)
    const kept = (o: keyof typeof out) => (options?.outputs?.includes(o) ?? true ? out[o] : new Float64Array(0))
    return { n: kept("n"), mean: kept("mean"), slope: kept("slope") }
  },
  panelWindowsOf: (panel, axes, patients, from, to) => {
    const size = axes.length * patients.length
    const out = { n: new Float64Array(size), mean: new Float64Array(size), slope: new Float64Array(size) }
    RefPanel.panelWindowsOf(panel.data, panel.nPatients, panel.nMonths, axes, patients, from, to, out.n, out.mean, out.slope)
    return out
  },
  panelTrend: (panel, axes, from, to, monthGroup, nGroups, mask) => {
    const out = { count: new Float64Array(axes.length * nGroups), sum: new Float64Array(axes.length * nGroups), slope: new Float64Array(axes.length * 3) }
    RefPanel.panelTrend(panel.data, panel.nPatients, panel.nMonths, axes, from, to, monthGroup, nGroups, mask, out.count, out.sum, out.slope)
    return out
  },
  panelSums: (panel, axes, from, to, monthGroup, nGroups, mask) => {
    const out = { count: new Float64Array(axes.length * nGroups), sum: new Float64Array(axes.length * nGroups) }
    RefPanel.panelSums(panel.data, panel.nPatients, panel.nMonths, axes, from, to, monthGroup, nGroups, mask, out.count, out.sum)
    return out
  },
  panelPeriods: (panel, axes, from, to, monthGroup, nGroups, mask) => {
    const size = axes.length * nGroups
    const out = { patients: new Float64Array(size), sumSquares: new Float64Array(size), sumCounts: new Float64Array(size), countSquares: new Float64Array(size) }
    RefPeriods.panelPeriods(panel.data, panel.nPatients, panel.nMonths, axes, from, to, monthGroup, nGroups, mask, out.patients, out.sumSquares, out.sumCounts, out.countSquares)
    return out
  },
  fitGlm: (x, y, offset, n, p, family) => {
    const beta = new Float64Array(p)
    const covariance = new Float64Array(p * p)
    const info = new Float64Array(3)
    const status = RefGlm.fitGlm(x, y, offset, n, p, familyIndex(family), GLM_MAX_ITERATIONS, beta, covariance, info)
    return glmResult(status, beta, covariance, info)
  },
  linearPredictor: (x, n, p, beta) => {
    const out = new Float64Array(n)
    RefGlm.linearPredictor(x, n, p, beta, out)
    return out
  }
}

/** The TypeScript twins as plain functions, their calls' shapes checked. */
export const referenceCore: CoreKernels = withShapeChecks(twins)
