/**
 * A parse thread of the FHIR import: reads one bulk file at a time (gunzip, JSON, the mapping
 * rules) and posts what each piece gave to the importing thread, which stages it. At most
 * MAX_IN_FLIGHT pieces wait for the importing thread at once, so a thread that reads faster than
 * the other stages does not pile facts up in memory. Runs the same mapping code as any other
 * thread: its context (axis model, region map, phase one's Medications) comes in messages.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { parentPort, workerData } from "node:worker_threads"
import { type BulkFile, type FilePart, forEachLines } from "./bulkFiles.ts"
import { countLines, type LinesBatch, mapLines, parseContext, type ParseThreadInit } from "./mapLines.ts"
import type { MedicationCode } from "./resources.ts"

/** Pieces posted and not yet taken by the importing thread, at most. */
const MAX_IN_FLIGHT = 4

/** Importing thread → parse thread. */
export type ToParser =
  | { readonly _tag: "medications"; readonly entries: ReadonlyArray<readonly [string, MedicationCode]> }
  | { readonly _tag: "file"; readonly file: BulkFile; readonly number: number; readonly part: FilePart; readonly count: boolean }
  | { readonly _tag: "taken" }

/** Parse thread → importing thread. */
export type FromParser =
  | { readonly _tag: "batch"; readonly number: number; readonly batch: LinesBatch }
  | { readonly _tag: "bytes"; readonly number: number; readonly bytes: number }
  /** The part is read: its lines (empty ones too), and the non-empty ones when counting. */
  | { readonly _tag: "done"; readonly number: number; readonly lines: number; readonly counted: number }
  | { readonly _tag: "failed"; readonly number: number; readonly message: string }

const port = parentPort!
const init = workerData as ParseThreadInit
const post = (m: FromParser) => port.postMessage(m)
const medications = new Map<string, MedicationCode>()
const ctx = parseContext(init, medications)

let inFlight = 0
let waiting: Deferred.Deferred<void> | undefined

/** Posts a piece's result; waits while too many are not yet taken. */
const send = (number: number, batch: LinesBatch) =>
  Effect.suspend(() => {
    post({ _tag: "batch", number, batch })
    inFlight++
    if (inFlight < MAX_IN_FLIGHT) return Effect.void
    waiting = Deferred.makeUnsafe<void>()
    return Deferred.await(waiting)
  })

const read = (file: BulkFile, number: number, part: FilePart, count: boolean) => {
  let counted = 0
  let lastBytes = 0
  return forEachLines(file, (piece, first) => {
    if (count) {
      counted += countLines(piece)
      return Effect.void
    }
    return send(number, mapLines(piece, first, file.type!, ctx))
  }, (bytes) => {
    // Progress every 8 MiB read.
    if (bytes - lastBytes >= 8 << 20) {
      lastBytes = bytes
      post({ _tag: "bytes", number, bytes })
    }
  }, part).pipe(
    Effect.flatMap((lines) => Effect.sync(() => post({ _tag: "done", number, lines, counted }))),
    Effect.catch((e: unknown) => Effect.sync(() => post({ _tag: "failed", number, message: e instanceof Error ? e.message : String(e) })))
  )
}

port.on("message", (m: ToParser) => {
  switch (m._tag) {
    case "medications":
      for (const [id, code] of m.entries) medications.set(id, code)
      return
    case "taken":
      inFlight--
      if (waiting !== undefined && inFlight < MAX_IN_FLIGHT) {
        const w = waiting
        waiting = undefined
        Deferred.doneUnsafe(w, Effect.void)
      }
      return
    case "file":
      void Effect.runPromise(read(m.file, m.number, m.part, m.count))
  }
})
