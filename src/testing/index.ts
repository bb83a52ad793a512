/**
 * Helpers for plugin authors (the package's `./testing` entry): start the real service with your
 * plugin on a small generated dataset, and run the checks every plugin must pass — the same
 * conformance checks the built-in plugins pass (docs/plugins.md, "Testing a plugin").
 *
 * ```ts
 * import { test } from "node:test"
 * import { checkPlugin } from "hcc-medical-intelligence/testing"
 * test("my plugin conforms", async () => {
 *   await checkPlugin({ plugin: new URL("../src/index.ts", import.meta.url) })
 * })
 * ```
 */
import * as Schema from "effect/Schema"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { Plugin } from "../plugin/spec.ts"

/** The service entry beside this module: the TypeScript source in a checkout, the compiled file in the package. */
const MAIN = fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "../main.ts" : "../main.js", import.meta.url))

/** A service started by {@link startService}. */
export interface RunningService {
  /** e.g. `http://127.0.0.1:41234` */
  readonly url: string
  /** The demo account's token (Unlimited tier). */
  readonly token: string
  /** Its data folder (a temporary one unless given). */
  readonly dataDir: string
  /** Every log line so far, parsed. */
  readonly logLines: () => ReadonlyArray<Record<string, unknown>>
  /** Stops it (SIGTERM) and removes a temporary data folder. */
  readonly stop: () => Promise<void>
}

/** What to start. */
export interface ServiceOptions {
  /** Plugin modules to load, as HCC_PLUGINS takes them: paths, file URLs or package names. */
  readonly plugins?: ReadonlyArray<string | URL> | undefined
  /** Patients in the generated dataset (default 2,000: a few seconds to generate). */
  readonly patients?: number | undefined
  /** Generator seed (default the service's). */
  readonly seed?: number | undefined
  /** Use this data folder (kept) instead of a temporary one (removed on stop). */
  readonly dataDir?: string | undefined
  /** More environment variables for the service. */
  readonly env?: Readonly<Record<string, string>> | undefined
  /** How long to wait for ready (default 120 s). */
  readonly timeoutMs?: number | undefined
}

const specifierOf = (p: string | URL): string => (p instanceof URL ? (p.protocol === "file:" ? fileURLToPath(p) : p.href) : p)

/** Starts the service on a free port with the given plugins and waits until /readyz says ready. */
export const startService = async (options: ServiceOptions = {}): Promise<RunningService> => {
  const temporary = options.dataDir === undefined
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "hcc-plugin-test-"))
  const child: ChildProcess = spawn(process.execPath, [MAIN], {
    env: {
      ...process.env,
      PORT: "0",
      HOST: "127.0.0.1",
      HCC_DATA_DIR: dataDir,
      HCC_LOG_LEVEL: "info",
      HCC_POPULATION: String(options.patients ?? 2000),
      ...(options.seed === undefined ? {} : { HCC_SEED: String(options.seed) }),
      HCC_PLUGINS: (options.plugins ?? []).map(specifierOf).join(","),
      ...options.env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let out = ""
  let err = ""
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  const logLines = () => out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>)
  const stop = async () => {
    if (child.exitCode === null) child.kill("SIGTERM")
    await exited
    if (temporary) rmSync(dataDir, { recursive: true, force: true })
  }
  const deadline = Date.now() + (options.timeoutMs ?? 120_000)
  let port: unknown
  for (;;) {
    port = logLines().find((l) => l.msg === "listening")?.port
    if (port !== undefined) break
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`the service did not start:\n${out}${err}`)
    }
    await new Promise((r) => setTimeout(r, 25))
  }
  const url = `http://127.0.0.1:${String(port)}`
  for (;;) {
    const res = await fetch(`${url}/readyz`).catch(() => undefined)
    await res?.arrayBuffer()
    if (res?.status === 200) break
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop()
      throw new Error(`the service did not become ready:\n${out}${err}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  const token = readFileSync(join(dataDir, "demo.token"), "utf8").trim()
  return { url, token, dataDir, logLines, stop }
}

/** One check's outcome. */
export interface CheckResult {
  readonly check: string
  readonly ok: boolean
  readonly detail?: string
}

/** Everything {@link checkPlugin} found. */
export interface PluginReport {
  readonly plugin: string
  readonly results: ReadonlyArray<CheckResult>
}

/** A plugin failed a check: the message lists every failure. */
export class PluginCheckFailed extends Error {
  readonly report: PluginReport
  constructor(report: PluginReport) {
    const failed = report.results.filter((r) => !r.ok)
    super(`plugin ${report.plugin} failed ${failed.length} check(s):\n${failed.map((f) => `- ${f.check}: ${f.detail ?? ""}`).join("\n")}`)
    this.name = "PluginCheckFailed"
    this.report = report
  }
}

/** Whether `actual` has every member `expected` names, recursively (arrays element by element). */
export const matches = (actual: unknown, expected: unknown): boolean => {
  if (expected === null || typeof expected !== "object") return Object.is(actual, expected)
  if (Array.isArray(expected)) return Array.isArray(actual) && expected.length <= actual.length && expected.every((e, i) => matches(actual[i], e))
  if (actual === null || typeof actual !== "object") return false
  return Object.entries(expected).every(([k, v]) => matches((actual as Record<string, unknown>)[k], v))
}

/** What to check. */
export interface CheckOptions extends Omit<ServiceOptions, "plugins"> {
  /** The plugin module (its default export is the plugin), as HCC_PLUGINS takes it. */
  readonly plugin: string | URL
  /** Check against this running service (started with the plugin) instead of starting one. */
  readonly service?: RunningService | undefined
}

/**
 * Starts the service with the plugin on a small generated dataset (unless given one) and checks:
 * the catalog and the OpenAPI document list it; each documented example answers 200 with the
 * declared `hcc_cost`, a body the response schema accepts with no extra members, the members its
 * `expect` names, and the same body again (answers are deterministic); an unknown field is a 400
 * `unknown_field` naming it; a missing token is a 401. Resolves with the report; rejects with
 * {@link PluginCheckFailed} listing every failure.
 */
export const checkPlugin = async (options: CheckOptions): Promise<PluginReport> => {
  const specifier = specifierOf(options.plugin)
  const module = (await import(options.plugin instanceof URL ? options.plugin.href : specifier.startsWith(".") || specifier.startsWith("/") ? pathToFileURL(specifier).href : specifier)) as { default: Plugin }
  const plugin = module.default
  const service = options.service ?? (await startService({ ...options, plugins: [specifier] }))
  const results: Array<CheckResult> = []
  const record = (check: string, ok: boolean, detail?: string) => results.push(detail === undefined ? { check, ok } : { check, ok, detail })
  const post = (body: unknown, token: string | null = service.token) =>
    fetch(`${service.url}${plugin.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body)
    })
  try {
    const catalog = (await (await fetch(`${service.url}/v1/catalog`, { headers: { authorization: `Bearer ${service.token}` } })).json()) as { domains?: ReadonlyArray<string> }
    record("the catalog lists the plugin", catalog.domains?.includes(plugin.name) === true, `domains: ${JSON.stringify(catalog.domains)}`)
    const openapi = (await (await fetch(`${service.url}/v1/openapi.json`)).json()) as { paths?: Record<string, unknown> }
    record("the OpenAPI document has its path", openapi.paths?.[plugin.path] !== undefined, plugin.path)
    const examples = plugin.examples ?? []
    record("it documents at least one example", examples.length > 0)
    const decode = Schema.decodeUnknownExit(plugin.response as unknown as Schema.Codec<unknown, unknown>)
    for (const example of examples) {
      const res = await post(example.request)
      const text = await res.text()
      if (res.status !== 200) {
        record(`example ${example.name}: 200`, false, `${res.status} ${text.slice(0, 500)}`)
        continue
      }
      const body = JSON.parse(text) as Record<string, unknown>
      record(`example ${example.name}: hcc_cost ${plugin.hcc_cost}`, body.hcc_cost === plugin.hcc_cost, `hcc_cost ${String(body.hcc_cost)}`)
      // The platform's members: hcc_cost, and suppressed when the small-cell rule withheld something.
      const { hcc_cost: _, suppressed: __, ...rest } = body
      const decoded = decode(rest, { onExcessProperty: "error" })
      record(`example ${example.name}: the response schema accepts the answer`, decoded._tag === "Success", decoded._tag === "Failure" ? String(decoded.cause) : undefined)
      if (example.expect !== undefined) record(`example ${example.name}: has what it promises`, matches(body, example.expect), JSON.stringify(example.expect))
      const again = await (await post(example.request)).text()
      record(`example ${example.name}: the same answer again`, again === text)
    }
    const unknownField = await post({ ...(examples[0]?.request as Record<string, unknown> | undefined), not_a_field_of_this_plugin: 1 })
    const problem = (await unknownField.json()) as { code?: string; errors?: ReadonlyArray<{ path: string }> }
    record(
      "an unknown field is a 400 unknown_field naming it",
      unknownField.status === 400 && problem.code === "unknown_field" && problem.errors?.some((e) => e.path === "/not_a_field_of_this_plugin") === true,
      `${unknownField.status} ${JSON.stringify(problem)}`
    )
    const anonymous = await post(examples[0]?.request ?? {}, null)
    await anonymous.arrayBuffer()
    record("no token is a 401", anonymous.status === 401, String(anonymous.status))
  } finally {
    if (options.service === undefined) await service.stop()
  }
  const report = { plugin: plugin.name, results }
  if (results.some((r) => !r.ok)) throw new PluginCheckFailed(report)
  return report
}
