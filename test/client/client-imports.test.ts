/**
 * The typed client (`./client`) is built from the plugins' contracts alone: importing it loads the
 * client, the contracts (paths, schemas, examples), the HTTP contract they make and effect — every
 * module it loads is checked against that list, so a new import that reaches a handler, the
 * dataset, the compute core or any other package fails here, whatever its name.
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/server.ts"

const REPORTER = join(ROOT, "test/fixtures/harness/report-modules.ts")

/** What the client may load, each with why it is part of the contract. */
const ALLOWED: ReadonlyArray<readonly [RegExp, string]> = [
  [/^src\/client\/index\.ts$/, "the client"],
  [/^plugins\/[a-z0-9-]+\/(contract\.ts|schema\.ts|view\.ts|example-answers\.json)$/, "a built-in plugin's contract, schemas, view (the chart, as data) and recorded answers"],
  [/^src\/plugin\/(contract|spec|axes|shapes|vocabularies|view)\.ts$/, "the plugin contract's contract-only entry (./plugin/contract) and what it re-exports"],
  [/^src\/plugin\/names\.ts$/, "the names of the decay rules and trajectory models, a response vocabulary"],
  [/^src\/plugin\/codeSystems\.ts$/, "the standard code notation a request may use (snomed:44054006)"],
  [/^src\/http\/(ApiContract|Problems|errorCatalog)\.ts$/, "the HTTP contract: groups, endpoints, problem schemas, error codes"],
  [/^src\/catalog\/CatalogSchema\.ts$/, "the catalog's, usage's and health answers' schemas"],
  [/^src\/auth\/CurrentPrincipal\.ts$/, "the key the Authorization middleware provides"]
]

/** The modules and packages a fresh process loads to import `entry`. */
const loadedBy = (entry: string) => {
  const r = spawnSync(process.execPath, ["--import", REPORTER, "--input-type=module", "-e", `await import(${JSON.stringify(join(ROOT, entry))})`], { cwd: ROOT, encoding: "utf8" })
  expect(r.status, r.stderr).toBe(0)
  return {
    modules: [...r.stderr.matchAll(/^module loaded: (.+)$/gm)].map((m) => m[1]!),
    packages: [...r.stderr.matchAll(/^package loaded: (.+)$/gm)].map((m) => m[1]!)
  }
}

describe("importing the client", () => {
  it("loads only the client, the contracts, the contracts' schemas and effect", () => {
    const { modules, packages } = loadedBy("src/client/index.ts")
    expect(modules).toContain("plugins/population/contract.ts")
    expect(modules.filter((m) => !ALLOWED.some(([pattern]) => pattern.test(m)))).toEqual([])
    expect(packages).toEqual(["effect"])
  })

  it("would catch a module past the contract: the stable plugin entry loads the concept maps and the dataset's key", () => {
    const { modules } = loadedBy("src/plugin/Plugin.ts")
    const outside = modules.filter((m) => !ALLOWED.some(([pattern]) => pattern.test(m)))
    expect(outside).toContain("src/health/ConceptMaps.ts")
    expect(outside).toContain("src/health/HealthData.ts")
  })

  it("the stable plugin entry reaches the PatientData key, never its implementation", () => {
    const { modules } = loadedBy("src/plugin/Plugin.ts")
    expect(modules).toContain("src/health/PatientData.ts")
    expect(modules.filter((m) => /Live\.ts$|^src\/(compute|db|http|formats|pipeline|synthetic)\//.test(m) || m.startsWith("src/kernels/") && m !== "src/kernels/thresholds.ts")).toEqual([])
  })
})
