/** Giving the event loop a turn between pieces of synchronous work. */
import * as Effect from "effect/Effect"

/**
 * A macrotask turn: whatever arrived meanwhile (a /readyz probe, another request) is answered
 * before the next piece runs. Used between the dataset's reads and after long kernel calls.
 */
export const breathe: Effect.Effect<void> = Effect.callback<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})
