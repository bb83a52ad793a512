/**
 * Runs one plugin call on whichever thread answers it (the HTTP thread or a compute thread): the
 * handler over a decoded request, the encode with the plugin's response schema, and the small-cell
 * rule applied to the encoded answer (disclosure.ts) before it leaves the plugin.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { HealthData, type HealthDataService } from "../health/HealthData.ts"
import { PatientData } from "../health/PatientData.ts"
import { makePatientData } from "../health/PatientDataLive.ts"
import { Kernels } from "../kernels/service.ts"
import { cohortTooSmall, Disclosure, type DisclosureService, type DisclosureSettings, makeDisclosure, withhold } from "./disclosure.ts"
import type { DomainError } from "./errors.ts"
import type { Plugin } from "./spec.ts"
import { PartialWanted, type Representation, ViewWanted, withMember } from "./viewData.ts"

/** What running a plugin needs from its thread (the handler's `Disclosure` is made per call). */
export type InvokeServices = Kernels | HealthData | PatientData

/**
 * `(decoded request, view representation asked) → encoded answer` for one plugin. The handler gets
 * the request's `Disclosure` recorder; a plugin that declares no `disclosure` also gets a `HealthData` whose `select` records
 * each cohort's size and a `PatientData` that records every count it hands out, so it is still
 * held to the minimum (a plugin that declares one applies the rule itself, and uses the thread's
 * services as they are). A value the response schema rejects is the plugin's defect.
 */
export const invokePlugin = (plugin: Plugin, settings: DisclosureSettings) => {
  const encoderOf = (schema: Schema.Top) => Schema.encodeUnknownEffect(schema as unknown as Schema.Codec<unknown, unknown>)
  // Each representation (viewData.ts): the answer, with its `view_data` or its `partial`, encoded and
  // held to the small-cell rule together.
  const encoders: Record<Representation, ReturnType<typeof encoderOf>> = {
    answer: encoderOf(plugin.response),
    view: encoderOf(withMember(plugin.response, "view_data", plugin.viewData)),
    partial: encoderOf(withMember(plugin.response, "partial", plugin.partial))
  }
  const rejected = (e: Schema.SchemaError) => Effect.die(new Error(`plugin "${plugin.name}" returned a value its response schema rejects: ${e.message}`))
  /** The handler's effect with its data services recording what they hand out (undeclared plugins only). */
  const recording = <A>(handled: Effect.Effect<A, DomainError, InvokeServices>, disclosure: DisclosureService): Effect.Effect<A, DomainError, InvokeServices> =>
    Effect.flatMap(Effect.service(HealthData), (found) => {
      const seen = (counts: ReadonlyArray<number>) => disclosure.record({ pointer: undefined, counts })
      const health: HealthDataService = {
        dataset: found.dataset,
        select: (criteria) => Effect.map(found.select(criteria), (cohort) => {
          seen([cohort.size])
          return cohort
        })
      }
      return Effect.flatMap(Effect.service(Kernels), (kernels) =>
        Effect.provideService(Effect.provideService(handled, HealthData, health), PatientData, makePatientData(health, kernels, seen)))
    })
  return (input: unknown, asked: Representation = "answer"): Effect.Effect<Record<string, unknown>, DomainError, InvokeServices> => {
    const disclosure = makeDisclosure(settings)
    const representation = (asked === "view" && plugin.viewData === undefined) || (asked === "partial" && plugin.partial === undefined) ? "answer" : asked
    const told = Effect.provideService(plugin.handler(input), Disclosure, disclosure)
    // ViewWanted and PartialWanted are false unless provided: only the call that asks pays for providing one.
    const handled = representation === "view"
      ? Effect.provideService(told, ViewWanted, true)
      : representation === "partial"
      ? Effect.provideService(told, PartialWanted, true)
      : told
    const run = plugin.disclosure === undefined ? recording(handled, disclosure) : handled
    return Effect.flatMap(Effect.flatMap(run, (value) => Effect.catch(encoders[representation](value), rejected)), (encoded) => {
      const result = withhold(settings, plugin.disclosure, encoded as Record<string, unknown>, disclosure.bases)
      if (result._tag !== "Answer") return Effect.fail(cohortTooSmall(result.minimum))
      return Effect.succeed(representation === "answer" ? result.body : splitSuppressed(result.body, representation === "view" ? "view_data" : "partial"))
    })
  }
}

/**
 * A view or partial representation with what was withheld said where it belongs: the answer's own
 * fields in its `suppressed` (so without `member` it is exactly the plain answer), `member`'s
 * (`view_data`, `partial`) in `<member>.suppressed` (pointers from the document's root, like the others).
 */
const splitSuppressed = (body: Record<string, unknown>, member: "view_data" | "partial"): Record<string, unknown> => {
  const all = body["suppressed"]
  const data = body[member]
  if (!Array.isArray(all) || typeof data !== "object" || data === null) return body
  const own = all.filter((p: string) => !p.startsWith(`/${member}/`))
  const theirs = all.filter((p: string) => p.startsWith(`/${member}/`))
  const { suppressed: _, ...rest } = body
  return {
    ...rest,
    ...(own.length > 0 ? { suppressed: own } : {}),
    [member]: theirs.length > 0 ? { ...data, suppressed: theirs } : data
  }
}
