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
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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

/** The dataset handed to the threads, each thread's part of its shared preparations' values, and (once all are in) them all. */
interface HandOut {
  readonly dataset: Dataset
  readonly regions: ReadonlyArray<{ start: number; end: number }>
  readonly parts: Map<number, Readonly<Record<string, unknown>>>
  prepared?: Readonly<Record<string, unknown>>
  /** A refresh: prepared beside the dataset served, switched to on `activate`. */
  readonly beside?: boolean
}

/** A pool's threads and what its callbacks are waiting for. */
interface Pool {
  readonly count: number
  readonly init: Omit<ThreadInit, "thread">
  readonly arena: Arena
  readonly threads: Array<Thread>
  /** Tasks waiting for a ready thread. */
  readonly waiting: Array<(t: Thread) => void>
  handOut: HandOut | undefined
  onStaged: (() => void) | undefined
  onReady: (() => void) | undefined
  onFailed: ((message: string) => void) | undefined
  /** Whether the warning that the idle class could not be set was logged (once per pool). */
  warnedPriority: boolean
  closing: boolean
  nextId: number
  /** Logs from the threads' callbacks with the pool's layer's logger (the service's JSON lines). */
  readonly log: (effect: Effect.Effect<void>) => void
}

/**
 * The threads prepare a dataset together: thread n runs the preparations of every count-th
 * plugin from the (n − 1)-th and sends back the shared values it computed (preparedPerDataset
 * with `shared: true`, e.g. the risk-model fits); once every thread's part is in, each adopts
 * the others' and prepares what is left (the unshared preparations). So a costly preparation
 * runs once per process, not once per thread, and different plugins' ones run at the same time.
 * A thread started once all parts are in gets them with the dataset.
 */
const sendDataset = (pool: Pool, t: Thread, respawned = false) => {
  const handOut = pool.handOut
  if (handOut === undefined) return
  const { prepared } = handOut
  const message: ToThread = {
    _tag: "dataset",
    dataset: handOut.dataset,
    memory: pool.arena.core.memory,
    arena: handOut.regions[t.n]!,
    ...(prepared === undefined ? { share: { part: t.n - 1, of: pool.count } } : { prepared }),
    ...(handOut.beside === true && !respawned ? { activate: false } : {})
  }
  t.worker.postMessage(message)
}

/** A thread's part of the shared preparations: once every thread's is in, all adopt them all. */
const sharedPart = (pool: Pool, n: number, values: Readonly<Record<string, unknown>>) => {
  const handOut = pool.handOut
  if (handOut === undefined || handOut.prepared !== undefined) return
  handOut.parts.set(n, values)
  if (handOut.parts.size < pool.count) return
  const all = Object.assign({}, ...handOut.parts.values()) as Record<string, unknown>
  handOut.prepared = all
  for (const other of pool.threads) other.worker.postMessage({ _tag: "adopt", values: all } satisfies ToThread)
}

/** A thread has the dataset prepared: served from now (or, a refresh, staged beside the one served). */
const threadReady = (pool: Pool, t: Thread, message: Extract<FromThread, { _tag: "ready" }>) => {
  if (message.staged === true) {
    pool.log(Effect.logInfo("compute thread prepared the refreshed dataset").pipe(Effect.annotateLogs({ thread: t.n, preparing_seconds: message.seconds, heap_mib: message.heapMiB })))
    pool.onStaged?.()
    return
  }
  t.ready = true
  pool.log(Effect.logInfo("compute thread ready").pipe(Effect.annotateLogs({ thread: t.n, thread_id: t.worker.threadId, preparing_seconds: message.seconds, heap_mib: message.heapMiB, ...(message.priority ?? {}) })))
  if (pool.init.priority === "idle" && message.priority?.policy === "normal" && !pool.warnedPriority) {
    pool.warnedPriority = true
    pool.log(Effect.logWarning("compute threads could not be put in Linux's idle scheduling class; they run at nice +10").pipe(Effect.annotateLogs({ reason: "chrt (util-linux) is missing, or refused the change", see: "docs/deploy.md" })))
  }
  pool.onReady?.()
  while (pool.waiting.length > 0 && t.ready) pool.waiting.shift()!(t)
}

/** Starts thread `n`: its messages answered, and another started in its place if it stops. */
const spawnThread = (pool: Pool, n: number): Thread => {
  const worker = new Worker(WORKER_URL, { workerData: { ...pool.init, thread: n } satisfies ThreadInit })
  const t: Thread = { n, worker, pending: new Map(), ready: false }
  worker.on("message", (message: FromThread) => {
    switch (message._tag) {
      case "shared":
        return sharedPart(pool, n, message.values)
      case "ready":
        return threadReady(pool, t, message)
      case "failed":
        return pool.onFailed?.(`compute thread ${n}: ${message.message}`)
      default: {
        const resume = t.pending.get(message.id)
        t.pending.delete(message.id)
        resume?.(message)
      }
    }
  })
  worker.on("error", (e) => {
    pool.log(Effect.logError("compute thread failed").pipe(Effect.annotateLogs({ thread: n, error: e.message })))
  })
  worker.on("exit", (code) => {
    t.ready = false
    for (const resume of t.pending.values()) resume({ _tag: "defect", id: 0, error: { name: "Error", message: `compute thread ${n} stopped (exit code ${code})`, stack: undefined }, kernels: [] })
    t.pending.clear()
    if (pool.closing) return
    pool.log(Effect.logError("compute thread stopped; starting another").pipe(Effect.annotateLogs({ thread: n, exit_code: code })))
    // After a pause, so a thread that dies as it starts (a plugin's prepare ending it) does not spin.
    setTimeout(() => {
      if (pool.closing) return
      const replacement = spawnThread(pool, n)
      pool.threads[n - 1] = replacement
      sendDataset(pool, replacement, true)
    }, RESPAWN_DELAY_MS).unref()
  })
  return t
}

/** The ready thread with the fewest requests in flight. */
const pick = (pool: Pool): Thread | undefined => {
  let best: Thread | undefined
  for (const t of pool.threads) if (t.ready && (best === undefined || t.pending.size < best.pending.size)) best = t
  return best
}

/** Hands a first dataset to every thread; done once all have prepared it. */
const startOn = (pool: Pool, dataset: Dataset, progress: (ready: number) => void) =>
  Effect.callback<Dataset, Error>((resume) => {
    const shared = shareTypedArrays(dataset)
    const regions = arenaRegions(pool.arena.used, pool.count + 1)
    pool.arena.core.setArena(regions[0]!.start, regions[0]!.end)
    pool.handOut = { dataset: shared, regions, parts: new Map() }
    pool.onReady = () => {
      const ready = pool.threads.filter((t) => t.ready).length
      progress(ready)
      if (ready === pool.count) {
        pool.onReady = undefined
        resume(Effect.succeed(shared))
      }
    }
    pool.onFailed = (message) => resume(Effect.fail(new Error(message)))
    for (const t of pool.threads) sendDataset(pool, t)
  })

/** Hands a new dataset to every thread beside the one served; all switch at once when all have prepared it. */
const refreshOn = (pool: Pool, dataset: Dataset) =>
  Effect.callback<Dataset, Error>((resume) => {
    const shared = shareTypedArrays(dataset)
    pool.handOut = { dataset: shared, regions: pool.handOut?.regions ?? [], parts: new Map(), beside: true }
    let staged = 0
    pool.onStaged = () => {
      if (++staged < pool.count) return
      pool.onStaged = undefined
      pool.onFailed = undefined
      for (const t of pool.threads) t.worker.postMessage({ _tag: "activate" } satisfies ToThread)
      resume(Effect.succeed(shared))
    }
    pool.onFailed = (message) => {
      pool.onStaged = undefined
      resume(Effect.fail(new Error(message)))
    }
    for (const t of pool.threads) sendDataset(pool, t)
  })

/** Runs one task on the least busy ready thread (or the first to be ready). */
const runOn = (pool: Pool, plugin: string, input: unknown, view: Representation) =>
  Effect.callback<unknown, DomainError>((resume) => {
    const id = pool.nextId++
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
    const t = pick(pool)
    if (t !== undefined) dispatch(t)
    else pool.waiting.push(dispatch)
    // An interrupted request (its client went away): its thread stops the work (work shared
    // through a plugin's cache goes on for the others waiting on it).
    return Effect.sync(() => {
      if (sentTo?.pending.delete(id) === true) sentTo.worker.postMessage({ _tag: "cancel", id } satisfies ToThread)
      const i = pool.waiting.indexOf(dispatch)
      if (i >= 0) pool.waiting.splice(i, 1)
    })
  })

/** Starts `count` compute threads over the HTTP thread's core (`arena`). */
const makePool = (count: number, init: Omit<ThreadInit, "thread">, arena: Arena) =>
  Effect.gen(function*() {
    const log = Effect.runForkWith(yield* Effect.context<never>())
    const pool: Pool = {
      count,
      init,
      arena,
      threads: [],
      waiting: [],
      handOut: undefined,
      onStaged: undefined,
      onReady: undefined,
      onFailed: undefined,
      warnedPriority: false,
      closing: false,
      nextId: 1,
      log: (effect) => void log(effect)
    }
    for (let n = 1; n <= count; n++) pool.threads.push(spawnThread(pool, n))
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        pool.closing = true
        await Promise.all(pool.threads.map((t) => t.worker.terminate()))
      })
    )
    const service: ComputePoolService = {
      threads: count,
      start: (dataset, progress) => startOn(pool, dataset, progress),
      refresh: (dataset) => refreshOn(pool, dataset),
      run: (plugin, input, view = "answer") => runOn(pool, plugin, input, view)
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
