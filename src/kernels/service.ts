/** The compute core as plugins require it: the service's key (its layers are in Kernels.ts). */
import * as Context from "effect/Context"
import type { KernelsService } from "./types.ts"

/** The compute core: WASM kernels in the server (Kernels.ts `layerWasm`), the TypeScript twins in tests (`layerReference`). */
export class Kernels extends Context.Service<Kernels, KernelsService>()("hcc/Kernels") {}
