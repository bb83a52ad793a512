/**
 * Loads the built-in plugins and the third-party modules named in HCC_PLUGINS, validates every one
 * against the contract (PluginRejected names the plugin and the rule) and hands the list to the
 * HTTP layer, the catalog and the OpenAPI document.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { isAbsolute, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import satisfies from "semver/functions/satisfies.js"
import validVersion from "semver/functions/valid.js"
import validRange from "semver/ranges/valid.js"
import { AppConfig, type AppSettings } from "../config/AppConfig.ts"
import { catalogedError } from "../http/errorCatalog.ts"
import { DOMAIN_ERROR_STATUSES, type Plugin, PLUGIN_API_VERSION } from "./spec.ts"
import { PluginRejected, type PluginRule } from "./PluginRejected.ts"
import { type JsonSchema, jsonSchemaDocument, schemasAt } from "./jsonSchemaAt.ts"
import type { PluginView } from "./view.ts"
import { checkView } from "./viewCheck.ts"
import { withMember, withViewData } from "./viewData.ts"

/** Paths the platform serves itself; no plugin may take them. */
export const RESERVED_PATHS: ReadonlyArray<string> = ["/v1/catalog", "/v1/usage", "/v1/openapi.json"]

const KEBAB = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/
const PATH = /^\/v1(\/[a-z][a-z0-9]*(-[a-z0-9]+)*)+$/
const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/

/** The sources of the service's own plugins (`LoadedPlugin.source`). */
const OWN_SOURCES: ReadonlySet<string> = new Set(["built-in", "network"])

/** A plugin and where it came from. */
export interface LoadedPlugin {
  readonly plugin: Plugin
  /** `built-in` or the HCC_PLUGINS specifier. */
  readonly source: string
}

/** Checks one candidate against every rule of the contract, in a fixed order; fails on the first broken rule. */
export const validatePlugin = (
  candidate: unknown,
  source: string,
  loaded: ReadonlyArray<LoadedPlugin>
): Effect.Effect<Plugin, PluginRejected> =>
  Effect.suspend(() => {
    const p = (typeof candidate === "object" && candidate !== null ? candidate : {}) as Record<string, unknown>
    const label = typeof p.name === "string" && p.name !== "" ? p.name : source
    const reject = (rule: PluginRule, reason: string) =>
      Effect.fail(new PluginRejected({ plugin: label, source, rule, reason }))

    if (typeof candidate !== "object" || candidate === null) return reject("export_missing", "the export is not an object")
    if (typeof p.name !== "string" || !KEBAB.test(p.name)) return reject("name_invalid", `name ${JSON.stringify(p.name)} is not kebab-case`)
    if (loaded.some((l) => l.plugin.name === p.name)) return reject("name_duplicate", `name "${p.name}" is already loaded`)
    if (typeof p.version !== "string" || validVersion(p.version) === null) return reject("version_invalid", `version ${JSON.stringify(p.version)} is not semver`)
    if (typeof p.engine !== "string" || validRange(p.engine) === null || !satisfies(PLUGIN_API_VERSION, p.engine)) {
      return reject("engine_unsupported", `engine ${JSON.stringify(p.engine)} does not include plugin API ${PLUGIN_API_VERSION}`)
    }
    if (typeof p.path !== "string" || !PATH.test(p.path)) return reject("path_invalid", `path ${JSON.stringify(p.path)} is not /v1/<kebab-case segments>`)
    if (RESERVED_PATHS.includes(p.path)) return reject("path_duplicate", `path ${p.path} is served by the platform`)
    const clash = loaded.find((l) => l.plugin.path === p.path)
    if (clash !== undefined) return reject("path_duplicate", `path ${p.path} is already served by plugin "${clash.plugin.name}"`)
    if (typeof p.summary !== "string" || p.summary.trim() === "") return reject("summary_missing", "summary is empty")
    if (typeof p.hcc_cost !== "number" || !Number.isFinite(p.hcc_cost) || p.hcc_cost < 0) {
      return reject("cost_invalid", `hcc_cost ${JSON.stringify(p.hcc_cost) ?? String(p.hcc_cost)} is not a finite number ≥ 0`)
    }
    if (!Schema.isSchema(p.request) || !Schema.isSchema(p.response)) return reject("schema_missing", "request or response is not an effect Schema")
    const fields = (p.response as { fields?: unknown }).fields
    if (typeof fields !== "object" || fields === null || (p.response as Schema.Top).ast._tag !== "Objects") {
      return reject("response_not_struct", "response is not a Schema.Struct")
    }
    if ("hcc_cost" in fields) return reject("response_declares_cost", "response declares hcc_cost")
    if (typeof p.handler !== "function") return reject("handler_missing", "handler is not a function")
    if (p.prepare !== undefined && typeof p.prepare !== "function") return reject("handler_missing", "prepare is given but is not a function")
    const errors = p.errors === undefined ? [] : p.errors
    if (!Array.isArray(errors)) return reject("error_invalid", "errors is not an array")
    for (const e of errors as ReadonlyArray<Record<string, unknown>>) {
      const code = e.code
      if (typeof code !== "string" || !SNAKE.test(code)) return reject("error_invalid", `error code ${JSON.stringify(code)} is not snake_case`)
      if (!(DOMAIN_ERROR_STATUSES as ReadonlyArray<unknown>).includes(e.status)) {
        return reject("error_invalid", `error ${code} has status ${String(e.status)}; allowed: ${DOMAIN_ERROR_STATUSES.join(", ")}`)
      }
      if (typeof e.description !== "string" || e.description === "") return reject("error_invalid", `error ${code} has no description`)
      const known = catalogedError(code)
      if (known !== undefined && (known.status !== e.status || (known.status !== 422 && known.raisedByPlugins !== true))) {
        return reject("error_invalid", `error ${code} is a platform code (status ${known.status})`)
      }
    }
    if (p.viewData !== undefined && !Schema.isSchema(p.viewData)) return reject("view_invalid", "viewData is not a Schema")
    if (p.partial !== undefined && !Schema.isSchema(p.partial)) return reject("partial_invalid", "partial is not a Schema")
    // What the view may point into: the answer, and its `view_data` when declared; what disclosure
    // may: those and the `partial` member.
    const answer = withViewData(p.response as Schema.Struct<Schema.Struct.Fields>, p.viewData as Schema.Top | undefined)
    const disclosed = withMember(answer as Schema.Struct<Schema.Struct.Fields>, "partial", p.partial as Schema.Top | undefined)
    const disclosureProblem = p.disclosure === undefined ? undefined : checkDisclosure(p.disclosure, disclosed)
    if (disclosureProblem !== undefined) return reject("disclosure_invalid", disclosureProblem)
    const viewProblem = p.view === undefined ? undefined : checkView(p.view, p.request as Schema.Top, answer)
    if (viewProblem !== undefined) return reject("view_invalid", viewProblem)
    const examplesChecked = () => {
      const examples = p.examples === undefined ? [] : p.examples
      if (!Array.isArray(examples)) return reject("example_invalid", "examples is not an array")
      const decode = Schema.decodeUnknownExit(p.request as Schema.Codec<unknown, unknown>)
      for (const ex of examples as ReadonlyArray<Record<string, unknown>>) {
        if (typeof ex.name !== "string" || decode(ex.request, { onExcessProperty: "error" })._tag === "Failure") {
          return reject("example_invalid", `example ${JSON.stringify(ex.name)} does not decode with the request schema`)
        }
      }
      return Effect.succeed(candidate as Plugin)
    }
    // The service's own views (built-in, and the network's) are compiled by its test suite: only a
    // plugin of HCC_PLUGINS loads Vega-Lite to compile its view (viewCompile.ts).
    if (p.view === undefined || OWN_SOURCES.has(source)) return examplesChecked()
    return Effect.promise(() => import("./viewCompile.ts")).pipe(Effect.flatMap(({ compileProblem }) => {
      const problem = compileProblem(p.view as PluginView)
      return problem === undefined ? examplesChecked() : reject("view_invalid", problem)
    }))
  })

/** Whether the field reached may be null (one of its schemas is the null type). */
const allowsNull = (schemas: ReadonlyArray<JsonSchema>) => schemas.some((s) => s["type"] === "null")

/** Why a plugin's `disclosure` declaration does not fit its response schema, or undefined. */
const checkDisclosure = (declaration: unknown, response: Schema.Top): string | undefined => {
  if (typeof declaration !== "object" || declaration === null) return "disclosure is not an object"
  const d = declaration as Record<string, unknown>
  const doc = jsonSchemaDocument(response)
  const pointer = (x: unknown) => typeof x === "string" && x.startsWith("/") && x.length > 1
  if (d.cohort !== undefined) {
    if (!pointer(d.cohort)) return `disclosure.cohort ${JSON.stringify(d.cohort)} is not a JSON pointer`
    if (!schemasAt(doc, d.cohort as string).some((s) => s["type"] === "integer")) return `disclosure.cohort ${String(d.cohort)} is not an integer field of the response`
  }
  for (const list of ["counts", "statistics"] as const) {
    const entries = d[list] ?? []
    if (!Array.isArray(entries)) return `disclosure.${list} is not an array`
    for (const entry of entries as ReadonlyArray<unknown>) {
      if (!pointer(entry)) return `disclosure.${list} entry ${JSON.stringify(entry)} is not a JSON pointer`
      const found = schemasAt(doc, entry as string)
      if (found.length === 0) return `disclosure.${list} entry ${String(entry)} names no field of the response`
      if (!allowsNull(found)) return `disclosure.${list} entry ${String(entry)} must allow null (it is withheld as null)`
    }
  }
  return undefined
}

/** Imports one HCC_PLUGINS module: a path (relative to the working directory) or a package name. */
const importModule = (specifier: string): Effect.Effect<Record<string, unknown>, PluginRejected> =>
  Effect.tryPromise({
    try: () => {
      const target = specifier.startsWith(".") || isAbsolute(specifier)
        ? pathToFileURL(resolve(specifier)).href
        : specifier
      return import(target) as Promise<Record<string, unknown>>
    },
    catch: (cause) =>
      new PluginRejected({
        plugin: specifier,
        source: specifier,
        rule: "module_load_failed",
        reason: cause instanceof Error ? cause.message.split("\n")[0]! : String(cause)
      })
  })

/** Validates the built-ins, then each external module, in order; the first rejection stops loading. */
export const loadPlugins = (
  builtins: ReadonlyArray<unknown>,
  specifiers: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<LoadedPlugin>, PluginRejected> =>
  Effect.gen(function*() {
    const loaded: Array<LoadedPlugin> = []
    for (const candidate of builtins) {
      loaded.push({ plugin: yield* validatePlugin(candidate, "built-in", loaded), source: "built-in" })
    }
    for (const specifier of specifiers) {
      const mod = yield* importModule(specifier)
      const candidate = mod.default ?? mod.plugin
      if (candidate === undefined) {
        return yield* new PluginRejected({ plugin: specifier, source: specifier, rule: "export_missing", reason: "no default or `plugin` export" })
      }
      loaded.push({ plugin: yield* validatePlugin(candidate, specifier, loaded), source: specifier })
    }
    return loaded
  })

/** The plugins this process serves. */
export class PluginRegistry extends Context.Service<PluginRegistry, {
  readonly plugins: ReadonlyArray<LoadedPlugin>
}>()("hcc/PluginRegistry") {
  /**
   * Built-ins plus HCC_PLUGINS, each held to the same rules. When `network` makes endpoints of them
   * under the settings (a coordinator: src/network/plugins.ts), the process serves those instead:
   * a coordinator holds no patient data, so the domain endpoints that would read it are not served.
   */
  static readonly layer = (builtins: ReadonlyArray<unknown>, network?: (plugins: ReadonlyArray<Plugin>, config: AppSettings) => ReadonlyArray<unknown> | undefined) =>
    Layer.effect(
      PluginRegistry,
      Effect.gen(function*() {
        const config = yield* AppConfig
        const loaded = yield* loadPlugins(builtins, config.plugins)
        const derived = network?.(loaded.map((l) => l.plugin), config)
        const plugins: Array<LoadedPlugin> = derived === undefined ? [...loaded] : []
        for (const candidate of derived ?? []) {
          plugins.push({ plugin: yield* validatePlugin(candidate, "network", plugins), source: "network" })
        }
        // One start-up line per plugin: what this process serves, and from where.
        for (const { plugin, source } of plugins) {
          yield* Effect.logInfo("plugin loaded").pipe(Effect.annotateLogs({ plugin: plugin.name, version: plugin.version, source, path: plugin.path }))
        }
        return { plugins }
      })
    )
}
