/**
 * The FHIR import's parse threads (parseWorker.ts): one part of a file at a time each, so an
 * export is read, decompressed, parsed and mapped on every core while the importing thread stages
 * what they give. A large uncompressed file is read in parts (bulkFiles.ts `partsOf`); a gzip'd
 * one cannot be entered in the middle and is read whole by one thread (exports split large types
 * into numbered files, `Observation.1.ndjson.gz`, …, as bulk servers write them).
 *
 * A small export is read on the importing thread instead (`inlineParser`): a thread starts by
 * loading the mapping code anew, which costs more than sharing a few tens of MiB of parsing saves.
 */
import * as Effect from "effect/Effect"
import { Worker } from "node:worker_threads"
import { type BulkFile, type FilePart, forEachLines } from "./bulkFiles.ts"
import { countLines, type LinesBatch, mapLines, parseContext, type ParseThreadInit } from "./mapLines.ts"
import type { FromParser, ToParser } from "./parseWorker.ts"
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

/**
 * Below this much NDJSON to read (a gzip'd file counted at GZIP_RATIO times its size), an export
 * is read on the importing thread: there the importing thread's own work (staging, writing)
 * outweighs the parsing, and parse threads cost more to start than they save (docs/benchmarks.md).
 */
export const INLINE_BYTES = 32 << 20

/**
 * How many times larger NDJSON is than its gzip, counted low on purpose (the service's own gzip'd
 * export is about a 33rd of its NDJSON, docs/benchmarks.md): a gzip'd file is read whole, by one
 * thread, so threads gain less on it than on a file read in parts.
 */
const GZIP_RATIO = 8

/** The NDJSON bytes the files hold, about. */
export const ndjsonBytes = (files: ReadonlyArray<BulkFile>): number => files.reduce((s, f) => s + (f.gzip ? f.bytes * GZIP_RATIO : f.bytes), 0)

/** The parse pool's service on the calling thread: the same mapping, one part after another. */
export const inlineParser = (init: ParseThreadInit): ParsePool => {
  const medications = new Map<string, MedicationCode>()
  const ctx = parseContext(init, medications)
  return {
    setMedications: (entries) => {
      for (const [id, code] of entries) medications.set(id, code)
    },
    run: (file, _number, part, count, onBatch, onBytes) => {
      let counted = 0
      return forEachLines(file, (piece, first) =>
        Effect.sync(() => {
          if (count) counted += countLines(piece)
          else onBatch(mapLines(piece, first, file.type!, ctx))
        }), onBytes, part).pipe(Effect.map((lines) => ({ lines, counted })))
    }
  }
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
