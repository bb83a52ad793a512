/**
 * Per-key batching of work that must run one batch at a time per key (the limiter's decisions for
 * one account; the ledger's group commits). While a batch for a key is being decided, requests for
 * the same key queue; when it is done, everything queued is decided together in the next batch (at
 * most `maxBatch` inputs; the rest wait for the one after). Under load one database transaction
 * decides many requests, in arrival order, with the same exactness as one at a time; a lone
 * request still goes straight through. Every request of a batch waits on the batch's one Deferred.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** Decides a batch: one output per input, in order. */
export type Decide<I, O, E> = (key: string, inputs: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>

interface Batch<I, O, E> {
  readonly inputs: Array<I>
  readonly done: Deferred.Deferred<ReadonlyArray<O>, E>
}

/** Makes a submit function whose batches run as fibers of `scope`. */
export const make = <I, O, E>(scope: Scope.Scope, decide: Decide<I, O, E>, options: { readonly maxBatch?: number } = {}) => {
  const maxBatch = options.maxBatch ?? Number.POSITIVE_INFINITY
  // The batches waiting under each key, oldest first (more than one only once one is full).
  const pending = new Map<string, Array<Batch<I, O, E>>>()
  const running = new Set<string>()

  const drain = (key: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const queue = pending.get(key)
      const batch = queue?.shift()
      if (queue !== undefined && queue.length === 0) pending.delete(key)
      if (batch === undefined) {
        running.delete(key)
        return Effect.void
      }
      return decide(key, batch.inputs).pipe(
        Effect.exit,
        Effect.flatMap((exit) => Deferred.done(batch.done, exit)),
        Effect.andThen(drain(key))
      )
    })

  /** Queues `input` under `key` and waits for its decision. */
  return (key: string, input: I): Effect.Effect<O, E> =>
    Effect.suspend(() => {
      let queue = pending.get(key)
      if (queue === undefined) pending.set(key, queue = [])
      let batch = queue.at(-1)
      if (batch === undefined || batch.inputs.length >= maxBatch) {
        batch = { inputs: [], done: Deferred.makeUnsafe<ReadonlyArray<O>, E>() }
        queue.push(batch)
      }
      const at = batch.inputs.push(input) - 1
      const decided = Effect.map(Deferred.await(batch.done), (outputs) => outputs[at]!)
      if (running.has(key)) return decided
      running.add(key)
      return Effect.andThen(Effect.forkIn(drain(key), scope), decided)
    })
}
