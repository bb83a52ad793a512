/**
 * A compute thread (HCC_THREADS; ComputePool.ts starts them). It loads the same plugins as the HTTP
 * thread, receives the dataset once — its columns and panel on the core's shared memory, so nothing
 * big is copied — runs its own WASM instance over that memory inside its own arena region, runs the
 * plugins' preparations (the threads split the plugins between them, each sends back the shared
 * values of its part and adopts the others' copies, then prepares what is left — the unshared
 * ones), then answers tasks: decode the (already validated) request, run the
 * plugin's handler, encode the answer with the plugin's response schema, post it back.
 */
// Compiled schemas, as on the HTTP thread (main.ts).
import "effect/schema/SchemaJITCompiler/enable"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as References from "effect/References"
import * as Schema from "effect/Schema"
import { spawnSync } from "node:child_process"
import { readFileSync, readlinkSync } from "node:fs"
import { getPriority, setPriority } from "node:os"
import { getHeapStatistics } from "node:v8"
import { parentPort, workerData } from "node:worker_threads"
import builtins from "../../plugins/index.ts"
import { type Dataset, type DatasetPreparation, DatasetPreparations, HealthData } from "../health/HealthData.ts"
import * as HealthDataLive from "../health/HealthDataLive.ts"
import * as PatientDataLive from "../health/PatientDataLive.ts"
import { Arena } from "../kernels/Arena.ts"
import { Kernels, makeWasm, timed } from "../kernels/Kernels.ts"
import { instantiateCore } from "../kernels/WasmModule.ts"
import * as JsonLogger from "../log/JsonLogger.ts"
import { adoptSharedPreparations, sharedPreparationsOf } from "../plugin/cache.ts"
import { DomainError } from "../plugin/errors.ts"
import type { Plugin } from "../plugin/spec.ts"
import { invokePlugin, type InvokeServices } from "../plugin/invoke.ts"
import type { Representation } from "../plugin/viewData.ts"
import { loadPlugins } from "../plugin/PluginRegistry.ts"
import type { FromThread, ThreadInit, ThreadPriority, ToThread } from "./protocol.ts"

/**
 * How much lower than the HTTP thread's a compute thread's CPU priority is (Linux nice steps; a
 * thread's nice value is its own there): when cold work keeps every core busy, the HTTP thread —
 * probes, cached answers, auth, the ledger — gets about ten times a compute thread's share of a
 * core, though it may wait for the end of a compute thread's time slice (the idle class below
 * does not make it wait).
 */
const NICE_STEPS = 10

/** Linux's SCHED_IDLE (sched.h), as a thread's policy reads in /proc. */
const SCHED_IDLE = 5

/** This thread's nice value (field 19) and scheduling policy (field 41) from /proc/thread-self/stat. */
const currentPriority = (tid: number): ThreadPriority => {
  const stat = readFileSync("/proc/thread-self/stat", "utf8")
  // Fields from the 3rd on, after the command name (which may hold spaces and parentheses).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return { tid, nice: Number(fields[16]), policy: Number(fields[38]) === SCHED_IDLE ? "idle" : "normal" }
}

/**
 * Lowers this thread's priority: nice +10, then (HCC_COMPUTE_PRIORITY=idle) the SCHED_IDLE class,
 * in which Linux hands the core to a waking normal thread — the HTTP thread — at once instead of
 * after the compute thread's time slice (docs/deploy.md). Node has no call for a thread's class,
 * so util-linux's `chrt` sets it, once per thread. Returns what Linux then reports, or
 * undefined where there is no /proc (not Linux).
 */
const lowerPriority = (wanted: ThreadInit["priority"]): ThreadPriority | undefined => {
  try {
    const tid = Number(readlinkSync("/proc/thread-self").split("/").at(-1))
    if (!Number.isInteger(tid) || tid <= 0) return undefined
    setPriority(tid, Math.min(19, getPriority(tid) + NICE_STEPS))
    if (wanted === "idle") spawnSync("chrt", ["-i", "-p", "0", String(tid)], { stdio: "ignore", timeout: 5000 })
    return currentPriority(tid)
  } catch {
    return undefined
  }
}

const port = parentPort!
const init = workerData as ThreadInit
const priority = lowerPriority(init.priority)
const post = (message: FromThread) => port.postMessage(message)

/** Kernel times recorded since the last answer was posted (sent with the next one). */
let kernelTimes: Array<readonly [string, number]> = []

interface Task {
  readonly run: (input: unknown, view: Representation) => Effect.Effect<unknown, DomainError, InvokeServices>
}

/** Decode → handler → encode with the small-cell rule applied, as on the HTTP thread (invoke.ts). */
const taskOf = (plugin: Plugin): Task => {
  const decode = Schema.decodeUnknownEffect(plugin.request as unknown as Schema.Codec<unknown, unknown>, { onExcessProperty: "error", errors: "all" })
  const invoke = invokePlugin(plugin, init.disclosure)
  return { run: (input, view) => Effect.flatMap(Effect.orDie(decode(input)), (decoded) => invoke(decoded, view)) }
}

const defectFields = (defect: unknown) =>
  defect instanceof Error
    ? { name: defect.name, message: defect.message, stack: defect.stack }
    : { name: "Error", message: String(defect), stack: undefined }

/** A dataset the thread can answer from: its runtime and the core instance its kernels run on. */
interface Served {
  readonly runtime: ManagedRuntime.ManagedRuntime<InvokeServices, unknown>
  readonly core: ReturnType<typeof instantiateCore>
  /** Tasks in progress on it. */
  running: number
  /** Where its core's arena ends. */
  readonly limit: number
}

/** What a task's end tells the HTTP thread: its value, its domain error, or its defect. */
const replyOf = (id: number, exit: Exit.Exit<unknown, unknown>, kernels: Array<readonly [string, number]>) => {
  if (Exit.isSuccess(exit)) return { _tag: "done", id, value: exit.value, kernels } as const
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some" && failure.value instanceof DomainError) {
    const { code, detail, suggestions, context, errors } = failure.value
    return {
      _tag: "domain",
      id,
      kernels,
      error: { code, detail, ...(suggestions === undefined ? {} : { suggestions }), ...(context === undefined ? {} : { context }), ...(errors === undefined ? {} : { errors }) }
    } as const
  }
  return { _tag: "defect", id, error: defectFields(Cause.squash(exit.cause)), kernels } as const
}

/**
 * The services a dataset's tasks run with: its patient and health data over the thread's kernels,
 * `preparations` run as it is made, and the service's JSON logger for everything the thread runs
 * (its preparations and every request), every line saying which thread.
 */
const datasetLayer = (dataset: Dataset, kernels: Kernels["Service"], preparations: ReadonlyArray<DatasetPreparation>) =>
  PatientDataLive.layer.pipe(
    Layer.provideMerge(HealthDataLive.layerFromDataset(dataset)),
    Layer.provideMerge(Layer.succeed(Kernels, kernels)),
    Layer.provide(Layer.succeed(DatasetPreparations, preparations)),
    Layer.provideMerge(JsonLogger.layer(init.logLevel)),
    Layer.provideMerge(Layer.succeed(References.CurrentLogAnnotations, { thread: init.thread }))
  )

/**
 * A dataset prepared in parts: this thread's shared preparations' values go to the other threads,
 * theirs (`adopted`) are taken, and the preparations that are not this thread's part run.
 */
const prepareTheRest = async (
  made: ManagedRuntime.ManagedRuntime<InvokeServices, unknown>,
  dataset: Dataset,
  rest: ReadonlyArray<DatasetPreparation>,
  adopted: Promise<Readonly<Record<string, unknown>>>
) => {
  try {
    post({ _tag: "shared", values: sharedPreparationsOf(dataset) })
  } catch (e) {
    // Not plain data after all: the other threads prepare those for themselves.
    await made.runPromise(Effect.logWarning("shared preparations cannot be copied to the other compute threads; each prepares its own").pipe(Effect.annotateLogs({ reason: e instanceof Error ? e.message : String(e) })))
    post({ _tag: "shared", values: {} })
  }
  adoptSharedPreparations(dataset, await adopted)
  await made.runPromise(Effect.provideService(HealthDataLive.prepareDataset(dataset), DatasetPreparations, rest))
}

const start = async () => {
  const plugins = await Effect.runPromise(loadPlugins(builtins, init.specifiers))
  const tasks = new Map(plugins.map(({ plugin }) => [plugin.name, taskOf(plugin)]))
  const preparations = plugins.flatMap(({ plugin }) => plugin.prepare === undefined ? [] : [{ name: plugin.name, prepare: plugin.prepare }])
  /** The dataset answered from; one prepared beside it (a refresh, until `activate`); the one it replaced, until its last task ends. */
  let active: Served | undefined
  let staged: Served | undefined
  let retiring: Served | undefined
  /** The end of the thread's arena region, and where the served core's arena ends now (lower while a replaced core still answers above it). */
  let regionEnd = 0
  let activeLimit = 0
  /** Hears every thread's shared preparations' values (`adopt`) while a dataset is being prepared in parts. */
  let onAdopt: ((values: Readonly<Record<string, unknown>>) => void) | undefined
  /** Tasks in progress, by id (a cancelled one is interrupted). */
  const running = new Map<number, Fiber.Fiber<unknown, unknown>>()

  /**
   * The replaced dataset's last task has ended: its runtime goes, and the served core's arena
   * extends over the whole region again (no batch of either core is running: they are synchronous).
   */
  const retire = () => {
    const old = retiring
    if (old === undefined || old.running > 0) return
    retiring = undefined
    void old.runtime.dispose()
    if (active !== undefined) {
      activeLimit = regionEnd
      active.core.setArena(active.core.mark() >>> 0, activeLimit)
    }
  }

  const answer = async (id: number, name: string, input: unknown, view: Representation) => {
    const task = tasks.get(name)
    const served = active
    if (served === undefined || task === undefined) {
      post({ _tag: "defect", id, error: defectFields(new Error(`compute thread ${init.thread} cannot answer ${name}: ${served === undefined ? "no dataset yet" : "unknown plugin"}`)), kernels: [] })
      return
    }
    served.running++
    const fiber = served.runtime.runFork(task.run(input, view))
    running.set(id, fiber)
    const exit = await new Promise<Exit.Exit<unknown, unknown>>((resolve) => fiber.addObserver(resolve))
    running.delete(id)
    served.running--
    if (served === retiring) retire()
    // Every kernel time recorded since the last answer rides on this one (tasks interleave).
    const kernels = kernelTimes
    kernelTimes = []
    post(replyOf(id, exit, kernels))
  }

  const receiveDataset = async ({ activate, arena, dataset, memory, prepared, share }: Extract<ToThread, { _tag: "dataset" }>) => {
    if (prepared !== undefined) adoptSharedPreparations(dataset, prepared)
    const core = instantiateCore(undefined, memory)
    const beside = active !== undefined && activate === false
    let limit = arena.end
    if (!beside) {
      regionEnd = arena.end
      activeLimit = arena.end
      core.setArena(arena.start, arena.end)
    } else {
      // A refresh: the new dataset's core takes the lower half of what the served one has free,
      // the served one's batches the upper half, until the served one is retired.
      const from = active!.core.mark() >>> 0
      const mid = from + Math.floor((activeLimit - from) / 2 / 16) * 16
      core.setArena(from, mid)
      active!.core.setArena(mid, activeLimit)
      limit = mid
    }
    const kernels = timed(makeWasm(new Arena(core)), (kernel, seconds) => kernelTimes.push([kernel, seconds]))
    // With `share`, the runtime is made with this thread's part of the preparations only; the
    // rest run once every thread's shared values are here (below).
    const mine = (_: unknown, i: number) => share === undefined || i % share.of === share.part
    const started = performance.now()
    const made = ManagedRuntime.make(datasetLayer(dataset, kernels, preparations.filter(mine)))
    await made.context()
    if (share !== undefined) {
      const adopted = new Promise<Readonly<Record<string, unknown>>>((resolve) => (onAdopt = resolve))
      await prepareTheRest(made, dataset, preparations.filter((p, i) => !mine(p, i)), adopted)
    }
    const served: Served = { runtime: made, core, running: 0, limit }
    if (beside) staged = served
    else active = served
    post({
      _tag: "ready",
      ...(beside ? { staged: true } : {}),
      heapMiB: Math.round(getHeapStatistics().used_heap_size / 1_048_576),
      seconds: Math.round(performance.now() - started) / 1000,
      ...(priority === undefined ? {} : { priority })
    })
  }

  return (message: ToThread) => {
    if (message._tag === "cancel") {
      running.get(message.id)?.interruptUnsafe()
    } else if (message._tag === "adopt") {
      onAdopt?.(message.values)
      onAdopt = undefined
    } else if (message._tag === "activate") {
      if (staged !== undefined) {
        retiring = active
        active = staged
        staged = undefined
        // The new core's arena ends where the replaced one's batches begin, until that one retires.
        activeLimit = active.limit
        retire()
      }
    } else if (message._tag === "task") {
      void answer(message.id, message.plugin, message.input, message.view).catch((e) => post({ _tag: "defect", id: message.id, error: defectFields(e), kernels: [] }))
    } else {
      void receiveDataset(message).catch((e) => post({ _tag: "failed", message: e instanceof Error ? e.message : String(e) }))
    }
  }
}

// Listening at once; messages that arrive while the plugins load wait for them.
const handle = start()
handle.catch((e) => post({ _tag: "failed", message: e instanceof Error ? e.message : String(e) }))
port.on("message", (message: ToThread) => void handle.then((h) => h(message), () => {}))
