/**
 * Runs one plugin call on whichever thread answers it (the HTTP thread or a compute thread): the
 * handler over a decoded request, the encode with the plugin's response schema, and the small-cell
 * rule applied to the encoded answer (disclosure.ts) before it leaves the plugin.
 */
import { Effect, Option, Schema } from "effect"
import { HealthData } from "../health/HealthData.ts"
import type { Kernels } from "../kernels/Kernels.ts"
import { cohortTooSmall, Disclosure, type DisclosureService, type DisclosureSettings, makeDisclosure, withhold } from "./disclosure.ts"
import type { DomainError } from "./errors.ts"
import type { Plugin } from "./spec.ts"

/** What running a plugin needs from its thread (the handler's `Disclosure` is made per call). */
export type InvokeServices = Kernels | HealthData

/**
 * `(decoded request) → encoded answer` for one plugin. The handler gets the request's `Disclosure`
 * recorder; a plugin that declares no `disclosure` also gets a `HealthData` whose `select` records
 * each cohort's size, so it is still held to the minimum for its cohorts (a plugin that declares
 * one applies the rule itself). A value the response schema rejects is the plugin's defect.
 */
export const invokePlugin = (plugin: Plugin, settings: DisclosureSettings) => {
  const encode = Schema.encodeUnknownEffect(plugin.response as unknown as Schema.Codec<unknown, unknown>)
  const rejected = (e: Schema.SchemaError) => Effect.die(new Error(`plugin "${plugin.name}" returned a value its response schema rejects: ${e.message}`))
  /** The handler's effect with its selections recorded (undeclared plugins only). */
  const recordingSelections = <A, E, R>(handled: Effect.Effect<A, E, R>, disclosure: DisclosureService) =>
    Effect.flatMap(Effect.serviceOption(HealthData), (health) =>
      Option.isNone(health) ? handled : Effect.provideService(handled, HealthData, {
        dataset: health.value.dataset,
        select: (criteria) => Effect.map(health.value.select(criteria), (cohort) => {
          disclosure.record({ pointer: undefined, counts: [cohort.size] })
          return cohort
        })
      }))
  return (input: unknown): Effect.Effect<Record<string, unknown>, DomainError, InvokeServices> => {
    const disclosure = makeDisclosure(settings)
    const handled = Effect.provideService(plugin.handler(input), Disclosure, disclosure)
    const run = plugin.disclosure === undefined ? recordingSelections(handled, disclosure) : handled
    return Effect.flatMap(Effect.flatMap(run, (value) => Effect.catch(encode(value), rejected)), (encoded) => {
      const result = withhold(settings, plugin.disclosure, encoded as Record<string, unknown>, disclosure.bases)
      return result._tag === "Answer" ? Effect.succeed(result.body) : Effect.fail(cohortTooSmall(result.minimum))
    })
  }
}
