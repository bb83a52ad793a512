/** The platform's own endpoints: catalog and usage (authenticated, free), liveness and readiness. */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { Principal } from "../auth/Accounts.ts"
import { CatalogResponse, datasetMeta, HealthResponse, UsageResponse } from "../catalog/CatalogSchema.ts"
import { HealthData } from "../health/HealthData.ts"
import { Metering } from "../metering/Metering.ts"
import { TIER_LIMITS } from "../metering/Tiers.ts"
import { NotReady } from "./Problems.ts"
import { Readiness } from "./Readiness.ts"
import { limitsUnavailable } from "./respond.ts"
import type { RequestInfo } from "./RequestContext.ts"

/** A JSON answer from its text. */
const jsonAnswer = (text: string) => HttpServerResponse.text(text, { contentType: "application/json" })

/**
 * The catalog's answer. It only changes when the process restarts or the dataset finishes loading
 * (its vocabularies join the list then): encoded once per state, the same response served each time.
 */
export const makeCatalogAnswer = (catalog: typeof CatalogResponse.Type) =>
  Effect.gen(function*() {
    const health = yield* HealthData
    const encode = Schema.encodeEffect(CatalogResponse)
    // One response value per state (responses are immutable), held as bytes: written as they are,
    // never encoded again.
    const answerOf = (value: unknown) => HttpServerResponse.uint8Array(new TextEncoder().encode(JSON.stringify(value)), { contentType: "application/json" })
    const loading = answerOf(yield* encode(catalog))
    // Per dataset: a refreshed dataset gets its own answer.
    let ready: { readonly dataset: object; readonly answer: HttpServerResponse.HttpServerResponse } | undefined
    return Effect.suspend(() => {
      return Effect.gen(function*() {
        const data = yield* Effect.option(health.dataset)
        if (data._tag === "None") return loading
        if (ready?.dataset === data.value) return ready.answer
        const d = data.value
        const vocabularies = { ...catalog.vocabularies }
        const standard_codes: Record<string, Record<string, string>> = {}
        for (const [kind, codes] of Object.entries(d.vocabulary)) {
          vocabularies[kind] = [...codes]
          const details = d.vocabularyDetails[kind as keyof typeof d.vocabularyDetails]
          const withCode = codes.flatMap((code, i) => (details[i]?.standard == null ? [] : [[code, details[i]!.standard!] as const]))
          if (withCode.length > 0) standard_codes[kind] = Object.fromEntries(withCode)
        }
        const answer = answerOf(yield* Effect.orDie(encode({ ...catalog, vocabularies, standard_codes, dataset: datasetMeta(d.id, d.info, d.patients.count, d.axisCoverage) })))
        ready = { dataset: d, answer }
        return answer
      })
    })
  })

/** Usage: the caller's day so far and what is left of each limit. */
export const makeUsageAnswer = Effect.gen(function*() {
  const metering = yield* Metering
  const encode = Schema.encodeEffect(UsageResponse)
  return (principal: Principal) =>
    Effect.gen(function*() {
      const s = yield* metering.snapshot(principal).pipe(Effect.catchTag("SqlError", limitsUnavailable))
      const limit = (l: NonNullable<typeof s.daily>) => ({
        limit: l.quota,
        used: l.used,
        remaining: l.remaining,
        window_seconds: l.windowSeconds,
        reset_seconds: l.resetSeconds
      })
      return jsonAnswer(JSON.stringify(
        yield* Effect.orDie(encode({
          account_id: principal.account.id,
          tier: TIER_LIMITS[principal.account.tier].title,
          day: s.day,
          limits: { burst: limit(s.burst), daily: s.daily === undefined ? null : limit(s.daily) },
          queries_today: s.dailyQueries,
          hcc_cost_today: Math.round(s.dailyHccCost * 1e6) / 1e6,
          hcc_cost: 0 as const
        }))
      ))
    })
})

/** Liveness: always ok while the process serves (the same bytes every time). */
export const healthzAnswer = Effect.succeed(jsonAnswer(JSON.stringify({ status: "ok", hcc_cost: 0 } satisfies typeof HealthResponse.Type)))

/** Readiness: every registered check passes, or a 503 that lists each check's state. */
export const makeReadyzAnswer = Effect.gen(function*() {
  const readiness = yield* Readiness
  const encode = Schema.encodeEffect(HealthResponse)
  return (info: RequestInfo) =>
    Effect.gen(function*() {
      const checks = yield* readiness.run
      const failing = Object.entries(checks).filter(([, c]) => c.status !== "ok")
      if (failing.length > 0) {
        return yield* new NotReady({
          code: "unavailable",
          detail: `Not ready: ${failing.map(([name, c]) => `${name} (${c.detail})`).join(", ")}.`,
          checks,
          request_id: info.requestId,
          hcc_cost: 0
        })
      }
      return jsonAnswer(JSON.stringify(yield* Effect.orDie(encode({ status: "ready", checks, hcc_cost: 0 }))))
    })
})
