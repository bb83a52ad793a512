/**
 * Every built-in view's self-contained specification (viewSpec: the view's Vega-Lite with its
 * tables inlined, as the explorer, the clients and Jupyter draw it) is valid Vega-Lite 6 by the JSON
 * schema the vega-lite package ships (ajv), drawn from each endpoint's example answer.
 */
import { Ajv } from "ajv"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"
import builtInPlugins from "../../plugins/index.ts"
import { viewSpec } from "../../src/plugin/view.ts"

/** The JSON schema a vega-lite package ships (its export `vega-lite-schema.json`). */
const shippedSchema = (pkg: string): Record<string, unknown> =>
  JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`${pkg}/vega-lite-schema.json`), "utf8")) as Record<string, unknown>
const schemaV6 = shippedSchema("vega-lite")

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false })
const validV6 = ajv.compile(schemaV6)

/** Each built-in plugin with a view, and its recorded example answers (request → answer). */
const cases = builtInPlugins.flatMap((p) => {
  if (p.view === undefined) return []
  const answers = JSON.parse(readFileSync(new URL(`../../plugins/${p.name}/example-answers.json`, import.meta.url), "utf8")) as Record<string, unknown>
  return (p.examples ?? []).map((e) => [`${p.name}: ${e.name}`, p.view!, e.request, answers[e.name]] as const)
})

describe("the built-in views' specifications", () => {
  it("cover every endpoint with a view", () => {
    expect(cases.length).toBeGreaterThanOrEqual(7)
  })

  it.each(cases)("%s: valid Vega-Lite 6", (_, view, request, answer) => {
    const spec = viewSpec(view, request, answer)
    const ok = validV6(spec)
    expect(ok ? [] : (validV6.errors ?? []).slice(0, 5).map((e) => `${e.instancePath} ${e.message}`)).toEqual([])
  })
})
