/**
 * Composes the HTTP server from the loaded plugins: the HttpApi (routes + /v1/openapi.json), the
 * offline docs page, the handlers and middleware, and the outer guard.
 */
import { Effect, Layer } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiBuilder, HttpApiSwagger } from "effect/http-api"
import { AuthorizationLive } from "../auth/AuthorizationLive.ts"
import { buildCatalog } from "../catalog/Catalog.ts"
import { PluginRegistry } from "../plugin/PluginRegistry.ts"
import { SERVICE_VERSION } from "../version.ts"
import { makeApi } from "./Api.ts"
import { domainHandlers } from "./DomainHandlers.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { fastLaneLayer } from "./FastLane.ts"
import { guardLayer, MaxBodyLive, routeTable } from "./Guard.ts"
import { GUIDES, guidePath, guidesLayer } from "./Guides.ts"
import { makeCatalogAnswer, platformHandlers, systemHandlers } from "./PlatformHandlers.ts"

/** Path of the OpenAPI document. */
export const OPENAPI_PATH = "/v1/openapi.json"
/** Path of the human-readable reference (Swagger UI, bundled: no CDN). */
export const DOCS_PATH = "/docs"

/**
 * The module with the docs page's bundled Swagger UI: about 2 MB of JavaScript, which effect's
 * HttpApiSwagger imports (`./internal/httpApiSwagger.js`, not exported by the package) when its
 * route is added — after the server listens.
 */
export const DOCS_ASSETS_URL = new URL("./internal/httpApiSwagger.js", import.meta.resolve("effect/http-api/HttpApiSwagger")).href

/**
 * Compiles the docs page's assets before the server listens: compiled after, they held the event
 * loop while the first /readyz probes waited. Loaded by the file's
 * URL, the one HttpApiSwagger's own import resolves to, that import then finds the module in the
 * cache. Should a later effect move the file, the preload does nothing and the page still works.
 */
export const DocsAssetsPreloaded = Layer.effectDiscard(
  Effect.tryPromise(() => import(DOCS_ASSETS_URL)).pipe(Effect.ignore)
)

/** The routes and handlers for whatever the registry loaded; needs an HttpServer to serve on. */
export const httpLayer = Layer.unwrap(
  Effect.gen(function*() {
    const { plugins } = yield* PluginRegistry
    const api = makeApi(plugins.map((l) => l.plugin), { version: SERVICE_VERSION })
    // One catalog answer for both paths (the router's and the fast lane's).
    const catalogAnswer = yield* makeCatalogAnswer(buildCatalog(plugins, SERVICE_VERSION, (yield* AppConfig).disclosure))
    const routes = routeTable(api, [["GET", OPENAPI_PATH], ["GET", DOCS_PATH], ...GUIDES.map((g) => ["GET", guidePath(g.page)] as const)])
    const handlers = Layer.mergeAll(
      systemHandlers(api),
      platformHandlers(api, catalogAnswer),
      domainHandlers(api, plugins.map((l) => l.plugin))
    ).pipe(Layer.provide(AuthorizationLive))
    const apiLayer = HttpApiBuilder.layer(api, { openapiPath: OPENAPI_PATH }).pipe(Layer.provide(handlers))
    const served = HttpRouter.serve(
      Layer.mergeAll(apiLayer, HttpApiSwagger.layer(api, { path: DOCS_PATH }), guidesLayer, guardLayer(routes)),
      { disableLogger: true, disableListenLog: true }
    ).pipe(Layer.provide(MaxBodyLive))
    // The hot routes, answered before the router (FastLane.ts); what it leaves, the router serves.
    return Layer.merge(served, fastLaneLayer(routes, plugins.map((l) => l.plugin), catalogAnswer))
  })
)
