/**
 * Loads build/core.wasm and checks its ABI version. The core imports its linear memory, a shared
 * WebAssembly.Memory: one instance per thread can run over the same memory (the dataset's columns
 * and panel held once), each allocating only inside its own arena region (`setArena`). Alone, an
 * instance gets a memory of its own. Growing a shared memory never detaches views over it.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** ABI version this TypeScript side was written against (assembly/index.ts ABI_VERSION). */
export const EXPECTED_ABI_VERSION = 11

/** Where `npm run build` writes the core. */
export const WASM_PATH = fileURLToPath(new URL("../../build/core.wasm", import.meta.url))

/** The raw exports of the core (numbers and pointers only). */
export interface CoreExports {
  readonly memory: WebAssembly.Memory
  readonly ABI_VERSION: WebAssembly.Global
  readonly alloc: (bytes: number) => number
  readonly mark: () => number
  readonly reset: (mark: number) => void
  readonly setArena: (start: number, end: number) => void
  readonly heapBase: () => number
  readonly correlationMatrix: (data: number, nSeries: number, nAxes: number, nPoints: number, outP: number, outS: number, outC: number, scratch: number) => void
  readonly laggedXcorr: (xs: number, ys: number, nSeries: number, n: number, maxLag: number, outLag: number, outR: number, outP: number, outN: number, scratch: number) => void
  readonly fitTrajectories: (data: number, nSeries: number, nPoints: number, horizon: number, outModel: number, outParams: number, outAicc: number, outPred: number, outLo: number, outHi: number, scratch: number) => void
  readonly evaluateRules: (data: number, nPatients: number, nAxes: number, nPoints: number, axisCodes: number, outMask: number, outAxisMask: number, scratch: number) => void
  readonly maskRange: (col: number, n: number, lo: number, hi: number, maskIn: number, maskOut: number) => void
  readonly maskInSet: (col: number, n: number, set: number, setSize: number, maskIn: number, maskOut: number) => void
  readonly maskFlag: (flags: number, n: number, maskIn: number, maskOut: number) => void
  readonly maskCount: (mask: number, n: number) => number
  readonly groupStats: (groups: number, values: number, mask: number, n: number, nGroups: number, outCount: number, outSum: number, outMean: number) => void
  readonly quantiles: (values: number, mask: number, n: number, qs: number, nq: number, out: number, scratch: number) => number
  readonly panelMeanMask: (panel: number, nPatients: number, nMonths: number, axis: number, from: number, to: number, lo: number, hi: number, maskIn: number, maskOut: number) => void
  readonly panelMeanMaskTenths: (panel: number, nPatients: number, nMonths: number, axis: number, from: number, to: number, lo: number, hi: number, maskIn: number, maskOut: number) => void
  readonly panelWindows: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, mask: number, outN: number, outMean: number, outSlope: number) => void
  readonly panelWindowsTenths: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, mask: number, outN: number, outMean: number, outSlope: number) => void
  readonly panelWindowsOf: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, patients: number, count: number, from: number, to: number, outN: number, outMean: number, outSlope: number) => void
  readonly panelWindowsOfTenths: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, patients: number, count: number, from: number, to: number, outN: number, outMean: number, outSlope: number) => void
  readonly fitGlm: (x: number, y: number, offset: number, n: number, p: number, family: number, maxIter: number, outBeta: number, outCov: number, outInfo: number, scratch: number) => number
  readonly linearPredictor: (x: number, n: number, p: number, beta: number, out: number) => void
  readonly panelTrend: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, monthGroup: number, nGroups: number, mask: number, outCount: number, outSum: number, outSlope: number, scratch: number) => void
  readonly panelTrendTenths: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, monthGroup: number, nGroups: number, mask: number, outCount: number, outSum: number, outSlope: number, scratch: number) => void
  readonly panelSums: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, monthGroup: number, nGroups: number, mask: number, outCount: number, outSum: number, scratch: number) => void
  readonly panelSumsTenths: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, monthGroup: number, nGroups: number, mask: number, outCount: number, outSum: number, scratch: number, everyone: number) => void
  readonly panelPeriods: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, monthGroup: number, nGroups: number, mask: number, outPatients: number, outSS: number, outSN: number, outNN: number, scratch: number) => void
  readonly panelPeriodsTenths: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, monthGroup: number, nGroups: number, mask: number, outPatients: number, outSS: number, outSN: number, outNN: number, scratch: number) => void
  readonly panelHistogramsTenths: (panel: number, nPatients: number, nMonths: number, axis: number, first: number, count: number, out: number) => void
}

/** Pages of 64 KiB the core's memory may grow to: the whole 4 GiB a 32-bit memory can address (reserved, not committed). */
export const MAX_PAGES = 65536

/** A new memory for the core (shared, so threads can run instances over it). */
export const newCoreMemory = (): WebAssembly.Memory => new WebAssembly.Memory({ initial: 16, maximum: MAX_PAGES, shared: true })

let compiled: { readonly path: string; readonly module: WebAssembly.Module } | undefined

/**
 * Compiles (once per path) and instantiates the core synchronously, over `memory` (a new one by
 * default). Throws if missing or of another ABI.
 */
export const instantiateCore = (path: string = WASM_PATH, memory: WebAssembly.Memory = newCoreMemory()): CoreExports => {
  if (compiled?.path !== path) compiled = { path, module: new WebAssembly.Module(readFileSync(path)) }
  const instance = new WebAssembly.Instance(compiled.module, {
    env: {
      memory,
      abort: (_msg: number, _file: number, line: number, column: number) => {
        throw new Error(`WASM core aborted at ${line}:${column}`)
      }
    }
  })
  const core = instance.exports as unknown as CoreExports
  const abi = core.ABI_VERSION.value as number
  if (abi !== EXPECTED_ABI_VERSION) throw new Error(`build/core.wasm has ABI ${abi}, expected ${EXPECTED_ABI_VERSION}: run npm run build`)
  return core
}
