/**
 * The generated dataset made on a thread of its own while the caller writes it: the generator
 * (pure, generator.ts) runs on a worker thread a few chunks ahead, so making rows and inserting
 * them use two cores instead of taking turns on one. The chunks are the same, in the same order,
 * as `generatedChunks` gives (a test compares them).
 */
import { Worker } from "node:worker_threads"
import { PATIENTS_PER_CHUNK } from "../config/limits.ts"
import type { Chunk } from "../health/DatasetWriter.ts"
import type { GeneratorOptions } from "./generator.ts"

const WORKER_URL = new URL(import.meta.url.endsWith(".ts") ? "./generationWorker.ts" : "./generationWorker.js", import.meta.url)

/** Chunks asked for ahead of the one being written: enough to keep the thread busy, few enough to bound the memory. */
const AHEAD = 2

type Reply = { readonly done: true } | { readonly done: false; readonly chunk: Chunk }

/** `generatedChunks(options)`, made on a worker thread; leaving the iteration early stops the thread. */
export const generatedOnThread = (options: GeneratorOptions): AsyncIterable<Chunk> => ({
  [Symbol.asyncIterator]: () => {
    const worker = new Worker(WORKER_URL, { workerData: options })
    const arrived: Array<Reply> = []
    let wake: (() => void) | undefined
    let failure: Error | undefined
    let finished = false
    const stop = async (): Promise<IteratorResult<Chunk>> => {
      finished = true
      await worker.terminate()
      return { done: true, value: undefined }
    }
    worker.on("message", (reply: Reply) => {
      arrived.push(reply)
      wake?.()
    })
    worker.on("error", (e) => {
      failure = e
      wake?.()
    })
    worker.on("exit", (code) => {
      if (!finished && failure === undefined) failure = new Error(`the generator thread stopped (exit code ${code})`)
      wake?.()
    })
    for (let i = 0; i < AHEAD; i++) worker.postMessage(null)
    return {
      next: async () => {
        while (arrived.length === 0) {
          if (finished) return { done: true, value: undefined }
          if (failure !== undefined) throw failure
          await new Promise<void>((resolve) => (wake = resolve))
        }
        const reply = arrived.shift()!
        if (reply.done) return stop()
        worker.postMessage(null)
        return { done: false, value: reply.chunk }
      },
      return: stop
    }
  }
})

/** `generatedChunks(options)` on the calling thread, its module loaded when first iterated. */
async function* generatedHere(options: GeneratorOptions): AsyncGenerator<Chunk> {
  const { generatedChunks } = await import("./generator.ts")
  yield* generatedChunks(options)
}

/**
 * The generated dataset for a writer: on a thread of its own (`generatedOnThread`) when it has more
 * than one chunk of patients, so the next is made while one is written; with one chunk, on the
 * calling thread, since little could overlap and the thread's start (loading the generator anew)
 * would cost more than it saves. Each iteration starts from the first chunk, either way.
 */
export const generatedForWriting = (options: GeneratorOptions): AsyncIterable<Chunk> =>
  options.patients > PATIENTS_PER_CHUNK ? generatedOnThread(options) : { [Symbol.asyncIterator]: () => generatedHere(options) }
