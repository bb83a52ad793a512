/**
 * The typed client (the package's `./client` entry), built from the same HttpApi definition the
 * server serves: one method per built-in endpoint, typed requests and answers, typed problem errors.
 *
 * - Effect users: {@link makeEffectClient} / {@link layer} give Effect's `HttpApiClient` for the API.
 * - Everyone else: {@link createClient} gives the same methods returning Promises; a problem answer
 *   rejects with {@link HccProblemError} (`status`, `code`, `detail`, the whole problem).
 *
 * Both send `Authorization: Bearer <token>`, retry 429 and 503 answers with backoff while the wait
 * they ask for (Retry-After) stays within `maxRetryWaitMs`, and send an `Idempotency-Key` with every
 * POST — the same key on each retry — so a retried call is charged once (docs/client.md).
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as FetchHttpClient from "effect/http/FetchHttpClient"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import * as HttpClientResponse from "effect/http/HttpClientResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiClient from "effect/http-api/HttpApiClient"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { randomUUID } from "node:crypto"
import { contract as clinical } from "../../plugins/clinical/contract.ts"
import { contract as deviceOutcomes } from "../../plugins/device-outcomes/contract.ts"
import { contract as drugOutcomes } from "../../plugins/drug-outcomes/contract.ts"
import { contract as oneHealth } from "../../plugins/one-health/contract.ts"
import { contract as population } from "../../plugins/population/contract.ts"
import { contract as riskModel } from "../../plugins/risk-model/contract.ts"
import { contract as temporal } from "../../plugins/temporal/contract.ts"
import { Authorization, PlatformGroup, pluginEndpoint, SystemGroup } from "../http/ApiContract.ts"
import { chartSpec, type PluginView, VIEW_MEDIA_TYPE, withheldLine } from "../plugin/view.ts"

/** The API as the client sees it: the platform's endpoints and every built-in domain, fully typed. */
export const ClientApi = HttpApi.make("hcc")
  .add(SystemGroup)
  .add(PlatformGroup)
  .add(
    HttpApiGroup.make("domains")
      .add(
        pluginEndpoint(clinical),
        pluginEndpoint(drugOutcomes),
        pluginEndpoint(riskModel),
        pluginEndpoint(deviceOutcomes),
        pluginEndpoint(population),
        pluginEndpoint(oneHealth),
        pluginEndpoint(temporal)
      )
      .middleware(Authorization)
  )

/** How the client reaches the service. */
export interface ClientOptions {
  /** e.g. `http://localhost:8080` */
  readonly baseUrl: string
  /** An HCC token (`hcc tokens issue`); omit for /healthz and /readyz only. */
  readonly token?: string | undefined
  /** Retries of a 429 or 503 answer (default 3; 0 = none). */
  readonly retries?: number | undefined
  /** The longest wait before a retry (default 30 s): an answer asking for longer (a daily limit) is returned, not waited for. */
  readonly maxRetryWaitMs?: number | undefined
  /** First backoff when the answer names no wait (default 250 ms; doubled each retry, with jitter). */
  readonly backoffMs?: number | undefined
}

/** Seconds a Retry-After header asks for (delta-seconds or an HTTP date), if it says. */
export const retryAfterMs = (header: string | undefined, now: number = Date.now()): number | undefined => {
  if (header === undefined) return undefined
  const trimmed = header.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const RETRIED = new Set([429, 503])

/** Retries 429 and 503 answers: the wait Retry-After names, else exponential backoff with jitter. */
const retrying = (options: ClientOptions) => (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transform(client, (send) => {
    const retries = options.retries ?? 3
    const maxWait = options.maxRetryWaitMs ?? 30_000
    const backoff = options.backoffMs ?? 250
    const attempt = (n: number): Effect.Effect<HttpClientResponse.HttpClientResponse, unknown> =>
      Effect.flatMap(send, (res) => {
        if (!RETRIED.has(res.status) || n >= retries) return Effect.succeed(res)
        const asked = retryAfterMs(res.headers["retry-after"])
        const wait = asked ?? Math.round(backoff * 2 ** n * (0.5 + Math.random()))
        if (wait > maxWait) return Effect.succeed(res)
        return Effect.andThen(Effect.sleep(Duration.millis(wait)), attempt(n + 1))
      })
    return attempt(0) as Effect.Effect<HttpClientResponse.HttpClientResponse, never>
  })

/** One Idempotency-Key per POST call, kept on its retries. */
const withIdempotencyKey = HttpClient.mapRequest((req: HttpClientRequest.HttpClientRequest) =>
  req.method === "POST" && req.headers["idempotency-key"] === undefined ? HttpClientRequest.setHeader(req, "idempotency-key", randomUUID()) : req)

/**
 * Problem answers link their `type` to the errors guide (`/docs/errors#<code>`), while the problem
 * schemas the API shares with the server declare `about:blank`: the client reads `type` back to
 * `about:blank` before decoding (the code says the same), so every declared problem decodes typed.
 */
const decodableProblems = HttpClient.transformResponse((effect: Effect.Effect<HttpClientResponse.HttpClientResponse, unknown>) =>
  Effect.flatMap(effect, (res) => {
    if (!(res.headers["content-type"] ?? "").startsWith("application/problem+json")) return Effect.succeed(res)
    return Effect.map(res.text, (text) => {
      let body = text
      try {
        const problem = JSON.parse(text) as Record<string, unknown>
        if (typeof problem.type === "string" && problem.type.startsWith("/docs/errors#")) body = JSON.stringify({ ...problem, type: "about:blank" })
      } catch {
        // not JSON: left as it came, the decoder says so
      }
      const headers = Object.entries(res.headers).filter((h): h is [string, string] => typeof h[1] === "string")
      return HttpClientResponse.fromWeb(res.request, new Response(body, { status: res.status, headers }))
    })
  })) as (client: HttpClient.HttpClient) => HttpClient.HttpClient

/** The HttpClient changes every client call goes through (bearer, retries, idempotency keys, problem types). */
export const transformClient = (options: ClientOptions) => (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  client.pipe(
    options.token === undefined ? (c) => c : HttpClient.mapRequest(HttpClientRequest.bearerToken(options.token)),
    retrying(options),
    withIdempotencyKey,
    decodableProblems
  )

/** Effect's typed client for the API (needs an `HttpClient`, e.g. `FetchHttpClient.layer`). */
export const makeEffectClient = (options: ClientOptions) =>
  HttpApiClient.make(ClientApi, { baseUrl: options.baseUrl, transformClient: transformClient(options) })

/** The Effect client as a service. */
export class HccClient extends Context.Service<HccClient, HttpApiClient.ForApi<typeof ClientApi>>()("hcc/HccClient") {}

/** {@link HccClient} over `fetch`. */
export const layer = (options: ClientOptions): Layer.Layer<HccClient> =>
  Layer.effect(HccClient, makeEffectClient(options)).pipe(Layer.provide(FetchHttpClient.layer))

/** A problem answer (RFC 9457) from the service: its status, stable code and the whole body. */
export class HccProblemError extends Error {
  readonly status: number
  readonly code: string
  readonly detail: string
  readonly requestId: string | undefined
  readonly problem: Readonly<Record<string, unknown>>
  constructor(problem: Readonly<Record<string, unknown>>) {
    super(`${String(problem.status)} ${String(problem.code)}: ${String(problem.detail)}`)
    this.name = "HccProblemError"
    this.status = Number(problem.status)
    this.code = String(problem.code)
    this.detail = String(problem.detail)
    this.requestId = typeof problem.request_id === "string" ? problem.request_id : undefined
    this.problem = problem
  }
}

type Effects = HttpApiClient.ForApi<typeof ClientApi>
/** What an endpoint method decodes to (not the raw response the other response modes give). */
type Answer<F> = F extends (...args: ReadonlyArray<any>) => Effect.Effect<infer A, any, any>
  ? Exclude<A, HttpClientResponse.HttpClientResponse | readonly [unknown, HttpClientResponse.HttpClientResponse]>
  : never
type Payload<F> = F extends (request: { readonly payload: infer P }) => any ? P : never

/** The Promise client: one method per endpoint. */
export interface Client {
  readonly healthz: () => Promise<Answer<Effects["system"]["healthz"]>>
  readonly readyz: () => Promise<Answer<Effects["system"]["readyz"]>>
  readonly catalog: () => Promise<Answer<Effects["platform"]["catalog"]>>
  readonly usage: () => Promise<Answer<Effects["platform"]["usage"]>>
  readonly clinical: (body: Payload<Effects["domains"]["clinical"]>) => Promise<Answer<Effects["domains"]["clinical"]>>
  readonly drugOutcomes: (body: Payload<Effects["domains"]["drug-outcomes"]>) => Promise<Answer<Effects["domains"]["drug-outcomes"]>>
  readonly riskModel: (body: Payload<Effects["domains"]["risk-model"]>) => Promise<Answer<Effects["domains"]["risk-model"]>>
  readonly deviceOutcomes: (body: Payload<Effects["domains"]["device-outcomes"]>) => Promise<Answer<Effects["domains"]["device-outcomes"]>>
  readonly population: (body: Payload<Effects["domains"]["population"]>) => Promise<Answer<Effects["domains"]["population"]>>
  readonly oneHealth: (body: Payload<Effects["domains"]["one-health"]>) => Promise<Answer<Effects["domains"]["one-health"]>>
  readonly temporal: (body: Payload<Effects["domains"]["temporal"]>) => Promise<Answer<Effects["domains"]["temporal"]>>
  /**
   * The chart of an answer: the self-contained Vega-Lite specification the endpoint's view draws
   * from this request and answer (docs/explore.md) — for vega-embed, a notebook or `vega` — or
   * undefined when the endpoint declares no view. A built-in endpoint's view comes with the client;
   * another's (a third-party plugin's) from the service's OpenAPI document (`x-hcc-view`), read once.
   * Where the answer withholds a value, the chart names the threshold in force (the catalog's
   * `disclosure.min_cell_size`, read once for that).
   */
  readonly view: (path: string, request: unknown, answer: unknown) => Promise<Record<string, unknown> | undefined>
  /**
   * Any POST endpoint by path — a third-party plugin's, or a network coordinator's
   * `/v1/network/<domain>` (docs/network.md) — with the same bearer, retries and Idempotency-Key as
   * the methods above; the answer as JSON, untyped. `{ view: true }` asks for the view
   * representation (the answer and its `view_data`, what `view()` draws beyond the answer).
   */
  readonly call: (path: `/v1/${string}`, body: unknown, options?: { readonly view?: boolean }) => Promise<Record<string, unknown>>
}

/** The built-in endpoints' views, by path. */
const BUILT_IN_VIEWS: ReadonlyMap<string, PluginView | undefined> = new Map(
  [clinical, drugOutcomes, riskModel, deviceOutcomes, population, oneHealth, temporal].map((c) => [c.path, c.view] as const)
)

/** A failure as the Promise client rejects with it: problems as {@link HccProblemError}, the rest as they are. */
const toRejection = (e: unknown): unknown => {
  if (typeof e === "object" && e !== null && typeof (e as { status?: unknown }).status === "number" && typeof (e as { code?: unknown }).code === "string") {
    const { _tag: _, ...fields } = e as Record<string, unknown>
    return new HccProblemError(fields)
  }
  return e
}

/** The Promise client over `fetch`. */
export const createClient = (options: ClientOptions): Client => {
  const client = Effect.runSync(makeEffectClient(options).pipe(Effect.provide(FetchHttpClient.layer)))
  // The methods need nothing more once the client is built (FetchHttpClient is provided above).
  const run = <A>(effect: Effect.Effect<A, unknown, unknown>): Promise<A> =>
    Effect.runPromise(Effect.mapError(effect as Effect.Effect<A, unknown, never>, toRejection))
  let published: Promise<Record<string, any>> | undefined
  const viewOf = async (path: string): Promise<PluginView | undefined> => {
    if (BUILT_IN_VIEWS.has(path)) return BUILT_IN_VIEWS.get(path)
    published ??= fetch(new URL("/v1/openapi.json", options.baseUrl)).then((r) => {
      if (!r.ok) throw new Error(`GET /v1/openapi.json: ${r.status}`)
      return r.json() as Promise<Record<string, any>>
    })
    return (await published.catch((e) => {
      published = undefined
      throw e
    }))["paths"]?.[path]?.["post"]?.["x-hcc-view"]
  }
  let disclosure: Promise<number | undefined> | undefined
  const minCellSize = (answer: unknown): Promise<number | undefined> => {
    // Only where the chart will carry the withheld line (the answer's or its view data's list).
    if (withheldLine(answer) === undefined) return Promise.resolve(undefined)
    disclosure ??= run(client.platform.catalog()).then((c) => c.disclosure.min_cell_size, () => (disclosure = undefined))
    return disclosure
  }
  const http = Effect.runSync(Effect.map(Effect.service(HttpClient.HttpClient), transformClient(options)).pipe(Effect.provide(FetchHttpClient.layer)))
  return {
    call: (path, body, callOptions) =>
      run(Effect.flatMap(
        http.execute(HttpClientRequest.post(new URL(path, options.baseUrl)).pipe(
          HttpClientRequest.bodyJsonUnsafe(body),
          HttpClientRequest.setHeader("accept", callOptions?.view === true ? VIEW_MEDIA_TYPE : "application/json")
        )),
        (res) => Effect.flatMap(res.json, (json) => (res.status < 300 ? Effect.succeed(json as Record<string, unknown>) : Effect.fail(json)))
      )),
    view: async (path, request, answer) => {
      const view = await viewOf(path)
      return view === undefined ? undefined : chartSpec(view, request, answer, await minCellSize(answer))
    },
    healthz: () => run(client.system.healthz()),
    readyz: () => run(client.system.readyz()),
    catalog: () => run(client.platform.catalog()),
    usage: () => run(client.platform.usage()),
    clinical: (payload) => run(client.domains.clinical({ payload })),
    drugOutcomes: (payload) => run(client.domains["drug-outcomes"]({ payload })),
    riskModel: (payload) => run(client.domains["risk-model"]({ payload })),
    deviceOutcomes: (payload) => run(client.domains["device-outcomes"]({ payload })),
    population: (payload) => run(client.domains.population({ payload })),
    oneHealth: (payload) => run(client.domains["one-health"]({ payload })),
    temporal: (payload) => run(client.domains.temporal({ payload }))
  }
}
