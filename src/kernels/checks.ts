/**
 * The shapes every kernel call is checked against, once, around either core (the WASM one and the
 * TypeScript twins): array lengths against their dimensions, month ranges, axes, patients and
 * windows. A call of the wrong shape throws KernelError before any core sees it; values are the
 * caller's business (NaN = missing).
 */
import { KernelError } from "./KernelError.ts"
import { type CoreKernels, GLM_FAMILIES, type GlmResult, type Panel } from "./types.ts"

/** Checks that an array has the length its dimensions promise. */
const expectLength = (kernel: string, what: string, actual: number, expected: number): void => {
  if (!Number.isInteger(expected) || expected < 0) throw new KernelError({ kernel, reason: `${what}: dimensions must be non-negative integers` })
  if (actual !== expected) throw new KernelError({ kernel, reason: `${what} has ${actual} values, dimensions say ${expected}` })
}

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

/** Checks a GLM's shapes (fit or prediction). */
const checkGlm = (kernel: string, x: Float64Array, n: number, p: number, vectors: ReadonlyArray<readonly [string, Float64Array, number]>) => {
  if (!Number.isInteger(p) || p < 1) throw new KernelError({ kernel, reason: "p must be an integer ≥ 1" })
  expectLength(kernel, "x", x.length, n * p)
  for (const [what, v, len] of vectors) expectLength(kernel, what, v.length, len)
}

/** A fit's outcome, or the failure a non-positive-definite information matrix means. */
export const glmResult = (status: number, beta: Float64Array, covariance: Float64Array, info: Float64Array): GlmResult => {
  if (status !== 0) throw new KernelError({ kernel: "fitGlm", reason: "the information matrix is not positive definite (a constant or collinear column)" })
  return { beta, covariance, iterations: info[0]!, converged: info[1] === 1 }
}

/** What each kernel checks before it runs (kernels not listed take any input). */
const CHECKS: { readonly [K in keyof CoreKernels]?: CoreKernels[K] extends (...args: infer A) => unknown ? (...args: A) => void : never } = {
  correlationMatrix: (data, nSeries, nAxes, nPoints) => expectLength("correlationMatrix", "data", data.length, nSeries * nAxes * nPoints),
  laggedXcorr: (xs, ys, nSeries, n, maxLag) => {
    expectLength("laggedXcorr", "xs", xs.length, nSeries * n)
    expectLength("laggedXcorr", "ys", ys.length, nSeries * n)
    if (!Number.isInteger(maxLag) || maxLag < 0) throw new KernelError({ kernel: "laggedXcorr", reason: "maxLag must be an integer ≥ 0" })
  },
  fitTrajectories: (data, nSeries, nPoints, horizon) => {
    expectLength("fitTrajectories", "data", data.length, nSeries * nPoints)
    if (!Number.isInteger(horizon) || horizon < 0) throw new KernelError({ kernel: "fitTrajectories", reason: "horizon must be an integer ≥ 0" })
  },
  evaluateRules: (data, nPatients, nAxes, nPoints, axisCodes) => {
    expectLength("evaluateRules", "data", data.length, nPatients * nAxes * nPoints)
    expectLength("evaluateRules", "axisCodes", axisCodes.length, nAxes)
  },
  maskRange: (col, _lo, _hi, maskIn) => sameLength("maskRange", maskIn, col.data.length),
  maskInSet: (col, _set, maskIn) => sameLength("maskInSet", maskIn, col.data.length),
  groupStats: (groups, values, mask) => {
    sameLength("groupStats", mask, groups.data.length)
    expectLength("groupStats", "values", values.data.length, groups.data.length)
  },
  quantiles: (values, mask) => sameLength("quantiles", mask, values.data.length),
  panel: (data, nPatients, nAxes, nMonths) => expectLength("panel", "data", data.length, nPatients * nAxes * nMonths),
  panelMeanMask: (panel, axis, from, to, _lo, _hi, maskIn) => checkPanel("panelMeanMask", panel, maskIn, from, to, [axis]),
  panelWindows: (panel, axes, from, to, mask, options) => {
    checkPanel("panelWindows", panel, mask, 0, panel.nMonths, Array.from(axes))
    checkWindows(panel, from, to)
    for (const o of options?.outputs ?? []) {
      if (o !== "n" && o !== "mean" && o !== "slope") throw new KernelError({ kernel: "panelWindows", reason: `output ${String(o)} is not one of n, mean, slope` })
    }
  },
  panelWindowsOf: (panel, axes, patients, from, to) => {
    checkPanel("panelWindowsOf", panel, undefined, 0, panel.nMonths, Array.from(axes))
    checkWindows(panel, from, to, patients)
  },
  panelTrend: (panel, axes, from, to, monthGroup, _nGroups, mask) => checkPanel("panelTrend", panel, mask, from, to, Array.from(axes), monthGroup),
  panelSums: (panel, axes, from, to, monthGroup, _nGroups, mask) => checkPanel("panelSums", panel, mask, from, to, Array.from(axes), monthGroup),
  panelPeriods: (panel, axes, from, to, monthGroup, _nGroups, mask) => checkPanel("panelPeriods", panel, mask, from, to, Array.from(axes), monthGroup),
  fitGlm: (x, y, offset, n, p) => checkGlm("fitGlm", x, n, p, [["y", y, n], ["offset", offset, n]]),
  linearPredictor: (x, n, p, beta) => checkGlm("linearPredictor", x, n, p, [["beta", beta, p]])
}

/** `core` with every call's shape checked first. */
export const withShapeChecks = (core: CoreKernels): CoreKernels => {
  const out: Record<string, unknown> = { implementation: core.implementation }
  for (const [name, call] of Object.entries(core)) {
    if (typeof call !== "function") continue
    const check = (CHECKS as Record<string, ((...args: ReadonlyArray<unknown>) => void) | undefined>)[name]
    out[name] = check === undefined ? call : (...args: ReadonlyArray<unknown>) => {
      check(...args)
      return (call as (...a: ReadonlyArray<unknown>) => unknown)(...args)
    }
  }
  return out as CoreKernels
}

/** The index of a GLM family in the core's calls. */
export const familyIndex = (family: (typeof GLM_FAMILIES)[number]): number => GLM_FAMILIES.indexOf(family)
