/**
 * Results kept per dataset. The health dataset never changes while it is served, so an answer
 * computed from it stays right until the process restarts with another one; a cache keyed by the
 * dataset object is dropped with it. Least recently used entries go past `max`; failures are not
 * kept (they are cheap: they happen before the heavy work).
 */
import { Effect } from "effect"
import { DomainError } from "./Plugin.ts"

/** A cache of results per dataset: `cached(dataset, key, compute)`. */
export const datasetCache = <V>(max: number) => {
  const byDataset = new WeakMap<object, Map<string, V>>()
  return <E, R>(dataset: object, key: string, compute: Effect.Effect<V, E, R>): Effect.Effect<V, E, R> =>
    Effect.suspend(() => {
      let entries = byDataset.get(dataset)
      if (entries === undefined) {
        entries = new Map()
        byDataset.set(dataset, entries)
      }
      const store = entries
      const hit = store.get(key)
      if (hit !== undefined) {
        store.delete(key)
        store.set(key, hit)
        return Effect.succeed(hit)
      }
      return Effect.tap(compute, (value) =>
        Effect.sync(() => {
          store.set(key, value)
          if (store.size > max) store.delete(store.keys().next().value!)
        }))
    })
}

/**
 * A value a plugin's `prepare` computes once per dataset and its handler reads back:
 * `const models = preparedPerDataset<Models>("risk models")`, then
 * `prepare: (d) => models.store(d, fitModels(d))` and, in the handler, `yield* models.get(dataset)`.
 * `get` fails with `unavailable` (503) when the preparation failed or has not run.
 */
export const preparedPerDataset = <V>(what: string) => {
  const byDataset = new WeakMap<object, V>()
  return {
    store: <E, R>(dataset: object, compute: Effect.Effect<V, E, R>): Effect.Effect<void, E, R> =>
      Effect.map(compute, (value) => {
        byDataset.set(dataset, value)
      }),
    get: (dataset: object): Effect.Effect<V, DomainError> =>
      Effect.suspend(() => {
        const value = byDataset.get(dataset)
        return value !== undefined ? Effect.succeed(value) : Effect.fail(
          new DomainError({
            code: "unavailable",
            detail: `The ${what} are not available: preparing them from the dataset failed (the operator must see the server log).`,
            context: { retry_after_seconds: 60 }
          })
        )
      })
  }
}
