/**
 * The installable package, used as its users use it: `npm pack` in this checkout, the tarball
 * installed into a project in the system's temp folder with no access to these sources, and there:
 *
 * - a third-party plugin package (the series-stats fixture, packed as a package made by
 *   `hcc plugin new`, importing only `hcc-medical-intelligence/plugin`) type-checks, installs,
 *   loads through HCC_PLUGINS by its package name and answers over HTTP;
 * - `./core` loads the WASM and runs a kernel; `./client` calls every built-in endpoint with its
 *   documented example; a consumer's TypeScript using them type-checks;
 * - `hcc plugin new demo` writes a package whose own generated test passes;
 * - nothing but the four entries is importable, and no TypeScript source ships.
 */
import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { fixtureDataDir, ROOT } from "../support/server.ts"

const NODE_BIN = dirname(process.execPath)
/** npm and node as the checkout's scripts see them (the pinned Node first on the PATH). */
const env = { ...process.env, PATH: `${NODE_BIN}:${join(ROOT, "node_modules/.bin")}:${process.env.PATH ?? ""}`, npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" }
const run = (cmd: string, args: ReadonlyArray<string>, cwd: string, extra: Record<string, string> = {}) =>
  execFileSync(cmd, args, { cwd, env: { ...env, ...extra }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 300_000 })
const TSC = join(ROOT, "node_modules/typescript/bin/tsc")
/** `npm pack --json`'s answer: the JSON after whatever the pack scripts printed. */
const packed = (stdout: string): string => {
  const start = stdout.search(/^\[/m)
  return (JSON.parse(stdout.slice(start)) as Array<{ filename: string }>)[0]!.filename
}

let work: string
let project: string
let tarball: string

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "hcc-pack-"))
  project = join(work, "project")
  mkdirSync(project)
  // 1. Pack (prepack compiles dist/), as a publisher would.
  tarball = join(work, packed(run("npm", ["pack", "--json", "--pack-destination", work], ROOT)))
  // 2. A user's project: the tarball, effect (the peer), TypeScript for their own code.
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "user-project", private: true, type: "module" }, null, 2))
  run("npm", ["install", "--prefer-offline", tarball, "effect@4.1.0", "typescript@5.9.3", "@types/node@24.19.2"], project)
}, 300_000)

afterAll(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

describe("the packed package", () => {
  it("ships compiled JavaScript and declarations, no TypeScript source, and only its six entries are importable", () => {
    const installed = join(project, "node_modules/hcc-medical-intelligence")
    const all = (dir: string): Array<string> => readdirSync(dir, { withFileTypes: true }).flatMap((d) => d.isDirectory() ? all(join(dir, d.name)) : [join(dir, d.name)])
    const files = all(installed)
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([])
    for (const entry of ["plugin/Plugin", "plugin/contract", "plugin/experimental", "core/index", "client/index", "testing/index"]) {
      expect(files).toContain(join(installed, `dist/src/${entry}.js`))
      expect(files).toContain(join(installed, `dist/src/${entry}.d.ts`))
    }
    const pkg = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as Record<string, any>
    expect(Object.keys(pkg.exports)).toEqual(["./plugin", "./plugin/contract", "./plugin/experimental", "./core", "./client", "./testing", "./package.json"])
    expect(pkg.peerDependencies).toEqual({ effect: "~4.1.0" })
    expect(pkg.scripts.postinstall).toBeUndefined()
    writeFileSync(join(project, "deep.mjs"), `try { await import("hcc-medical-intelligence/dist/src/main.js"); console.log("imported") } catch (e) { console.log(e.code) }`)
    expect(run("node", ["deep.mjs"], project).trim()).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED")
    expect(run(join(project, "node_modules/.bin/hcc"), ["--version"], project)).toContain(pkg.version)
  })

  it("a third-party plugin package type-checks, installs, loads through HCC_PLUGINS and answers; ./core and ./client work from the user's code", async () => {
    // The series-stats fixture as a package of its own, made by the scaffold, importing only the public entry.
    const pluginDir = join(project, "plugin-src")
    run(join(project, "node_modules/.bin/hcc"), ["plugin", "new", "series-stats", "--dir", pluginDir], project)
    const source = readFileSync(join(ROOT, "test/fixtures/plugins/series-stats.ts"), "utf8").replace("../../../src/plugin/Plugin.ts", "hcc-medical-intelligence/plugin")
    expect(source).not.toContain("src/")
    writeFileSync(join(pluginDir, "src/index.ts"), source)
    // The build type-checks what it compiles (tsc fails on a type error); the scaffold's own test
    // file is checked in the `hcc plugin new demo` case below.
    run("node", [TSC, "-p", join(pluginDir, "tsconfig.build.json")], project)
    run("npm", ["install", "--prefer-offline", join(work, packed(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", work], pluginDir)))], project)
    expect(existsSync(join(project, "node_modules/hcc-plugin-series-stats/dist/index.js"))).toBe(true)

    // The user's own code against ./core and ./client, type-checked strictly, then run.
    writeFileSync(join(project, "examples.json"), JSON.stringify(Object.fromEntries(builtins.map((p) => [p.name, p.examples![0]!.request]))))
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({
      compilerOptions: { target: "ES2024", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, allowImportingTsExtensions: true, resolveJsonModule: true, skipLibCheck: false, types: ["node"] },
      include: ["check.ts"]
    }))
    writeFileSync(join(project, "check.ts"), `
import { readFileSync } from "node:fs"
import { loadCore, twins, KernelError } from "hcc-medical-intelligence/core"
import { createClient, HccProblemError } from "hcc-medical-intelligence/client"
import seriesStats from "hcc-plugin-series-stats"

const core = loadCore()
const data = Float64Array.from({ length: 3 * 4 * 12 }, (_, i) => Math.sin(i / 3) + (i % 5))
const wasm = core.correlationMatrix(data, 3, 4, 12)
const twin = twins.correlationMatrix(data, 3, 4, 12)
let shapeError = ""
try { core.fitTrajectories(new Float64Array(3), 2, 2, 1) } catch (e) { if (e instanceof KernelError) shapeError = e.kernel }

const examples = JSON.parse(readFileSync("examples.json", "utf8"))
const client = createClient({ baseUrl: process.argv[2]!, token: process.argv[3]! })
const answers = {
  clinical: await client.clinical(examples["clinical"]),
  "drug-outcomes": await client.drugOutcomes(examples["drug-outcomes"]),
  "risk-model": await client.riskModel(examples["risk-model"]),
  "device-outcomes": await client.deviceOutcomes(examples["device-outcomes"]),
  population: await client.population(examples["population"]),
  "one-health": await client.oneHealth(examples["one-health"]),
  temporal: await client.temporal(examples["temporal"])
}
const catalog = await client.catalog()
let problem = ""
try { await createClient({ baseUrl: process.argv[2]! }).usage() } catch (e) { if (e instanceof HccProblemError) problem = e.code }
const plugin = await fetch(process.argv[2]! + seriesStats.path, {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer " + process.argv[3] },
  body: JSON.stringify({ values: [2, 4, 4, 4, 5] })
})
console.log(JSON.stringify({
  kernel: { wasm: Array.from(wasm.pearson), twin: Array.from(twin.pearson), shapeError },
  costs: Object.fromEntries(Object.entries(answers).map(([k, v]) => [k, v.hcc_cost])),
  domains: catalog.domains,
  problem,
  plugin: { status: plugin.status, body: await plugin.json() }
}))
`)
    run("node", [TSC, "-p", project], project)

    const dataDir = fixtureDataDir(inject("fixtureDir"))
    const server = spawn(join(project, "node_modules/.bin/hcc"), ["serve"], {
      cwd: project,
      env: { ...env, PORT: "0", HOST: "127.0.0.1", HCC_DATA_DIR: dataDir, HCC_PLUGINS: "hcc-plugin-series-stats", HCC_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    server.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
    try {
      const lines = () => out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>)
      const deadline = Date.now() + 60_000
      let url = ""
      while (url === "") {
        const listening = lines().find((l) => l.msg === "listening")
        if (listening !== undefined) url = `http://127.0.0.1:${String(listening.port)}`
        else if (Date.now() > deadline || server.exitCode !== null) throw new Error(`the installed service did not start:\n${out}`)
        else await new Promise((r) => setTimeout(r, 50))
      }
      while ((await fetch(`${url}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 100))
      expect(lines().find((l) => l.msg === "plugin loaded" && l.plugin === "series-stats")).toMatchObject({ source: "hcc-plugin-series-stats" })
      const token = readFileSync(join(dataDir, "demo.token"), "utf8").trim()
      // A failed check names what the service logged at error level (an internal error's cause is logged under its request id).
      const checked = (() => {
        try {
          return run("node", ["check.ts", url, token], project)
        } catch (e) {
          const logged = lines().filter((l) => l.level === "error" || l.level === "fatal").map((l) => JSON.stringify(l))
          throw new Error(`${e instanceof Error ? e.message : String(e)}\nthe service logged:\n${logged.join("\n")}`)
        }
      })()
      const result = JSON.parse(checked) as Record<string, any>
      for (let i = 0; i < result.kernel.wasm.length; i++) expect(result.kernel.wasm[i]).toBeCloseTo(result.kernel.twin[i], 9)
      expect(result.kernel.wasm.length).toBe(18)
      expect(result.kernel.shapeError).toBe("fitTrajectories")
      expect(result.costs).toEqual(Object.fromEntries(builtins.map((p) => [p.name, p.hcc_cost])))
      expect(result.domains).toContain("series-stats")
      expect(result.problem).toBe("missing_token")
      expect(result.plugin).toEqual({ status: 200, body: expect.objectContaining({ count: 5, mean: 3.8, min: 2, max: 5, hcc_cost: 1.25 }) })
    } finally {
      server.kill("SIGTERM")
      await new Promise((r) => (server.exitCode === null ? server.on("exit", r) : r(undefined)))
    }
  }, 300_000)

  it("`hcc plugin new demo` writes a package that type-checks and passes its own generated test", () => {
    const demo = join(project, "demo")
    const made = JSON.parse(run(join(project, "node_modules/.bin/hcc"), ["plugin", "new", "demo", "--dir", demo, "--json"], project)) as { files: ReadonlyArray<string> }
    expect(made.files).toEqual(expect.arrayContaining(["package.json", "src/index.ts", "test/plugin.test.ts"]))
    const pkg = JSON.parse(readFileSync(join(demo, "package.json"), "utf8")) as Record<string, any>
    expect(pkg.peerDependencies).toEqual({ "hcc-medical-intelligence": "~0.4.0", effect: "~4.1.0" })
    run("node", [TSC, "--noEmit", "-p", demo], project)
    const test = run("node", ["--test", "test/**/*.test.ts"], demo)
    expect(test).toMatch(/(ℹ|#) pass 1\b/)
    expect(test).toMatch(/(ℹ|#) fail 0\b/)
  }, 300_000)
})
