/**
 * Results kept per dataset. The health dataset never changes while it is served, so an answer
 * computed from it stays right until the process restarts with another one; a cache keyed by the
 * dataset object is dropped with it. Least recently used entries go past `max`; failures are not
 * kept (they are cheap: they happen before the heavy work).
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import { type Basis, recordingBases, replayBases } from "./disclosure.ts"
import { DomainError } from "./errors.ts"

/**
 * A cache of results per dataset: `cached(dataset, key, compute)`. Callers asking for a key that is
 * being computed wait for that one computation instead of starting their own (a burst of the same
 * new question computes it once). The computation runs detached from the caller that started it,
 * so that caller going away does not fail the others; its failure reaches every waiter and is not kept.
 * What the computation reported to `Disclosure` (the bases of its statistics) is kept with its value
 * and reported again for every request the value answers, so a cached answer is withheld as a fresh one.
 */
export const datasetCache = <V>(max: number) => {
  /** A kept value with the bases its computation reported (replayed into each request it answers). */
  interface Entry {
    readonly value: V
    readonly bases: ReadonlyArray<Basis>
  }
  const byDataset = new WeakMap<object, Map<string, Entry>>()
  const running = new WeakMap<object, Map<string, Deferred.Deferred<Entry, unknown>>>()
  const entriesOf = <T>(map: WeakMap<object, Map<string, T>>, dataset: object) => {
    let entries = map.get(dataset)
    if (entries === undefined) {
      entries = new Map()
      map.set(dataset, entries)
    }
    return entries
  }
  const served = (entry: Entry) => Effect.as(replayBases(entry.bases), entry.value)
  return <E, R>(dataset: object, key: string, compute: Effect.Effect<V, E, R>): Effect.Effect<V, E, R> =>
    Effect.suspend(() => {
      const store = entriesOf(byDataset, dataset)
      const hit = store.get(key)
      if (hit !== undefined) {
        store.delete(key)
        store.set(key, hit)
        return served(hit)
      }
      const inFlight = entriesOf(running, dataset)
      const pending = inFlight.get(key) as Deferred.Deferred<Entry, E> | undefined
      if (pending !== undefined) return Effect.flatMap(Deferred.await(pending), served)
      const deferred = Deferred.makeUnsafe<Entry, E>()
      inFlight.set(key, deferred as Deferred.Deferred<Entry, unknown>)
      const run = recordingBases(compute).pipe(
        Effect.tap((entry) =>
          Effect.sync(() => {
            store.set(key, entry)
            if (store.size > max) store.delete(store.keys().next().value!)
          })),
        Effect.onExit((exit) =>
          Effect.andThen(
            Effect.sync(() => inFlight.delete(key)),
            Deferred.done(deferred, exit)
          ))
      )
      return Effect.andThen(Effect.forkDetach(run), Effect.flatMap(Deferred.await(deferred), served))
    })
}

/** Options of {@link preparedPerDataset}. */
export interface PreparedOptions {
  /**
   * With compute threads, compute the value on one thread and give a copy (structured clone) to the
   * others instead of computing it on each: for a costly preparation whose result is plain data —
   * numbers, strings, arrays, typed arrays, Maps, plain objects; no functions, no class instances,
   * nothing pointing into one thread's own WASM memory. The name must be unique in the process.
   */
  readonly shared?: boolean
}

/** The shared preparations by name: how to read one's value for a dataset, and how to put one in. */
const sharedPreparations = new Map<string, {
  readonly read: (dataset: object) => unknown
  readonly give: (dataset: object, value: unknown) => void
}>()

/** The values of the shared preparations computed for `dataset` (what a compute thread sends to the others). */
export const sharedPreparationsOf = (dataset: object): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const [name, { read }] of sharedPreparations) {
    const value = read(dataset)
    if (value !== undefined) out[name] = value
  }
  return out
}

/**
 * Puts values another thread computed in place, so this thread's `store` calls for them compute
 * nothing; a value this thread has already (its own part) is kept, not replaced by the copy.
 */
export const adoptSharedPreparations = (dataset: object, values: Readonly<Record<string, unknown>>): void => {
  for (const [name, value] of Object.entries(values)) {
    const preparation = sharedPreparations.get(name)
    if (preparation !== undefined && preparation.read(dataset) === undefined) preparation.give(dataset, value)
  }
}

/**
 * A value a plugin's `prepare` computes once per dataset and its handler reads back:
 * `const models = preparedPerDataset<Models>("risk models")`, then
 * `prepare: (d) => models.store(d, fitModels(d))` and, in the handler, `yield* models.get(dataset)`.
 * `get` fails with `unavailable` (503) when the preparation failed or has not run. `store` computes
 * nothing when the value is already there (given by another compute thread, `shared: true`), so
 * pass it the computation itself.
 */
export const preparedPerDataset = <V>(what: string, options: PreparedOptions = {}) => {
  const byDataset = new WeakMap<object, V>()
  if (options.shared === true) {
    if (sharedPreparations.has(what)) throw new Error(`two shared preparations are named "${what}"`)
    sharedPreparations.set(what, { read: (dataset) => byDataset.get(dataset), give: (dataset, value) => byDataset.set(dataset, value as V) })
  }
  return {
    store: <E, R>(dataset: object, compute: Effect.Effect<V, E, R>): Effect.Effect<void, E, R> =>
      Effect.suspend(() =>
        byDataset.has(dataset) ? Effect.void : Effect.map(compute, (value) => {
          byDataset.set(dataset, value)
        })
      ),
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
