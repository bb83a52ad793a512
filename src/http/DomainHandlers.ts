/**
 * Serves every plugin endpoint. For each call: JSON content type, body (≤ 1 MiB), the
 * Idempotency-Key claim (a retry gets the stored answer), daily reservation, JSON parse, strict decode (unknown fields rejected, every issue reported with its JSON pointer),
 * the plugin's handler, encode with the plugin's response schema, `hcc_cost` added, ledger row
 * committed — and only then the 200 (as `application/json`, or the view or partial representation
 * when the caller's Accept asks for it and the plugin has one: plugin/viewData.ts). Any failure after the reservation releases it.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { constVoid } from "effect/Function"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import type { IncomingMessage } from "node:http"
import type { Principal } from "../auth/Accounts.ts"
import { ComputePool } from "../compute/ComputePool.ts"
import { datasetHeaders } from "../catalog/CatalogSchema.ts"
import { HealthData } from "../health/HealthData.ts"
import { Idempotency, KEY_PATTERN } from "../metering/Idempotency.ts"
import { Metering } from "../metering/Metering.ts"
import { leafValues, redactedFailure } from "../log/redact.ts"
import { createHash } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"
import type { DisclosureSettings } from "../plugin/disclosure.ts"
import { invokePlugin, type InvokeServices } from "../plugin/invoke.ts"
import type { Plugin } from "../plugin/spec.ts"
import { MEDIA_TYPES, type Representation, representationOf } from "../plugin/viewData.ts"
import { fieldIssues } from "./issues.ts"
import { readBody } from "./Door.ts"
import { BadRequest, InternalError, Unavailable, UnsupportedMediaType } from "./Problems.ts"
import type { RequestInfo } from "./RequestContext.ts"
import { domainProblem, isJsonContentType, keyInUse, keyReused, limitsUnavailable, rateLimited } from "./respond.ts"

/**
 * What "the same request" means for an Idempotency-Key: the path and the body, compared as JSON
 * (key order and whitespace do not matter) when it parses, else byte for byte.
 */
export const fingerprintOf = (path: string, text: string): string => {
  let canonical = text
  try {
    canonical = JSON.stringify(sortKeys(JSON.parse(text)))
  } catch {
    // not JSON: the bytes themselves
  }
  return createHash("sha256").update(`${path}\n${canonical}`, "utf8").digest("hex")
}

const sortKeys = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(sortKeys)
    : value !== null && typeof value === "object"
    ? Object.fromEntries(Object.keys(value).sort().map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]))
    : value

/**
 * A plugin's defect (an exception, an undeclared error code, an answer its own schema rejects):
 * logged as `plugin failed` with its code and a redacted message (src/log/redact.ts: no request
 * value reaches the log), answered as a 500 `internal_error` without internals.
 */
const pluginFailed = (plugin: Plugin, defect: unknown, body: unknown, requestId: string) =>
  Effect.andThen(
    Effect.logError("plugin failed").pipe(Effect.annotateLogs({ plugin: plugin.name, code: "internal_error", request_id: requestId, ...redactedFailure(defect, leafValues(body)) })),
    Effect.fail(new InternalError({ code: "internal_error", detail: "An internal error occurred; it has been logged under this request id.", request_id: requestId, hcc_cost: 0 }))
  )

/** The services a charged call uses. */
export interface CallServices {
  readonly metering: Metering["Service"]
  readonly idempotency: Idempotency["Service"]
  readonly health: HealthData["Service"]
  readonly pool: ComputePool["Service"]
  /** The small-cell rule in force (applied by the plugin runner, here or on a compute thread). */
  readonly disclosure: DisclosureSettings
}

/** The body as JSON, or the 400 for a body that is not JSON. */
const parse = (text: string, requestId: string): Effect.Effect<unknown, BadRequest> => {
  try {
    return Effect.succeed(JSON.parse(text) as unknown)
  } catch {
    return Effect.fail(
      new BadRequest({
        code: "malformed_json",
        detail: text.trim() === "" ? "The body is empty; send a JSON object." : "The body is not valid JSON.",
        request_id: requestId,
        hcc_cost: 0
      })
    )
  }
}

/** The 400 for a body the request schema rejects, every issue with its JSON pointer. */
const invalid = (e: Schema.SchemaError, requestId: string) => {
  const { issues, onlyUnknown } = fieldIssues(e.issue)
  return Effect.fail(
    new BadRequest({
      code: onlyUnknown ? "unknown_field" : "invalid_request",
      detail: onlyUnknown
        ? `The body has ${issues.length === 1 ? "a field" : "fields"} this endpoint does not define.`
        : "The body does not match the request schema; see errors.",
      errors: issues,
      request_id: requestId,
      hcc_cost: 0
    })
  )
}

/** The 200: what the answer is based on (the catalog's dataset, in brief) in its headers. */
const answered = (bodyText: string, basis: ReturnType<typeof datasetHeaders> | undefined, view: Representation) =>
  Effect.succeed(HttpServerResponse.text(bodyText, {
    contentType: MEDIA_TYPES[view],
    headers: basis === undefined ? {} : { "hcc-dataset-id": basis.id, "hcc-dataset-as-of": basis.as_of, "hcc-dataset-source": basis.source }
  }))

/** The 415 for a body not sent as JSON, or the 400 for a malformed Idempotency-Key; undefined when the headers are fine. */
const headerProblem = (request: IncomingMessage, info: RequestInfo): UnsupportedMediaType | BadRequest | undefined => {
  if (!isJsonContentType(request.headers["content-type"])) {
    return new UnsupportedMediaType({ code: "unsupported_media_type", detail: "Send the body as Content-Type: application/json.", request_id: info.requestId, hcc_cost: 0 })
  }
  const key = request.headers["idempotency-key"] as string | undefined
  if (key !== undefined && !KEY_PATTERN.test(key)) {
    return new BadRequest({
      code: "invalid_request",
      detail: "The Idempotency-Key header must be 1 to 255 visible ASCII characters (a UUID is a good key).",
      request_id: info.requestId,
      hcc_cost: 0
    })
  }
  return undefined
}

/**
 * One plugin's charged call, made by `principal`. Its success path is a short chain of flatMaps,
 * not generators: it runs on every charged request.
 */
export const pluginCall = (plugin: Plugin, { disclosure, health, idempotency, metering, pool }: CallServices) => {
  const decode = Schema.decodeUnknownEffect(plugin.request as unknown as Schema.Codec<unknown, unknown>, {
    onExcessProperty: "error",
    errors: "all"
  })
  const annotations = { plugin: plugin.name }

  const inProcess = invokePlugin(plugin, disclosure)

  /**
   * The answer's body (with `hcc_cost`), computed here or on a compute thread, and the dataset it
   * was asked of (read as the question arrives: a refresh that lands meanwhile serves the next one).
   */
  const answer = (text: string, requestId: string, view: Representation) =>
    Effect.flatMap(parse(text, requestId), (json) =>
      Effect.flatMap(Effect.catch(decode(json), (e) => invalid(e, requestId)), (input) => Effect.flatMap(Effect.exit(health.dataset), (basis) => {
        // On a compute thread (ComputePool.ts) once the threads have the dataset: it decodes, runs the
        // handler and encodes there. Until then here, as without threads (a plugin that needs no data
        // answers; one that reads the dataset gets its 503).
        const computed = pool.threads > 0 && plugin.onHttpThread !== true
          ? Effect.flatMap(Effect.exit(health.dataset), (loaded) => Exit.isSuccess(loaded) ? pool.run(plugin.name, json, view) : inProcess(input, view))
          : inProcess(input, view)
        return computed.pipe(
          Effect.catchTag("DomainError", (e) => domainProblem(plugin, e)),
          Effect.catchDefect((defect) => pluginFailed(plugin, defect, json, requestId)),
          Effect.map((encoded) => ({
            body: { ...(encoded as Record<string, unknown>), hcc_cost: plugin.hcc_cost } as Record<string, unknown>,
            basis: Exit.isSuccess(basis) ? datasetHeaders(basis.value.id, basis.value.info) : undefined
          }))
        )
      }))).pipe(Effect.annotateLogs(annotations))

  /**
   * Reserves a daily unit, answers, commits the charge (with the answer under `key`, if any) and
   * only then gives the 200. `queued` is told once the charge is handed to the ledger.
   */
  const charged = (principal: Principal, info: RequestInfo, text: string, key: string | undefined, queued: () => void, view: Representation) =>
    Effect.flatMap(
      Effect.catchTags(metering.reserve(principal), { LimitExceeded: rateLimited, SqlError: limitsUnavailable }),
      (reservation) =>
        Effect.flatMap(
          Effect.onExit(answer(text, info.requestId, view), (exit) => (Exit.isSuccess(exit) ? Effect.void : metering.release(reservation))),
          ({ basis, body }) => {
            const bodyText = JSON.stringify(body)
            queued()
            return Effect.flatMap(
              Effect.catchTag(
                metering.commit(reservation, {
                  principal,
                  endpoint: plugin.path,
                  hccCost: plugin.hcc_cost,
                  status: 200,
                  requestId: info.requestId,
                  idempotency: key === undefined ? undefined : { key, status: 200, body: bodyText }
                }),
                "SqlError",
                (e) =>
                  Effect.andThen(
                    Effect.andThen(Effect.logError("usage ledger write failed", e), key === undefined ? Effect.void : idempotency.release(principal.account.id, key)),
                    new Unavailable({ code: "unavailable", detail: "The call could not be recorded; it was not charged. Retry shortly.", request_id: info.requestId, hcc_cost: 0 })
                  )
              ),
              () => {
                info.hccCost = plugin.hcc_cost
                return answered(bodyText, basis, view)
              }
            )
          }
        )
    )

  /** A charged call with an Idempotency-Key: a retry gets the stored answer. */
  const keyed = (principal: Principal, info: RequestInfo, text: string, key: string, view: Representation) =>
    Effect.flatMap(
      // The representation is part of the request: the same key asking for the other one is a reuse.
      Effect.catchTag(idempotency.claim(principal.account.id, key, fingerprintOf(view === "answer" ? plugin.path : `${plugin.path} ${MEDIA_TYPES[view]}`, text)), "SqlError", limitsUnavailable),
      (claim): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, InvokeServices> => {
        if (claim._tag === "Replay") {
          return Effect.succeed(HttpServerResponse.text(claim.body, { status: claim.status, contentType: MEDIA_TYPES[view], headers: { "idempotent-replayed": "true" } }))
        }
        if (claim._tag === "InUse") return keyInUse
        if (claim._tag === "Reused") return keyReused
        // A request that fails before its charge is queued gives its key back (errors are not stored:
        // a retry runs again); once queued, the ledger's transaction stores the answer with the charge.
        let committing = false
        return Effect.onExit(
          charged(principal, info, text, key, () => {
            committing = true
          }, view),
          (exit) => (Exit.isSuccess(exit) || committing ? Effect.void : idempotency.release(principal.account.id, key))
        )
      }
    )

  return (request: IncomingMessage, info: RequestInfo, principal: Principal): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, InvokeServices> => {
    const refused = headerProblem(request, info)
    if (refused !== undefined) return Effect.fail(refused)
    const key = request.headers["idempotency-key"] as string | undefined
    // The view or partial representation only where the plugin has one (else the plain answer, as JSON).
    const view = representationOf(request.headers["accept"], plugin)
    // The whole body is read before a daily unit is reserved: a slow or half-sent body holds nothing.
    return Effect.flatMap(readBody(request, info), (text) =>
      key === undefined ? charged(principal, info, text, undefined, constVoid, view) : keyed(principal, info, text, key, view))
  }
}

/** The services of {@link pluginCall}, from the context. */
export const callServices: Effect.Effect<CallServices, never, Metering | Idempotency | HealthData | ComputePool | AppConfig> = Effect.gen(function*() {
  return { metering: yield* Metering, idempotency: yield* Idempotency, health: yield* HealthData, pool: yield* ComputePool, disclosure: (yield* AppConfig).disclosure }
})
