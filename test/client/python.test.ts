/**
 * The Python client (clients/python): its own tests run with the machine's python3 and standard
 * library against a real server; its generated module is what the generator makes of the current
 * OpenAPI document; it installs into a fresh virtual environment with nothing else, and the first
 * cell of docs/client-python.md runs there.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { builtinDocument, GENERATED_PATH, generatePython } from "../../scripts/python-client.ts"
import { chartSpec } from "../../src/plugin/view.ts"
import { fixtureDataDir, fixturePlugin, newAccount, ROOT, startServer, type TestServer, waitReady } from "../support/server.ts"

const PACKAGE = join(ROOT, "clients/python")

let server: TestServer
beforeAll(async () => {
  server = await startServer({
    dataDir: fixtureDataDir(inject("fixtureDir")),
    env: { HCC_PLUGINS: ["slow-echo", "defect", "prepare-fails"].map(fixturePlugin).join(",") }
  })
  await waitReady(server)
}, 180_000)
afterAll(async () => {
  await server.stop()
})

const python = (args: ReadonlyArray<string>, env: Record<string, string> = {}, python3 = "python3") =>
  spawnSync(python3, args, { cwd: ROOT, encoding: "utf8", env: { ...process.env, ...env }, timeout: 300_000 })

describe("the Python client", () => {
  it("passes its tests (python3 -m unittest, standard library only) against the server", () => {
    const target = { dataDir: server.dataDir }
    const ledger = newAccount(target, { tier: "professional" })
    const r = python(["-m", "unittest", "discover", "-s", "clients/python/tests", "-v"], {
      PYTHONPATH: join(PACKAGE, "src"),
      PYTHONDONTWRITEBYTECODE: "1",
      HCC_BASE_URL: server.url,
      HCC_TOKEN: newAccount(target, { tier: "unlimited" }).token,
      HCC_TEST_DAILY_TOKEN: newAccount(target, { tier: "starter", dailyLimit: 1 }).token,
      HCC_TEST_LEDGER_ACCOUNT: ledger.accountId,
      HCC_TEST_LEDGER_TOKEN: ledger.token,
      HCC_TEST_DB: join(server.dataDir, "hcc.db")
    })
    expect(r.stderr, r.stdout).toMatch(/\nOK\n?$/)
    expect(r.status).toBe(0)
    const ran = Number(/Ran (\d+) tests/.exec(r.stderr)?.[1])
    expect(ran).toBeGreaterThanOrEqual(22)
  }, 300_000)

  it("makes each built-in view's chart exactly as the service's view code does (its twin in Python)", () => {
    const cases = builtins.flatMap((p) => (p.view === undefined ? [] : (p.examples ?? []).map((ex) => ({ path: p.path, view: p.view, request: ex.request, answer: ex.answer }))))
    expect(cases.length).toBeGreaterThanOrEqual(7)
    // Withheld values and empty tables too: a null mean, an empty series.
    const population = cases.find((c) => c.path === "/v1/population")!
    const withheld = structuredClone(population.answer) as { periods: Array<Record<string, unknown>> }
    withheld.periods[0]!["avg_NM"] = null
    // Values written into descriptions and titles: formats at their edges (ties, negatives, zero,
    // grouping, per cent), withheld and absent values, the withheld line with and without a threshold.
    const numbers = [0.125, -0.125, 2.5, -0.001, 0, 1234567.891, 0.01385, 1e-7, 5, 7.0000001, true, "text", [1, 2], { a: 1 }]
    const described = {
      path: "/v1/described",
      view: {
        version: 1 as const,
        data: {},
        spec: {
          description: numbers.map((_, i) => `{/answer/v/${i}} {/answer/v/${i}|.2} {/answer/v/${i}|,.1} {/answer/v/${i}|.1%} {/answer/v/${i}|,}`).join("; ") + " {/answer/none} {/request/x?fallback} {/answer/gone|.2}",
          title: { text: "Title {/request/x?fallback}", subtitle: "kept" },
          encoding: { x: { field: "x", type: "quantitative", title: "x ({/answer/v/5|,.2})" } },
          mark: "point"
        }
      },
      request: {},
      answer: { v: numbers, none: null, suppressed: ["/none"], view_data: { suppressed: ["/view_data/a", "/view_data/b"] } }
    }
    cases.push({ ...population, answer: withheld }, { ...population, answer: { hcc_cost: 10 } }, { ...population, answer: { ...withheld, suppressed: ["/periods/0/avg_NM"] } }, described)
    const script = [
      "import json, sys",
      "from hcc_client._view import view_spec",
      "cases = json.load(sys.stdin)",
      "print(json.dumps([view_spec(c['view'], c['request'], c['answer'], c.get('min')) for c in cases]))"
    ].join("\n")
    const input = cases.map((c, i) => ({ ...c, min: i % 2 === 0 ? 11 : undefined }))
    const r = spawnSync("python3", ["-c", script], { input: JSON.stringify(input), encoding: "utf8", env: { ...process.env, PYTHONPATH: join(PACKAGE, "src"), PYTHONDONTWRITEBYTECODE: "1" } })
    expect(r.status, r.stderr).toBe(0)
    expect(JSON.parse(r.stdout)).toEqual(input.map((c) => chartSpec(c.view!, c.request, c.answer, c.min)))
  })

  it("its generated module is what the generator makes of the current OpenAPI document", () => {
    expect(readFileSync(GENERATED_PATH, "utf8"), "run npm run client:python").toBe(generatePython(builtinDocument()))
  })

  it("pip installs it into a fresh virtual environment with nothing else, and the guide's first cell runs there", () => {
    const venv = join(mkdtempSync(join(tmpdir(), "hcc-venv-")), "env")
    expect(python(["-m", "venv", venv]).status).toBe(0)
    const bin = join(venv, "bin")
    const before = new Set(installed(bin))
    // No index: the package's own build backend needs nothing downloaded.
    const pip = spawnSync(join(bin, "pip"), ["install", "--no-index", PACKAGE], { encoding: "utf8", timeout: 300_000 })
    expect(pip.status, pip.stderr).toBe(0)
    expect(installed(bin).filter((p) => !before.has(p))).toEqual(["hcc-client"])
    const guide = readFileSync(join(ROOT, "docs/client-python.md"), "utf8")
    const first = /```python\n([\s\S]*?)```/.exec(guide)![1]!
    const token = newAccount({ dataDir: server.dataDir }, { tier: "unlimited" }).token
    const run = python(["-c", first], { HCC_BASE_URL: server.url, HCC_TOKEN: token }, join(bin, "python"))
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(/\d/)
  }, 300_000)
})

/** The distributions installed in a virtual environment. */
const installed = (bin: string): Array<string> => {
  const r = spawnSync(join(bin, "pip"), ["list", "--format=json", "--disable-pip-version-check"], { encoding: "utf8" })
  return (JSON.parse(r.stdout) as Array<{ name: string }>).map((p) => p.name.toLowerCase()).sort()
}
