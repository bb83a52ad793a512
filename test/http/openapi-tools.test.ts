/**
 * The served OpenAPI document as tools nobody here wrote take it:
 * - `redocly lint` with the recommended ruleset (redocly.yaml: two rules off, each justified)
 *   reports no error and no warning;
 * - openapi-typescript generates types from it, and a typed openapi-fetch client that calls every
 *   endpoint (each plugin with its documented example) type-checks under tsc --strict and runs
 *   against a live server, every call answered 200.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import openapiTS, { astToString } from "openapi-typescript"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { call, ROOT, startServer, type TestServer, waitReady } from "../support/server.ts"

const WORK = join(ROOT, "build", "client-check")
let server: TestServer
let doc: Record<string, unknown>

beforeAll(async () => {
  // Large enough for every example (drug-outcomes asks for at least 500 patients on the drug).
  server = await startServer({ env: { HCC_POPULATION: "20000" } })
  await waitReady(server)
  doc = await (await call(server, "/v1/openapi.json", { token: null })).json()
  mkdirSync(WORK, { recursive: true })
  writeFileSync(join(WORK, "openapi.json"), JSON.stringify(doc, null, 2))
})
afterAll(async () => {
  await server.stop()
})

describe("Redocly", () => {
  it("lints the document with the recommended ruleset: valid, no warnings", () => {
    const r = spawnSync(join(ROOT, "node_modules", ".bin", "redocly"), ["lint", join(WORK, "openapi.json"), "--config", join(ROOT, "redocly.yaml"), "--format", "stylish"], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" }
    })
    const out = `${r.stdout}\n${r.stderr}`
    expect(r.status, out).toBe(0)
    expect(out).toContain("Your API description is valid")
    expect(out, out).not.toMatch(/warning/i)
  })
})

describe("openapi-typescript + openapi-fetch", () => {
  it("generated types type-check a client calling every endpoint, and the client runs against the server", async () => {
    writeFileSync(join(WORK, "schema.d.ts"), astToString(await openapiTS(doc as never)))
    const calls = builtins.map((p) => {
      const example = p.examples?.[0]
      expect(example, `${p.name} has a documented example`).toBeDefined()
      return `  {
    const { data, error, response } = await client.POST(${JSON.stringify(p.path)}, { body: ${JSON.stringify(example!.request)} })
    if (error !== undefined || data === undefined) throw new Error(${JSON.stringify(p.path)} + " " + response.status + " " + JSON.stringify(error))
    const cost: number = data.hcc_cost
    answers.push([${JSON.stringify(p.path)}, response.status, cost])
  }`
    })
    writeFileSync(join(WORK, "client.ts"), `import createClient from "openapi-fetch"
import type { paths } from "./schema.d.ts"

const client = createClient<paths>({ baseUrl: process.env.BASE_URL!, headers: { authorization: \`Bearer \${process.env.TOKEN}\` } })
const answers: Array<[string, number, number]> = []
{
  const { data, error } = await client.GET("/v1/catalog")
  if (error !== undefined || data === undefined) throw new Error("catalog")
  const axes: ReadonlyArray<string> = data.axes
  answers.push(["/v1/catalog", axes.length, data.hcc_cost])
}
{
  const { data } = await client.GET("/v1/usage")
  answers.push(["/v1/usage", data?.queries_today ?? -1, data?.hcc_cost ?? -1])
}
${calls.join("\n")}
console.log(JSON.stringify(answers))
`)
    const tsc = spawnSync(join(ROOT, "node_modules", ".bin", "tsc"), [
      "--noEmit", "--strict", "--exactOptionalPropertyTypes", "--target", "es2022", "--module", "nodenext", "--moduleResolution", "nodenext",
      "--allowImportingTsExtensions", "--skipLibCheck", join(WORK, "client.ts")
    ], { cwd: ROOT, encoding: "utf8" })
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0)
    const run = spawnSync(process.execPath, [join(WORK, "client.ts")], {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, BASE_URL: server.url, TOKEN: server.demoToken }
    })
    expect(run.status, run.stderr).toBe(0)
    const answers = JSON.parse(run.stdout) as Array<[string, number, number]>
    expect(answers.map((a) => a[0])).toEqual(["/v1/catalog", "/v1/usage", ...builtins.map((p) => p.path)])
    for (const [path, , cost] of answers.slice(2)) expect(cost, path).toBe(builtins.find((p) => p.path === path)!.hcc_cost)
  })
})
