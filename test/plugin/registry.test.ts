/**
 * The plugin registry: each contract rule rejects the plugin that breaks it, with the plugin's name
 * and the rule's code; a broken module stops start-up with exit code ≠ 0.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { MAX_PATIENTS } from "../../src/config/limits.ts"
import { definePlugin, PLUGIN_API_VERSION } from "../../src/plugin/Plugin.ts"
import { PLUGIN_RULES, type PluginRule } from "../../src/plugin/PluginRejected.ts"
import { loadPlugins, validatePlugin } from "../../src/plugin/PluginRegistry.ts"
import { fixturePlugin, runServerToExit } from "../support/server.ts"

const good = {
  name: "good-one",
  version: "1.0.0",
  engine: "^2.0.0",
  path: "/v1/good-one",
  summary: "A valid plugin",
  request: Schema.Struct({ x: Schema.Finite }),
  response: Schema.Struct({ y: Schema.Finite }),
  hcc_cost: 2,
  errors: [{ code: "x_too_big", status: 422, description: "x is too big" }],
  examples: [{ name: "one", summary: "x = 1", request: { x: 1 } }],
  handler: ({ x }: { x: number }) => Effect.succeed({ y: x })
}

/** A view of the good plugin: its answer's y as a bar, with the request's x in the title. */
const goodView = {
  version: 1,
  data: { answer: { from: "/answer", rows: "object" }, asked: { from: "/request", rows: "object" } },
  spec: { title: { text: { expr: "'x = ' + asked.x" } }, data: { name: "answer" }, mark: "bar", encoding: { x: { field: "y", type: "quantitative" } } }
} as const

const ruleOf = async (candidate: unknown, loaded: ReadonlyArray<any> = [], source = "test"): Promise<string | "accepted"> => {
  const exit = await Effect.runPromiseExit(validatePlugin(candidate, source, loaded))
  if (Exit.isSuccess(exit)) return "accepted"
  const failure = exit.cause.reasons.find((r) => r._tag === "Fail")
  return (failure as any).error.rule
}

const cases: ReadonlyArray<readonly [PluginRule, unknown]> = [
  ["export_missing", 42],
  ["name_invalid", { ...good, name: "Bad_Name" }],
  ["version_invalid", { ...good, version: "one" }],
  ["engine_unsupported", { ...good, engine: "^3.0.0" }],
  ["engine_unsupported", { ...good, engine: "not a range" }],
  ["path_invalid", { ...good, path: "/v2/good-one" }],
  ["path_invalid", { ...good, path: "/v1/" }],
  ["path_duplicate", { ...good, path: "/v1/catalog" }],
  ["summary_missing", { ...good, summary: " " }],
  ["cost_invalid", { ...good, hcc_cost: -1 }],
  ["cost_invalid", { ...good, hcc_cost: Number.NaN }],
  ["cost_invalid", { ...good, hcc_cost: Number.POSITIVE_INFINITY }],
  ["cost_invalid", { ...good, hcc_cost: "3" }],
  ["schema_missing", { ...good, request: { x: "number" } }],
  ["response_not_struct", { ...good, response: Schema.Array(Schema.Number) }],
  ["response_declares_cost", { ...good, response: Schema.Struct({ y: Schema.Finite, hcc_cost: Schema.Finite }) }],
  ["handler_missing", { ...good, handler: undefined }],
  ["error_invalid", { ...good, errors: [{ code: "Bad Code", status: 422, description: "d" }] }],
  ["error_invalid", { ...good, errors: [{ code: "fine", status: 404, description: "d" }] }],
  ["error_invalid", { ...good, errors: [{ code: "rate_limited", status: 422, description: "d" }] }],
  ["example_invalid", { ...good, examples: [{ name: "bad", summary: "s", request: { x: "one" } }] }],
  ["example_invalid", { ...good, examples: [{ name: "extra", summary: "s", request: { x: 1, z: 2 } }] }],
  ["disclosure_invalid", { ...good, disclosure: "cohort" }],
  ["disclosure_invalid", { ...good, disclosure: { cohort: "y" } }],
  ["disclosure_invalid", { ...good, disclosure: { cohort: "/z" } }],
  ["disclosure_invalid", { ...good, disclosure: { counts: ["/y"] } }],
  ["disclosure_invalid", { ...good, response: Schema.Struct({ y: Schema.NullOr(Schema.Finite) }), disclosure: { statistics: ["/missing"] } }],
  ["view_invalid", { ...good, view: { ...goodView, version: 2 } }],
  ["view_invalid", { ...good, view: { ...goodView, data: { answer: { from: "/answer/z", rows: "object" } } } }],
  ["view_invalid", { ...good, view: { ...goodView, data: { answer: { from: "/answer/y", rows: "items" } } } }],
  ["view_invalid", { ...good, view: { ...goodView, data: { answer: { from: "/elsewhere", rows: "object" } } } }],
  ["view_invalid", { ...good, view: { ...goodView, spec: { ...goodView.spec, encoding: { x: { field: "z", type: "quantitative" } } } } }],
  ["view_invalid", { ...good, view: { ...goodView, spec: { ...goodView.spec, data: { name: "other" } } } }],
  ["view_invalid", { ...good, view: { ...goodView, spec: { ...goodView.spec, data: { values: [{ y: 1 }] } } } }],
  ["view_invalid", { ...good, view: { ...goodView, spec: { ...goodView.spec, mark: "no-such-mark" } } }],
  ["partial_invalid", { ...good, partial: { not: "a schema" } }],
  // A pointer into `partial` is a disclosure pointer only where the plugin declares `partial`.
  ["disclosure_invalid", { ...good, disclosure: { counts: ["/partial/n"] } }]
]

describe("validatePlugin", () => {
  it("accepts a valid plugin, including a shared 422 code from the catalogue", async () => {
    expect(await ruleOf(good)).toBe("accepted")
    expect(await ruleOf({ ...good, errors: [{ code: "unknown_drug", status: 422, description: "d" }] })).toBe("accepted")
    expect(await ruleOf({ ...good, hcc_cost: 0 })).toBe("accepted")
    expect(await ruleOf({ ...good, view: goodView })).toBe("accepted")
    const nullable = Schema.Struct({ n: Schema.Int, y: Schema.NullOr(Schema.Finite), rows: Schema.Array(Schema.Struct({ k: Schema.NullOr(Schema.Int) })) })
    expect(await ruleOf({ ...good, response: nullable, disclosure: { cohort: "/n", counts: ["/rows/*/k"], statistics: ["/y"] } })).toBe("accepted")
    expect(await ruleOf({ ...good, partial: Schema.Struct({ n: Schema.NullOr(Schema.Int) }), disclosure: { counts: ["/partial/n"] } })).toBe("accepted")
    // A network endpoint's 503 from the catalogue, which handlers may raise too.
    expect(await ruleOf({ ...good, errors: [{ code: "no_member_answered", status: 503, description: "d" }] })).toBe("accepted")
    expect(await ruleOf({ ...good, errors: [{ code: "unavailable", status: 503, description: "d" }] })).toBe("error_invalid")
  })
  it.each(cases)("rejects by rule %s", async (rule, candidate) => {
    expect(await ruleOf(candidate)).toBe(rule)
  })
  it("compiles the view of a plugin of HCC_PLUGINS, not the service's own (its test suite compiles those: views.test.ts)", async () => {
    const broken = { ...good, view: { ...goodView, spec: { ...goodView.spec, mark: "no-such-mark" } } }
    expect(await ruleOf(broken, [], "./plugins/mine.ts")).toBe("view_invalid")
    expect(await ruleOf(broken, [], "built-in")).toBe("accepted")
    expect(await ruleOf(broken, [], "network")).toBe("accepted")
  })
  it("rejects a duplicate name and a duplicate path", async () => {
    const loaded = [{ plugin: good, source: "built-in" }]
    expect(await ruleOf({ ...good, path: "/v1/other" }, loaded)).toBe("name_duplicate")
    expect(await ruleOf({ ...good, name: "other" }, loaded)).toBe("path_duplicate")
  })
  it("every rule is exercised by a case above (the list of rules is the contract)", () => {
    const exercised = new Set<string>([...cases.map(([r]) => r), "name_duplicate", "module_load_failed"])
    expect([...exercised].sort()).toEqual(Object.keys(PLUGIN_RULES).sort())
  })
  it("definePlugin keeps the value; the contract version is semver", () => {
    expect(definePlugin(good as any)).toBe(good)
    expect(PLUGIN_API_VERSION).toMatch(/^\d+\.\d+\.\d+$/)
  })
})

describe("loadPlugins", () => {
  it("loads a third-party module by path and reports a missing one by rule", async () => {
    const loaded = await Effect.runPromise(loadPlugins([], [fixturePlugin("series-stats")]))
    expect(loaded.map((l) => [l.plugin.name, l.source])).toEqual([["series-stats", fixturePlugin("series-stats")]])
    const missing = await Effect.runPromise(Effect.flip(loadPlugins([], ["./test/fixtures/plugins/does-not-exist.ts"])))
    expect(missing.rule).toBe("module_load_failed")
    expect(missing.message).toContain("does-not-exist.ts")
  })
})

describe("start-up", () => {
  it("a broken plugin stops start-up, naming the plugin and the rule, exit code ≠ 0", () => {
    const r = runServerToExit({ HCC_PLUGINS: fixturePlugin("broken-cost") })
    expect(r.status).not.toBe(0)
    expect(r.status).not.toBeNull()
    const failure = r.stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).find((l) => l.msg === "start-up failed")
    expect(failure.error).toContain('plugin "broken-cost"')
    expect(failure.error).toContain("cost_invalid")
    expect(r.stdout).not.toMatch(/"msg":"listening"/)
  })
  it.each([["HCC_POPULATION", "0"], ["HCC_POPULATION", String(MAX_PATIENTS + 1)], ["HCC_SEED", "-1"]])("%s=%s stops start-up naming the variable", (name, value) => {
    const r = runServerToExit({ [name]: value })
    expect(r.status).not.toBe(0)
    expect(r.stdout).toContain(name)
    expect(r.stdout).not.toMatch(/"msg":"listening"/)
  })
  it("a module that does not exist stops start-up with module_load_failed", () => {
    const r = runServerToExit({ HCC_PLUGINS: "./nowhere/plugin.ts" })
    expect(r.status).toBe(1)
    expect(r.stdout).toContain("module_load_failed")
  })
})
