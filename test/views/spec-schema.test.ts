/**
 * Every built-in view's self-contained specification (viewSpec: the view's Vega-Lite with its
 * tables inlined, as the explorer, the clients and Jupyter draw it) is valid Vega-Lite 6 by the JSON
 * schema the vega-lite package ships (ajv), drawn from each endpoint's example answer — and, as
 * the Python client relabels it for JupyterLab's Vega-Lite 5 renderer, valid Vega-Lite 5 by the
 * schema vega-lite 5 ships, and compiled by Vega-Lite 5 without an error (the dev dependency
 * `hcc-vega-lite-5`, tools/vega-lite-5: Vega-Lite 5 and its Vega beside the 6 the service uses).
 */
import { Ajv } from "ajv"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"
import builtInPlugins from "../../plugins/index.ts"
import { chartSpec, viewSpec } from "../../src/plugin/view.ts"

/** The JSON schema a vega-lite package ships (its export `vega-lite-schema.json`). */
const shippedSchema = (pkg: string): Record<string, unknown> =>
  JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`${pkg}/vega-lite-schema.json`), "utf8")) as Record<string, unknown>
const schemaV6 = shippedSchema("vega-lite")
const requireV5 = createRequire(createRequire(import.meta.url).resolve("hcc-vega-lite-5/package.json"))
const schemaV5 = JSON.parse(readFileSync(requireV5.resolve("vega-lite/vega-lite-schema.json"), "utf8")) as Record<string, unknown>
const vegaLite5 = requireV5("vega-lite") as { readonly version: string; readonly compile: (spec: unknown, options?: unknown) => { readonly spec: unknown } }
const vega5 = requireV5("vega") as typeof import("vega")

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })
const validV6 = ajv.compile(schemaV6)
const validV5 = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(schemaV5)

/** Each built-in plugin with a view, and its recorded example answers (request → answer). */
const cases = builtInPlugins.flatMap((p) => {
  if (p.view === undefined) return []
  const answers = JSON.parse(readFileSync(new URL(`../../plugins/${p.name}/example-answers.json`, import.meta.url), "utf8")) as Record<string, unknown>
  // A network view (networkView) drawn over the same answer: its extra panels' tables are empty there.
  const views = [["", p.view], ...(p.networkView === undefined ? [] : [[" (network)", p.networkView] as const])] as const
  return views.flatMap(([label, view]) => (p.examples ?? []).map((e) => [`${p.name}${label}: ${e.name}`, view!, e.request, answers[e.name]] as const))
})

describe("the built-in views' specifications", () => {
  it("cover every endpoint with a view", () => {
    expect(cases.length).toBeGreaterThanOrEqual(7)
  })

  // Each with a withheld value too: the subtitle line the host adds is part of what is checked.
  const withheld = (answer: unknown) => ({ ...(answer as object), suppressed: ["/x"] })

  it.each(cases)("%s: valid Vega-Lite 6", (_, view, request, answer) => {
    for (const spec of [viewSpec(view, request, answer), chartSpec(view, request, withheld(answer), 11)]) {
      const ok = validV6(spec)
      expect(ok ? [] : (validV6.errors ?? []).slice(0, 5).map((e) => `${e.instancePath} ${e.message}`)).toEqual([])
    }
  })

  it.each(cases)("%s: relabelled v5 as the Python client does, valid Vega-Lite 5, compiled and run by it", async (_, view, request, answer) => {
    expect(vegaLite5.version).toMatch(/^5\./)
    expect(vega5.version).toMatch(/^5\./)
    for (const spec of [viewSpec(view, request, answer), chartSpec(view, request, withheld(answer), 11)]) {
      const relabelled = { ...spec, $schema: "https://vega.github.io/schema/vega-lite/v5.json" }
      const ok = validV5(relabelled)
      expect(ok ? [] : (validV5.errors ?? []).slice(0, 5).map((e) => `${e.instancePath} ${e.message}`)).toEqual([])
      const compiled = vegaLite5.compile(relabelled, { logger: vega5.logger(vega5.Error) }).spec
      const runtime = new vega5.View(vega5.parse(compiled as import("vega").Spec), { renderer: "none" })
      await runtime.runAsync()
      expect((await runtime.toSVG()).startsWith("<svg")).toBe(true)
      runtime.finalize()
    }
  })
})
