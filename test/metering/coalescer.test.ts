/**
 * The batching under the limiter and the ledger (src/metering/Coalescer.ts): while a key's batch is
 * being decided, later requests wait and are decided together, in arrival order, at most
 * `maxBatch` at a time (the ledger's cap keeps one INSERT under SQLite's parameter limit); each
 * request gets its own output, and a failed batch fails each of its requests.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Coalescer from "../../src/metering/Coalescer.ts"

describe("Coalescer", () => {
  it.effect("decides requests that arrive during a batch together, at most maxBatch at a time, each getting its own output", () =>
    Effect.gen(function*() {
      const batches: Array<ReadonlyArray<number>> = []
      const gate = yield* Deferred.make<void>()
      const submit = Coalescer.make(yield* Effect.scope, (_key: string, inputs: ReadonlyArray<number>) =>
        Effect.andThen(
          Effect.andThen(Effect.sync(() => batches.push([...inputs])), batches.length === 0 ? Deferred.await(gate) : Effect.void),
          Effect.succeed(inputs.map((x) => x * 10))
        ), { maxBatch: 2 })
      const first = yield* Effect.forkChild(submit("k", 1))
      yield* Effect.yieldNow
      const rest = yield* Effect.forEach([2, 3, 4, 5, 6], (x) => Effect.forkChild(submit("k", x)))
      yield* Effect.yieldNow
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(first), 10)
      assert.deepStrictEqual(yield* Effect.forEach(rest, Fiber.join), [20, 30, 40, 50, 60])
      assert.deepStrictEqual(batches, [[1], [2, 3], [4, 5], [6]])
    }).pipe(Effect.scoped))

  it.effect("fails every request of a failed batch, and goes on with the next", () =>
    Effect.gen(function*() {
      let calls = 0
      const submit = Coalescer.make(yield* Effect.scope, (_key: string, inputs: ReadonlyArray<string>) =>
        ++calls === 1 ? Effect.fail("no") : Effect.succeed(inputs))
      const failed = yield* Effect.exit(submit("k", "a"))
      assert.isTrue(Exit.isFailure(failed))
      assert.strictEqual(yield* submit("k", "b"), "b")
    }).pipe(Effect.scoped))
})
