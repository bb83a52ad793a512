/**
 * The compute core as an Effect service. `layerWasm` runs the AssemblyScript kernels (one .wasm
 * instance per process, memory owned by an Arena: every call is one batch whose scratch is freed
 * when it returns; wasmCore.ts); `layerReference` runs the TypeScript twins behind the same
 * interface (referenceCore.ts), for differential tests and as the benchmark baseline. Inputs are
 * checked once around either core (checks.ts: shapes); values are the caller's business (NaN = missing).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { breathe } from "../eventLoop.ts"
import { recordKernel } from "../observability/Metrics.ts"
import { Arena } from "./Arena.ts"
import { KernelError } from "./KernelError.ts"
import { referenceCore } from "./referenceCore.ts"
import { Kernels } from "./service.ts"
import type { CoreKernels, KernelsService } from "./types.ts"
import { makeWasmCore } from "./wasmCore.ts"
import { instantiateCore } from "./WasmModule.ts"

export * from "./types.ts"
export { Kernels } from "./service.ts"
export { makeWasmCore } from "./wasmCore.ts"
export { referenceCore } from "./referenceCore.ts"

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

/** The TypeScript twins behind the same interface. */
export const reference: KernelsService = toService(referenceCore)

/** The WASM core: instantiated once when the layer is built (start-up), fails start-up if missing. */
export const layerWasm = Layer.effect(
  Kernels,
  Effect.try({
    try: () => timed(makeWasm(new Arena(instantiateCore()))),
    catch: (e) => new KernelError({ kernel: "instantiate", reason: e instanceof Error ? e.message : String(e) })
  })
)

/** The TypeScript twins (tests, benchmark baseline). */
export const layerReference = Layer.succeed(Kernels, reference)
