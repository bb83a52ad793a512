/**
 * Where the analytic endpoints compute: on the HTTP thread (HCC_THREADS=0, the default) or on a
 * pool of compute threads (worker.ts), so a cold question never holds the thread that answers
 * probes, the catalog and everyone else's requests, and a process uses every core.
 *
 * The dataset is held once: the loader puts its columns and panel in the WASM core's memory, which
 * is a shared WebAssembly.Memory (WasmModule.ts); the rest of its typed arrays move to shared
 * memory once loaded (`shareTypedArrays`). Each thread runs its own core instance over that same
 * memory, allocating only in its own arena region; the 4 GiB a 32-bit memory addresses is divided
 * after the resident data between the HTTP thread and the compute threads (reserved address space,
 * committed only as a region is used).
 *
 * A thread that dies fails its in-flight requests (500, logged), is replaced, and gets the dataset
 * again; requests meanwhile go to the others.
 */
import { Context, Effect, Layer } from "effect"
import { Worker } from "node:worker_threads"
import { AppConfig } from "../config/AppConfig.ts"
import type { Dataset } from "../health/HealthData.ts"
import { Arena } from "../kernels/Arena.ts"
import { KernelError } from "../kernels/KernelError.ts"
import { Kernels, makeWasm, timed } from "../kernels/Kernels.ts"
import { instantiateCore, MAX_PAGES } from "../kernels/WasmModule.ts"
import { recordKernel } from "../observability/Metrics.ts"
import { DomainError } from "../plugin/errors.ts"
import type { Representation } from "../plugin/viewData.ts"
import { type DefectFields, type FromThread, shareTypedArrays, type ThreadInit, type ToThread } from "./protocol.ts"

/** Where the analytics run. */
export interface ComputePoolService {
  /** Compute threads (0: the HTTP thread answers itself). */
  readonly threads: number
  /**
   * Hands the loaded dataset to every thread and waits until each has run the plugins'
   * preparations on it; returns the dataset as the threads share it.
   */
  readonly start: (dataset: Dataset, progress: (readyThreads: number) => void) => Effect.Effect<Dataset, Error>
  /**
   * Hands a refreshed dataset to every thread, which prepares it beside the one it serves; once all
   * have, they switch to it together. Returns the dataset as the threads share it.
   */
  readonly refresh: (dataset: Dataset) => Effect.Effect<Dataset, Error>
  /**
   * Answers one request on a thread: the plugin's response, encoded (JSON-ready). A domain error
   * fails; a plugin's defect dies with the thread's error (name, message, stack).
   */
  readonly run: (plugin: string, input: unknown, view?: Representation) => Effect.Effect<unknown, DomainError>
}

/** The compute pool of this process. */
export class ComputePool extends Context.Service<ComputePool, ComputePoolService>()("hcc/ComputePool") {}

/**
 * The HTTP thread's core, for the loader to make the axis panel resident in place (filled as it is
 * read, instead of built in JavaScript and copied in at the end).
 */
export class CoreArena extends Context.Service<CoreArena, Arena>()("hcc/CoreArena") {}

const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "./worker.ts" : "./worker.js", import.meta.url)

/** Pause before a thread that stopped is replaced. */
const RESPAWN_DELAY_MS = 1000

const PAGE = 65536
/** The highest address an arena may reach (a 32-bit memory's last byte, 16-aligned). */
const ADDRESS_END = MAX_PAGES * PAGE - 16

/**
 * Divides the memory after `top` (the resident data) into `parts` arena regions of whole pages:
 * region 0 for the HTTP thread, 1… for the compute threads.
 */
export const arenaRegions = (top: number, parts: number): ReadonlyArray<{ readonly start: number; readonly end: number }> => {
  const base = Math.ceil(top / PAGE) * PAGE
  const size = Math.floor((ADDRESS_END - base) / parts / PAGE) * PAGE
  if (size < 16 * PAGE) throw new Error(`the dataset leaves ${Math.max(0, ADDRESS_END - base)} bytes of the core's 4 GiB for ${parts} arenas`)
  return Array.from({ length: parts }, (_, i) => ({ start: base + i * size, end: base + (i + 1) * size }))
}

const errorFrom = (fields: DefectFields): Error => Object.assign(new Error(fields.message), { name: fields.name, stack: fields.stack })

interface Thread {
  readonly n: number
  readonly worker: Worker
  readonly pending: Map<number, (message: FromThread) => void>
  ready: boolean
}

/** Starts `count` compute threads over the HTTP thread's core (`arena`). */
const makePool = (count: number, init: Omit<ThreadInit, "thread">, arena: Arena) =>
  Effect.gen(function*() {
    const threads: Array<Thread> = []
    const waiting: Array<(t: Thread) => void> = []
    /** The dataset handed to the threads, each thread's part of its shared preparations' values, and (once all are in) them all. */
    let handOut: {
      readonly dataset: Dataset
      readonly regions: ReadonlyArray<{ start: number; end: number }>
      readonly parts: Map<number, Readonly<Record<string, unknown>>>
      prepared?: Readonly<Record<string, unknown>>
      /** A refresh: prepared beside the dataset served, switched to on `activate`. */
      readonly beside?: boolean
    } | undefined
    let onStaged: (() => void) | undefined
    /** Whether the warning that the idle class could not be set was logged (once per pool). */
    let warnedPriority = false
    let onReady: (() => void) | undefined
    let onFailed: ((message: string) => void) | undefined
    let closing = false
    let nextId = 1
    // Log from the threads' callbacks with this layer's logger (the service's JSON lines).
    const log = Effect.runForkWith(yield* Effect.context<never>())

    /**
     * The threads prepare a dataset together: thread n runs the preparations of every count-th
     * plugin from the (n − 1)-th and sends back the shared values it computed (preparedPerDataset
     * with `shared: true`, e.g. the risk-model fits); once every thread's part is in, each adopts
     * the others' and prepares what is left (the unshared preparations). So a costly preparation
     * runs once per process, not once per thread, and different plugins' ones run at the same time.
     * A thread started once all parts are in gets them with the dataset.
     */
    const sendDataset = (t: Thread, respawned = false) => {
      if (handOut === undefined) return
      const { prepared } = handOut
      const message: ToThread = {
        _tag: "dataset",
        dataset: handOut.dataset,
        memory: arena.core.memory,
        arena: handOut.regions[t.n]!,
        ...(prepared === undefined ? { share: { part: t.n - 1, of: count } } : { prepared }),
        ...(handOut.beside === true && !respawned ? { activate: false } : {})
      }
      t.worker.postMessage(message)
    }

    const spawn = (n: number): Thread => {
      const worker = new Worker(WORKER_URL, { workerData: { ...init, thread: n } satisfies ThreadInit })
      const t: Thread = { n, worker, pending: new Map(), ready: false }
      worker.on("message", (message: FromThread) => {
        switch (message._tag) {
          case "shared": {
            if (handOut === undefined || handOut.prepared !== undefined) return
            handOut.parts.set(n, message.values)
            if (handOut.parts.size < count) return
            const values = Object.assign({}, ...handOut.parts.values()) as Record<string, unknown>
            handOut.prepared = values
            for (const other of threads) other.worker.postMessage({ _tag: "adopt", values } satisfies ToThread)
            return
          }
          case "ready":
            if (message.staged === true) {
              log(Effect.logInfo("compute thread prepared the refreshed dataset").pipe(Effect.annotateLogs({ thread: n, preparing_seconds: message.seconds, heap_mib: message.heapMiB })))
              onStaged?.()
              return
            }
            t.ready = true
            log(Effect.logInfo("compute thread ready").pipe(Effect.annotateLogs({ thread: n, thread_id: worker.threadId, preparing_seconds: message.seconds, heap_mib: message.heapMiB, ...(message.priority ?? {}) })))
            if (init.priority === "idle" && message.priority?.policy === "normal" && !warnedPriority) {
              warnedPriority = true
              log(Effect.logWarning("compute threads could not be put in Linux's idle scheduling class; they run at nice +10").pipe(Effect.annotateLogs({ reason: "chrt (util-linux) is missing, or refused the change", see: "docs/deploy.md" })))
            }
            onReady?.()
            while (waiting.length > 0 && t.ready) waiting.shift()!(t)
            return
          case "failed":
            onFailed?.(`compute thread ${n}: ${message.message}`)
            return
          default: {
            const resume = t.pending.get(message.id)
            t.pending.delete(message.id)
            resume?.(message)
          }
        }
      })
      worker.on("error", (e) => {
        log(Effect.logError("compute thread failed").pipe(Effect.annotateLogs({ thread: n, error: e.message })))
      })
      worker.on("exit", (code) => {
        t.ready = false
        for (const resume of t.pending.values()) resume({ _tag: "defect", id: 0, error: { name: "Error", message: `compute thread ${n} stopped (exit code ${code})`, stack: undefined }, kernels: [] })
        t.pending.clear()
        if (closing) return
        log(Effect.logError("compute thread stopped; starting another").pipe(Effect.annotateLogs({ thread: n, exit_code: code })))
        // After a pause, so a thread that dies as it starts (a plugin's prepare ending it) does not spin.
        setTimeout(() => {
          if (closing) return
          const replacement = spawn(n)
          threads[n - 1] = replacement
          sendDataset(replacement, true)
        }, RESPAWN_DELAY_MS).unref()
      })
      return t
    }

    for (let n = 1; n <= count; n++) threads.push(spawn(n))
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        closing = true
        await Promise.all(threads.map((t) => t.worker.terminate()))
      })
    )

    /** The ready thread with the fewest requests in flight. */
    const pick = (): Thread | undefined => {
      let best: Thread | undefined
      for (const t of threads) if (t.ready && (best === undefined || t.pending.size < best.pending.size)) best = t
      return best
    }

    const service: ComputePoolService = {
      threads: count,
      start: (dataset, progress) =>
        Effect.callback<Dataset, Error>((resume) => {
          const shared = shareTypedArrays(dataset)
          const regions = arenaRegions(arena.used, count + 1)
          arena.core.setArena(regions[0]!.start, regions[0]!.end)
          handOut = { dataset: shared, regions, parts: new Map() }
          onReady = () => {
            const ready = threads.filter((t) => t.ready).length
            progress(ready)
            if (ready === count) {
              onReady = undefined
              resume(Effect.succeed(shared))
            }
          }
          onFailed = (message) => resume(Effect.fail(new Error(message)))
          for (const t of threads) sendDataset(t)
        }),
      refresh: (dataset) =>
        Effect.callback<Dataset, Error>((resume) => {
          const shared = shareTypedArrays(dataset)
          handOut = { dataset: shared, regions: handOut?.regions ?? [], parts: new Map(), beside: true }
          let staged = 0
          onStaged = () => {
            if (++staged < count) return
            onStaged = undefined
            onFailed = undefined
            // Every thread has it prepared: all switch at once.
            for (const t of threads) t.worker.postMessage({ _tag: "activate" } satisfies ToThread)
            resume(Effect.succeed(shared))
          }
          onFailed = (message) => {
            onStaged = undefined
            resume(Effect.fail(new Error(message)))
          }
          for (const t of threads) sendDataset(t)
        }),
      run: (plugin, input, view = "answer") =>
        Effect.callback<unknown, DomainError>((resume) => {
          const id = nextId++
          let sentTo: Thread | undefined
          const dispatch = (t: Thread) => {
            sentTo = t
            t.pending.set(id, (message) => {
              if (message._tag === "done" || message._tag === "domain" || message._tag === "defect") {
                for (const [kernel, seconds] of message.kernels) recordKernel(kernel, seconds)
              }
              switch (message._tag) {
                case "done":
                  return resume(Effect.succeed(message.value))
                case "domain":
                  return resume(Effect.fail(new DomainError(message.error)))
                case "defect":
                  return resume(Effect.die(errorFrom(message.error)))
              }
            })
            t.worker.postMessage({ _tag: "task", id, plugin, input, view } satisfies ToThread)
          }
          const t = pick()
          if (t !== undefined) dispatch(t)
          else waiting.push(dispatch)
          // An interrupted request (its client went away): its thread stops the work (work shared
          // through a plugin's cache goes on for the others waiting on it).
          return Effect.sync(() => {
            if (sentTo?.pending.delete(id) === true) sentTo.worker.postMessage({ _tag: "cancel", id } satisfies ToThread)
            const i = waiting.indexOf(dispatch)
            if (i >= 0) waiting.splice(i, 1)
          })
        })
    }
    return service
  })

/** No compute threads: the HTTP thread runs the handlers itself (DomainHandlers.ts). */
const inProcess: ComputePoolService = {
  threads: 0,
  start: (dataset) => Effect.succeed(dataset),
  refresh: (dataset) => Effect.succeed(dataset),
  run: (plugin) => Effect.die(new Error(`no compute threads to run ${plugin} on`))
}

/**
 * The WASM core of the HTTP thread (`Kernels`) and, with HCC_THREADS > 0, the compute threads over
 * its memory (`ComputePool`).
 */
export const layer: Layer.Layer<Kernels | ComputePool | CoreArena, KernelError, AppConfig> = Layer.effectContext(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const arena = yield* Effect.try({
      try: () => new Arena(instantiateCore()),
      catch: (e) => new KernelError({ kernel: "instantiate", reason: e instanceof Error ? e.message : String(e) })
    })
    // A coordinator (HCC_NETWORK) computes nothing off the HTTP thread: it holds no data.
    const pool = config.threads > 0 && config.network === undefined ? yield* makePool(config.threads, { specifiers: config.plugins, logLevel: config.logLevel, priority: config.computePriority, disclosure: config.disclosure }, arena) : inProcess
    return Context.make(Kernels, timed(makeWasm(arena))).pipe(Context.add(ComputePool, pool), Context.add(CoreArena, arena))
  })
)
