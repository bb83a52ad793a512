/**
 * Per-key batching of decisions that must run one at a time per key (the limiter's decisions for
 * one account). While a batch for a key is being decided, requests for the same key queue; when it
 * is done, everything queued is decided together in the next batch. Under load one database
 * transaction decides many requests, in arrival order, with the same exactness as one at a time;
 * a lone request still goes straight through.
 */
import { Deferred, Effect, type Scope } from "effect"

/** Decides a batch: one output per input, in order. */
export type Decide<I, O, E> = (key: string, inputs: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>

/** Makes a submit function whose batches run as fibers of `scope`. */
export const make = <I, O, E>(scope: Scope.Scope, decide: Decide<I, O, E>) => {
  // The batch each key is filling, with the one Deferred all of its requests wait on (its outputs, in order).
  const pending = new Map<string, { readonly inputs: Array<I>; readonly done: Deferred.Deferred<ReadonlyArray<O>, E> }>()
  const running = new Set<string>()

  const drain = (key: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const batch = pending.get(key)
      pending.delete(key)
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
      let batch = pending.get(key)
      if (batch === undefined) {
        batch = { inputs: [], done: Deferred.makeUnsafe<ReadonlyArray<O>, E>() }
        pending.set(key, batch)
      }
      const at = batch.inputs.push(input) - 1
      const decided = Effect.map(Deferred.await(batch.done), (outputs) => outputs[at]!)
      if (running.has(key)) return decided
      running.add(key)
      return Effect.andThen(Effect.forkIn(drain(key), scope), decided)
    })
}
