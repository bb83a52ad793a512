/**
 * The messages between the HTTP thread and its compute threads (ComputePool.ts ⇄ worker.ts), and
 * the one step that makes a loaded dataset shareable: every typed array on shared memory, so
 * posting the dataset to a thread shares its columns instead of copying them.
 */
import type { AppSettings } from "../config/AppConfig.ts"
import type { Dataset } from "../health/HealthData.ts"
import type { Representation } from "../plugin/viewData.ts"

/** What a compute thread is started with (its `workerData`). */
export interface ThreadInit {
  /** HCC_PLUGINS specifiers, loaded after the built-ins exactly as the HTTP thread loads them. */
  readonly specifiers: ReadonlyArray<string>
  readonly logLevel: AppSettings["logLevel"]
  /** 1-based thread number (the `thread` annotation of its log lines). */
  readonly thread: number
  /** HCC_COMPUTE_PRIORITY: whether to put the thread in Linux's SCHED_IDLE class. */
  readonly priority: AppSettings["computePriority"]
  /** The small-cell rule the thread applies to every answer. */
  readonly disclosure: AppSettings["disclosure"]
}

/** A compute thread's priority as Linux reports it for the thread (/proc/thread-self/stat). */
export interface ThreadPriority {
  readonly tid: number
  readonly nice: number
  /** SCHED_IDLE, or the normal class (SCHED_OTHER) where the idle class could not be set or was not asked for. */
  readonly policy: "idle" | "normal"
}

/** A domain error as it crosses threads (the fields of DomainError). */
export interface DomainErrorFields {
  readonly code: string
  readonly detail: string
  readonly suggestions?: ReadonlyArray<string>
  readonly context?: Readonly<Record<string, unknown>>
  readonly errors?: ReadonlyArray<{ readonly path: string; readonly message: string }>
}

/** A plugin defect as it crosses threads (an Error's own fields). */
export interface DefectFields {
  readonly name: string
  readonly message: string
  readonly stack: string | undefined
}

/** HTTP thread → compute thread. */
export type ToThread =
  | {
    readonly _tag: "dataset"
    readonly dataset: Dataset
    /** The core's shared memory, where the dataset's columns and panel already are. */
    readonly memory: WebAssembly.Memory
    /** The thread's own arena region in that memory: [start, end). */
    readonly arena: { readonly start: number; readonly end: number }
    /**
     * Prepare part `part` of `of` first — the plugins whose preparations fall to this thread (every
     * `of`-th, from the `part`-th) — and send back the shared values they computed; then wait for
     * `adopt` with every thread's, and prepare the rest. Absent when `prepared` is given.
     */
    readonly share?: { readonly part: number; readonly of: number }
    /** The shared preparations' values the threads computed (`preparedPerDataset(…, { shared: true })`). */
    readonly prepared?: Readonly<Record<string, unknown>>
    /**
     * false: a refreshed dataset, prepared beside the one being served and answered from only on
     * `activate` (sent to every thread at once); absent: answer from it as soon as it is prepared.
     */
    readonly activate?: boolean
  }
  /** Every thread's shared preparations' values for the dataset being prepared (after `shared` from each). */
  | { readonly _tag: "adopt"; readonly values: Readonly<Record<string, unknown>> }
  /** Answer from the dataset prepared last (a refresh), from now on. */
  | { readonly _tag: "activate" }
  /** Answer one request; `view`: the representation asked (plugin/viewData.ts). */
  | { readonly _tag: "task"; readonly id: number; readonly plugin: string; readonly input: unknown; readonly view: Representation }
  /** The request went away (its client disconnected): stop its work. */
  | { readonly _tag: "cancel"; readonly id: number }

/** Kernel calls a task made: kernel name and seconds (recorded into the HTTP thread's metrics). */
export type KernelTimes = ReadonlyArray<readonly [string, number]>

/** Compute thread → HTTP thread. */
export type FromThread =
  | {
    readonly _tag: "ready"
    readonly heapMiB: number
    readonly seconds: number
    /** The thread's system id, nice value and scheduling class, where its priority could be lowered (Linux). */
    readonly priority?: ThreadPriority
    /** The dataset was prepared beside the one served (a refresh), waiting for `activate`. */
    readonly staged?: boolean
  }
  /** This thread's part of the preparations is done: the shared values it computed. */
  | { readonly _tag: "shared"; readonly values: Readonly<Record<string, unknown>> }
  | { readonly _tag: "failed"; readonly message: string }
  | { readonly _tag: "done"; readonly id: number; readonly value: unknown; readonly kernels: KernelTimes }
  | { readonly _tag: "domain"; readonly id: number; readonly error: DomainErrorFields; readonly kernels: KernelTimes }
  | { readonly _tag: "defect"; readonly id: number; readonly error: DefectFields; readonly kernels: KernelTimes }

const isTypedArray = (v: unknown): v is Float64Array | Float32Array | Int32Array | Uint8Array => ArrayBuffer.isView(v) && !(v instanceof DataView)

/** The same typed array on shared memory (itself when it already is). */
const shared = <T extends Float64Array | Float32Array | Int32Array | Uint8Array>(a: T): T => {
  if (a.buffer instanceof SharedArrayBuffer) return a
  const Ctor = a.constructor as new(buffer: ArrayBufferLike) => T
  const copy = new Ctor(new SharedArrayBuffer(a.byteLength))
  copy.set(a as never)
  return copy
}

/**
 * A copy of `value` whose typed arrays all live on shared memory (plain objects, arrays and Maps
 * are walked; arrays already on shared memory — the core's resident columns and panel — are kept).
 * Done once per dataset; the unshared originals are then garbage.
 */
export const shareTypedArrays = <T>(value: T): T => {
  const walk = (v: unknown): unknown => {
    if (isTypedArray(v)) return shared(v)
    if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, walk(x)]))
    if (Array.isArray(v)) return v.map(walk)
    if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
    return v
  }
  return walk(value) as T
}
