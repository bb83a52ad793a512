/**
 * The compute core for benchmark harnesses and other programs (the package's `./core` entry): every
 * kernel as a plain synchronous function on typed arrays, no Effect needed.
 *
 * ```ts
 * import { loadCore, twins } from "hcc-medical-intelligence/core"
 * const core = loadCore()                       // instantiates the .wasm once per process
 * const r = core.correlationMatrix(data, nSeries, nAxes, nPoints)
 * const same = twins.correlationMatrix(data, nSeries, nAxes, nPoints)   // the TypeScript twin
 * ```
 *
 * Calls throw {@link KernelError} when an input's shape is wrong (its `kernel` and `reason` say
 * which); values are the caller's business (NaN = missing). docs/core.md describes each kernel and
 * shows a harness that times one.
 */
import { Arena } from "../kernels/Arena.ts"
import { type CoreKernels, makeWasmCore, referenceCore } from "../kernels/Kernels.ts"
import { instantiateCore, WASM_PATH } from "../kernels/WasmModule.ts"

export { KernelError } from "../kernels/KernelError.ts"
export type {
  Column,
  CoreKernels,
  CorrelationResult,
  GlmFamily,
  GlmResult,
  GroupStatsResult,
  LaggedResult,
  Panel,
  PanelTrendResult,
  PanelWindowsOptions,
  PanelWindowsResult,
  RulesResult,
  TrajectoryResult
} from "../kernels/Kernels.ts"
export { GLM_FAMILIES } from "../kernels/Kernels.ts"
export { MISSING_TENTH, scoreReader, toTenths } from "../kernels/tenths.ts"
export { MODEL_NAMES } from "../kernels/reference/trajectory.ts"
export { RULE_NAMES } from "../kernels/reference/decayRules.ts"

/** Where the compiled core is read from. */
export const wasmPath: string = WASM_PATH

let loaded: CoreKernels | undefined

/**
 * The WebAssembly core (SIMD), instantiated on the first call and shared by every later one in
 * this process. Its memory grows as calls need it; `columnF64`, `columnI32` and `panel` copy data
 * into it once so later calls scan it without copying.
 */
export const loadCore = (): CoreKernels => (loaded ??= makeWasmCore(new Arena(instantiateCore())))

/**
 * A new, separate WebAssembly instance (its own memory), for a harness that wants one per worker or
 * a fresh one per run.
 */
export const newCore = (): CoreKernels => makeWasmCore(new Arena(instantiateCore()))

/** The TypeScript twins: the same algorithms in plain TypeScript, the differential tests' reference and the benchmarks' baseline. */
export const twins: CoreKernels = referenceCore
