/**
 * Composes the HTTP server from the loaded plugins: the HttpApi value (routes, the OpenAPI
 * document, the docs page) compiled into the door's route table with each endpoint's
 * implementation, and served by the door on the process's Node server.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as OpenApi from "effect/http-api/OpenApi"
import { Accounts } from "../auth/Accounts.ts"
import { makeAuthorize } from "../auth/authorize.ts"
import { buildCatalog } from "../catalog/Catalog.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Metering } from "../metering/Metering.ts"
import { PluginRegistry } from "../plugin/PluginRegistry.ts"
import { SERVICE_VERSION } from "../version.ts"
import { makeApi } from "./Api.ts"
import { compileRoutes, doorLayer, type Implementations } from "./Door.ts"
import type { InvokeServices } from "../plugin/invoke.ts"
import { callServices, pluginCall } from "./DomainHandlers.ts"
import { explorePages } from "./Explorer.ts"
import { portalPages } from "../portal/page.ts"
import { makePortalRoutes } from "../portal/routes.ts"
import { escapeHtml, guidePages } from "./Guides.ts"
import { healthzAnswer, makeCatalogAnswer, makeReadyzAnswer, makeUsageAnswer } from "./PlatformHandlers.ts"

/** Path of the OpenAPI document. */
export const OPENAPI_PATH = "/v1/openapi.json"
/** Path of the human-readable reference (Swagger UI, bundled: no CDN). */
export const DOCS_PATH = "/docs"

/**
 * The module with the docs page's bundled Swagger UI (its CSS and JavaScript, about 2 MB), shipped
 * inside effect's http-api (not one of the package's exports, so imported by its file's URL).
 */
export const DOCS_ASSETS_URL = new URL("./internal/httpApiSwagger.js", import.meta.resolve("effect/http-api/HttpApiSwagger")).href

/**
 * Compiles the docs page's assets before the server listens: compiled after, they held the event
 * loop while the first /readyz probes waited.
 */
export const DocsAssetsPreloaded = Layer.effectDiscard(
  Effect.tryPromise(() => import(DOCS_ASSETS_URL)).pipe(Effect.ignore)
)

/** JSON inside an HTML `<script>` element: no `<` (so no `</script>`) and no line terminators JavaScript once rejected. */
const scriptJson = (value: unknown): string =>
  JSON.stringify(value).replace(/</g, "\\u003c").replace(/[\u2028\u2029]/g, (c) => (c === "\u2028" ? "\\u2028" : "\\u2029"))

/** The docs page: Swagger UI over the OpenAPI document, everything inline (its CSP allows exactly that, Hygiene.ts). */
const docsPage = (spec: OpenApi.OpenAPISpec, assets: { readonly css: string; readonly javascript: string }): string => `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${escapeHtml(spec.info.title)} Documentation</title>
  <style>${assets.css}</style>
</head>
<body>
  <div id="swagger-ui"></div>
  <script id="swagger-spec" type="application/json">
    ${scriptJson(spec)}
  </script>
  <script>
    ${assets.javascript}
    window.onload = () => {
      window.ui = SwaggerUIBundle({
        spec: JSON.parse(document.getElementById("swagger-spec").textContent),
        dom_id: "#swagger-ui",
      });
    };
  </script>
</body>
</html>`

/** The routes and their implementations for whatever the registry loaded; needs an HttpServer to serve on. */
export const httpLayer = Layer.unwrap(
  Effect.gen(function*() {
    const { plugins } = yield* PluginRegistry
    const api = makeApi(plugins.map((l) => l.plugin), { version: SERVICE_VERSION })
    const catalogAnswer = yield* makeCatalogAnswer(buildCatalog(plugins, SERVICE_VERSION, (yield* AppConfig).disclosure))
    const usage = yield* makeUsageAnswer
    const readyz = yield* makeReadyzAnswer
    const services = yield* callServices
    const implementations: Implementations<InvokeServices> = {
      "system.healthz": () => healthzAnswer,
      "system.readyz": (_request, info) => readyz(info),
      "platform.catalog": () => catalogAnswer,
      "platform.usage": (_request, _info, principal) => usage(principal),
      ...Object.fromEntries(plugins.map(({ plugin }) => {
        const call = pluginCall(plugin, services)
        return [`domains.${plugin.name}`, call] as const
      }))
    }
    const spec = OpenApi.fromApi(api)
    const openapi = Effect.succeed(HttpServerResponse.jsonUnsafe(spec))
    let docs: HttpServerResponse.HttpServerResponse | undefined
    const docsAnswer = Effect.map(
      Effect.promise(() => import(DOCS_ASSETS_URL) as Promise<{ readonly css: string; readonly javascript: string }>),
      (assets) => (docs ??= HttpServerResponse.html(docsPage(spec, assets)))
    )
    const routes = compileRoutes(
      api,
      implementations,
      [[OPENAPI_PATH, openapi], [DOCS_PATH, docsAnswer], ...guidePages(), ...explorePages(), ...portalPages()],
      makeAuthorize(yield* Accounts, yield* Metering),
      yield* makePortalRoutes
    )
    return doorLayer(routes)
  })
)
