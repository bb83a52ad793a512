/**
 * The FHIR import's parse threads (parseWorker.ts): one part of a file at a time each, so an
 * export is read, decompressed, parsed and mapped on every core while the importing thread stages
 * what they give. A large uncompressed file is read in parts (bulkFiles.ts `partsOf`); a gzip'd
 * one cannot be entered in the middle and is read whole by one thread (exports split large types
 * into numbered files, `Observation.1.ndjson.gz`, …, as bulk servers write them).
 */
import * as Effect from "effect/Effect"
import { Worker } from "node:worker_threads"
import type { BulkFile, FilePart } from "./bulkFiles.ts"
import type { LinesBatch } from "./mapLines.ts"
import type { FromParser, ParseThreadInit, ToParser } from "./parseWorker.ts"
import type { MedicationCode } from "./resources.ts"

const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "./parseWorker.ts" : "./parseWorker.js", import.meta.url)

/** The pool. */
export interface ParsePool {
  /** Phase one's Medication resources, for the mapping of phase two. */
  readonly setMedications: (entries: ReadonlyArray<readonly [string, MedicationCode]>) => void
  /**
   * Reads one part of a file on a free thread: `onBatch` gets each piece's result (on this thread,
   * in order), `onBytes` the bytes read so far; succeeds with the part's lines (and the non-empty
   * ones, when `count`).
   */
  readonly run: (
    file: BulkFile,
    number: number,
    part: FilePart,
    count: boolean,
    onBatch: (batch: LinesBatch) => void,
    onBytes: (bytes: number) => void
  ) => Effect.Effect<{ readonly lines: number; readonly counted: number }, Error>
}

interface Thread {
  readonly worker: Worker
  busy: boolean
  handler: ((m: FromParser) => void) | undefined
}

/** Starts `threads` parse threads; they stop when the scope closes. */
export const parsePool = (threads: number, init: ParseThreadInit) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const pool: Array<Thread> = Array.from({ length: Math.max(1, threads) }, () => {
        const t: Thread = { worker: new Worker(WORKER_URL, { workerData: init }), busy: false, handler: undefined }
        t.worker.on("message", (m: FromParser) => t.handler?.(m))
        t.worker.on("error", (e) => t.handler?.({ _tag: "failed", number: -1, message: e.message }))
        return t
      })
      const idle: Array<(t: Thread) => void> = []
      const take = (use: (t: Thread) => void) => {
        const t = pool.find((x) => !x.busy)
        if (t === undefined) return idle.push(use)
        t.busy = true
        use(t)
      }
      const release = (t: Thread) => {
        t.busy = false
        t.handler = undefined
        const next = idle.shift()
        if (next !== undefined) {
          t.busy = true
          next(t)
        }
      }
      const service: ParsePool = {
        setMedications: (entries) => {
          for (const t of pool) t.worker.postMessage({ _tag: "medications", entries } satisfies ToParser)
        },
        run: (file, number, part, count, onBatch, onBytes) =>
          Effect.callback<{ readonly lines: number; readonly counted: number }, Error>((resume) => {
            take((t) => {
              t.handler = (m) => {
                switch (m._tag) {
                  case "batch":
                    t.worker.postMessage({ _tag: "taken" } satisfies ToParser)
                    return onBatch(m.batch)
                  case "bytes":
                    return onBytes(m.bytes)
                  case "done":
                    release(t)
                    return resume(Effect.succeed({ lines: m.lines, counted: m.counted }))
                  case "failed":
                    release(t)
                    return resume(Effect.fail(new Error(m.message)))
                }
              }
              t.worker.postMessage({ _tag: "file", file, number, part, count } satisfies ToParser)
            })
          })
      }
      return { service, pool }
    }),
    ({ pool }) => Effect.promise(() => Promise.all(pool.map((t) => t.worker.terminate())))
  ).pipe(Effect.map(({ service }) => service))
