/**
 * Loads build/core.wasm once per process and checks its ABI version. The instance's memory is
 * owned by the Arena; nothing else writes to it.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

/** ABI version this TypeScript side was written against (assembly/index.ts ABI_VERSION). */
export const EXPECTED_ABI_VERSION = 5

/** Where `npm run build` writes the core. */
export const WASM_PATH = fileURLToPath(new URL("../../build/core.wasm", import.meta.url))

/** The raw exports of the core (numbers and pointers only). */
export interface CoreExports {
  readonly memory: WebAssembly.Memory
  readonly ABI_VERSION: WebAssembly.Global
  readonly alloc: (bytes: number) => number
  readonly mark: () => number
  readonly reset: (mark: number) => void
  readonly correlationMatrix: (data: number, nSeries: number, nAxes: number, nPoints: number, outP: number, outS: number, outC: number, scratch: number) => void
  readonly laggedXcorr: (xs: number, ys: number, nSeries: number, n: number, maxLag: number, outLag: number, outR: number, outP: number, outN: number, scratch: number) => void
  readonly fitTrajectories: (data: number, nSeries: number, nPoints: number, horizon: number, outModel: number, outParams: number, outAicc: number, outPred: number, outLo: number, outHi: number, scratch: number) => void
  readonly evaluateRules: (data: number, nPatients: number, nAxes: number, nPoints: number, axisCodes: number, outMask: number, outAxisMask: number, scratch: number) => void
  readonly maskRange: (col: number, n: number, lo: number, hi: number, maskIn: number, maskOut: number) => void
  readonly maskInSet: (col: number, n: number, set: number, setSize: number, maskIn: number, maskOut: number) => void
  readonly maskCount: (mask: number, n: number) => number
  readonly groupStats: (groups: number, values: number, mask: number, n: number, nGroups: number, outCount: number, outSum: number, outMean: number) => void
  readonly quantiles: (values: number, mask: number, n: number, qs: number, nq: number, out: number, scratch: number) => number
  readonly panelMeanMask: (panel: number, nPatients: number, nMonths: number, axis: number, from: number, to: number, lo: number, hi: number, maskIn: number, maskOut: number) => void
  readonly panelWindows: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, mask: number, outN: number, outMean: number, outSlope: number) => void
  readonly fitGlm: (x: number, y: number, offset: number, n: number, p: number, family: number, maxIter: number, outBeta: number, outCov: number, outInfo: number, scratch: number) => number
  readonly linearPredictor: (x: number, n: number, p: number, beta: number, out: number) => void
  readonly panelTrend: (panel: number, nPatients: number, nMonths: number, axes: number, nAxes: number, from: number, to: number, monthGroup: number, nGroups: number, mask: number, outCount: number, outSum: number, outSlope: number, scratch: number) => void
}

/** Compiles and instantiates the core synchronously (once, at start-up). Throws if missing or of another ABI. */
export const instantiateCore = (path: string = WASM_PATH): CoreExports => {
  const module = new WebAssembly.Module(readFileSync(path))
  const instance = new WebAssembly.Instance(module, {
    env: {
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
