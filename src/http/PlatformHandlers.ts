/** Handlers of the platform's own endpoints: catalog and usage (authenticated, free), liveness and readiness. */
import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentPrincipal } from "../auth/CurrentPrincipal.ts"
import { CatalogResponse, datasetMeta } from "../catalog/CatalogSchema.ts"
import { HealthData } from "../health/HealthData.ts"
import { Metering } from "../metering/Metering.ts"
import { TIER_LIMITS } from "../metering/Tiers.ts"
import type { makeApi } from "./Api.ts"
import { NotReady } from "./Problems.ts"
import { Readiness } from "./Readiness.ts"
import { limitsUnavailable } from "./respond.ts"
import { RequestContext } from "./RequestContext.ts"

type Api = ReturnType<typeof makeApi>

/**
 * The catalog's answer. It only changes when the process restarts or the dataset finishes loading
 * (its vocabularies join the list then): encoded once per state, the same response served each time.
 */
export const makeCatalogAnswer = (catalog: typeof CatalogResponse.Type) =>
  Effect.gen(function*() {
    const health = yield* HealthData
    const encode = Schema.encodeEffect(CatalogResponse)
    // One response value per state (responses are immutable): its bytes, once encoded, are kept on it.
    const answerOf = (value: unknown) => HttpServerResponse.text(JSON.stringify(value), { contentType: "application/json" })
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

/** Catalog (its answer from {@link makeCatalogAnswer}) and usage. */
export const platformHandlers = (api: Api, catalogAnswer: Effect.Effect<HttpServerResponse.HttpServerResponse>) =>
  HttpApiBuilder.group(api, "platform", (handlers) =>
    Effect.gen(function*() {
      const metering = yield* Metering
      return handlers
        .handle("catalog", () => catalogAnswer)
        .handle("usage", () =>
          Effect.gen(function*() {
            const principal = yield* CurrentPrincipal
            const s = yield* metering.snapshot(principal).pipe(Effect.catchTag("SqlError", limitsUnavailable))
            const limit = (l: NonNullable<typeof s.daily>) => ({
              limit: l.quota,
              used: l.used,
              remaining: l.remaining,
              window_seconds: l.windowSeconds,
              reset_seconds: l.resetSeconds
            })
            return {
              account_id: principal.account.id,
              tier: TIER_LIMITS[principal.account.tier].title,
              day: s.day,
              limits: { burst: limit(s.burst), daily: s.daily === undefined ? null : limit(s.daily) },
              queries_today: s.dailyQueries,
              hcc_cost_today: Math.round(s.dailyHccCost * 1e6) / 1e6,
              hcc_cost: 0 as const
            }
          }))
    }))

/** Liveness (always ok while the process serves) and readiness (every registered check passes). */
export const systemHandlers = (api: Api) =>
  HttpApiBuilder.group(api, "system", (handlers) =>
    Effect.gen(function*() {
      const readiness = yield* Readiness
      return handlers
        .handle("healthz", () => Effect.succeed({ status: "ok" as const, hcc_cost: 0 as const }))
        .handle("readyz", () =>
          Effect.gen(function*() {
            const checks = yield* readiness.run
            const failing = Object.entries(checks).filter(([, c]) => c.status !== "ok")
            if (failing.length > 0) {
              const info = yield* RequestContext
              return yield* new NotReady({
                code: "unavailable",
                detail: `Not ready: ${failing.map(([name, c]) => `${name} (${c.detail})`).join(", ")}.`,
                checks,
                request_id: info.requestId,
                hcc_cost: 0
              })
            }
            return { status: "ready" as const, checks, hcc_cost: 0 as const }
          }))
    }))
