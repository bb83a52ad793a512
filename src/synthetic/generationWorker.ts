/**
 * The generator on a thread of its own (generationThread.ts): each message asks for the next
 * chunk of the dataset, made in order (ids run on from chunk to chunk), and is answered with it.
 */
import { parentPort, workerData } from "node:worker_threads"
import { generatedChunks, type GeneratorOptions } from "./generator.ts"

const port = parentPort!
const chunks = generatedChunks(workerData as GeneratorOptions)
port.on("message", () => {
  const next = chunks.next()
  port.postMessage(next.done === true ? { done: true } : { done: false, chunk: next.value })
})
