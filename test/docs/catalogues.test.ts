/**
 * Catalogues kept in step with the code, in both directions: the error table, the plugin rules,
 * the environment variables, the built-in plugin list against the folders, and the npm scripts the
 * docs name.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { ENV_VARS } from "../../src/config/AppConfig.ts"
import { ERROR_CATALOG } from "../../src/http/errorCatalog.ts"
import { PLUGIN_RULES } from "../../src/plugin/PluginRejected.ts"
import { ROOT } from "../support/server.ts"

const read = (p: string) => readFileSync(join(ROOT, p), "utf8")
/** Rows of the Markdown table that follows `heading`: first-cell code spans and the cells. */
const tableAfter = (doc: string, heading: string) => {
  const start = doc.indexOf(heading)
  expect(start).toBeGreaterThanOrEqual(0)
  const rows: Array<Array<string>> = []
  let inTable = false
  for (const line of doc.slice(start).split("\n").slice(1)) {
    if (line.startsWith("|")) {
      inTable = true
      rows.push(line.split("|").slice(1, -1).map((c) => c.trim()))
    } else if (inTable) break
  }
  return rows.slice(2) // header and separator
}
const code = (cell: string) => /^`([^`]+)`$/.exec(cell)?.[1]

describe("docs/errors.md", () => {
  it("lists exactly the catalogued codes, with their status, meaning and action", () => {
    const rows = tableAfter(read("docs/errors.md"), "## Catalogue")
    expect(rows.map((r) => [code(r[0]!), Number(r[1]), r[2], r[3], r[4]])).toEqual(
      ERROR_CATALOG.map((e) => [e.code, e.status, e.fault, e.meaning, e.action])
    )
  })
  it("covers every code the service answers with", () => {
    const codes = ERROR_CATALOG.map((e) => e.code)
    for (const c of ["invalid_request", "malformed_json", "unknown_field", "missing_token", "invalid_token", "not_found", "method_not_allowed", "payload_too_large", "unsupported_media_type", "cohort_too_small", "unknown_drug", "unknown_device", "unknown_condition", "unknown_species", "unknown_region", "rate_limited", "internal_error", "unavailable"]) {
      expect(codes).toContain(c)
    }
  })
})

describe("docs/plugins.md", () => {
  it("lists exactly the plugin rules, in order", () => {
    const rows = tableAfter(read("docs/plugins.md"), "Rules are checked in this order")
    expect(rows.map((r) => [code(r[0]!), r[1]])).toEqual(Object.entries(PLUGIN_RULES))
  })
})

describe("README.md", () => {
  it("opens with the two commands", () => {
    const lines = read("README.md").split("\n").slice(0, 8).join("\n")
    expect(lines).toContain("npm install && npm start")
    expect(lines).toContain("npm test")
  })
  it("documents exactly the environment variables the service reads", () => {
    const rows = tableAfter(read("README.md"), "## Configuration")
    expect(rows.map((r) => code(r[0]!))).toEqual([...ENV_VARS])
    const source = read("src/config/AppConfig.ts")
    for (const name of ENV_VARS) expect(source).toContain(`"${name}")`)
  })
})

describe("plugins/index.ts", () => {
  it("lists one plugin per folder under plugins/, named after it", () => {
    const folders = readdirSync(join(ROOT, "plugins")).filter((f) => statSync(join(ROOT, "plugins", f)).isDirectory()).sort()
    expect(builtins.map((p) => p.name).sort()).toEqual(folders)
  })
})

describe("the npm scripts", () => {
  it("every `npm run <script>` the README and docs/ name is a script of package.json", () => {
    const scripts = Object.keys((JSON.parse(read("package.json")) as { readonly scripts: Record<string, string> }).scripts)
    const docs = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)]
    const named = new Set(docs.flatMap((d) => [...read(d).matchAll(/npm run ([a-z][a-z:-]*)/g)].map((m) => m[1]!)))
    expect(named.size).toBeGreaterThan(10)
    expect([...named].filter((s) => !scripts.includes(s))).toEqual([])
  })
})

describe(".ci/run", () => {
  it("runs npm ci and then the README's test command", () => {
    const script = read(".ci/run")
    expect(script).toMatch(/npm ci[\s\S]*npm test/)
  })
})

describe("docs/temporal.md", () => {
  it("documents every decay rule, in order, and every model", async () => {
    const { RULE_NAMES } = await import("../../src/kernels/reference/decayRules.ts")
    const { MODEL_NAMES } = await import("../../src/kernels/reference/trajectory.ts")
    const rows = tableAfter(read("docs/temporal.md"), "## The 28 decay rules").map((r) => code(r[0]!))
    expect(rows).toEqual([...RULE_NAMES])
    const models = tableAfter(read("docs/temporal.md"), "## Models and selection").map((r) => code(r[1]!))
    expect(models).toEqual([...MODEL_NAMES])
  })
})
