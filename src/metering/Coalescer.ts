/**
 * Per-key batching of decisions that must run one at a time per key (the limiter's decisions for
 * one account). While a batch for a key is being decided, requests for the same key queue; when it
 * is done, everything queued is decided together in the next batch. Under load one database
 * transaction decides many requests, in arrival order, with the same exactness as one at a time;
 * a lone request still goes straight through.
 */
import { Deferred, Effect, Exit, type Scope } from "effect"

/** Decides a batch: one output per input, in order. */
export type Decide<I, O, E> = (key: string, inputs: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>

/** Makes a submit function whose batches run as fibers of `scope`. */
export const make = <I, O, E>(scope: Scope.Scope, decide: Decide<I, O, E>) => {
  const pending = new Map<string, Array<{ readonly input: I; readonly done: Deferred.Deferred<O, E> }>>()
  const running = new Set<string>()

  const drain = (key: string): Effect.Effect<void> =>
    Effect.suspend(() => {
      const batch = pending.get(key) ?? []
      pending.delete(key)
      if (batch.length === 0) {
        running.delete(key)
        return Effect.void
      }
      return decide(key, batch.map((b) => b.input)).pipe(
        Effect.exit,
        Effect.flatMap((exit) =>
          Effect.forEach(batch, (b, i) => Deferred.done(b.done, Exit.map(exit, (outputs) => outputs[i]!)), { discard: true })),
        Effect.andThen(drain(key))
      )
    })

  /** Queues `input` under `key` and waits for its decision. */
  return (key: string, input: I): Effect.Effect<O, E> =>
    Effect.flatMap(Deferred.make<O, E>(), (done) =>
      Effect.suspend(() => {
        const queue = pending.get(key)
        if (queue === undefined) pending.set(key, [{ input, done }])
        else queue.push({ input, done })
        if (running.has(key)) return Deferred.await(done)
        running.add(key)
        return Effect.andThen(Effect.forkIn(drain(key), scope), Deferred.await(done))
      }))
}
