/**
 * The served OpenAPI document and the server agree, checked with a JSON Schema 2020-12 validator
 * (Ajv) against a live server, and the endpoints survive a bounded fuzz:
 * - requests generated from each plugin's request Schema are valid for the document, are never
 *   400 and never 5xx, and every answer validates against the document's schema for its status;
 * - requests made invalid (a wrong type, a missing required field, an unknown field, a constraint
 *   broken) are invalid for the document too and answered 400 naming the path;
 * - every error is problem+json with hcc_cost 0, and the ledger holds exactly one row per 2xx.
 * HCC_FUZZ_RUNS sets the generated requests per endpoint (default 2,000).
 */
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import builtins from "../../plugins/index.ts"
import type { Plugin } from "../../src/plugin/Plugin.ts"
import { ledgerOf } from "../support/db.ts"
import { call, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

const RUNS = Number(process.env.HCC_FUZZ_RUNS ?? 2000)

let server: TestServer
let account: { readonly accountId: string; readonly token: string }
let doc: Record<string, any>
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false })
const compiled = new Map<string, ValidateFunction>()

/** A validator for a schema of the document (its $refs resolve against the document's components). */
const validatorFor = (key: string, schema: Record<string, unknown>): ValidateFunction => {
  const known = compiled.get(key)
  if (known !== undefined) return known
  const v = ajv.compile({ ...schema, components: doc.components })
  compiled.set(key, v)
  return v
}

const operationOf = (plugin: Plugin) => doc.paths[plugin.path].post
const requestValidator = (plugin: Plugin) => validatorFor(`${plugin.path} request`, operationOf(plugin).requestBody.content["application/json"].schema)
const responseValidator = (plugin: Plugin, status: number) => {
  const response = operationOf(plugin).responses[String(status)]
  expect(response, `${plugin.path}: status ${status} is documented`).toBeDefined()
  const [media, content] = Object.entries(response.content as Record<string, { schema: Record<string, unknown> }>)[0]!
  return { media, validate: validatorFor(`${plugin.path} ${status}`, content.schema) }
}

let answered2xx = 0

/** Posts a body, checks the answer against the document, and returns status and body. */
const postChecked = async (plugin: Plugin, body: unknown) => {
  const res = await call(server, plugin.path, { token: account.token, body })
  const text = await res.text()
  const json = JSON.parse(text) as Record<string, any>
  expect(res.status, `${plugin.path} ${text}`).toBeLessThan(500)
  const { media, validate } = responseValidator(plugin, res.status)
  expect(res.headers.get("content-type")).toContain(media)
  expect(validate(json), `${plugin.path} ${res.status} answer against the document: ${ajv.errorsText(validate.errors)}`).toBe(true)
  if (res.status >= 400) {
    expect(json.hcc_cost).toBe(0)
    expect(typeof json.code).toBe("string")
    expect(json.request_id).toBe(res.headers.get("x-request-id"))
  } else answered2xx++
  return { status: res.status, body: json }
}

beforeAll(async () => {
  server = await startServer()
  await waitReady(server)
  account = newAccount(server, { tier: "unlimited", burstLimit: 1_000_000_000 })
  doc = await (await call(server, "/v1/openapi.json", { token: null })).json()
})
afterAll(async () => {
  await server.stop()
})

describe.each(builtins.map((p) => [p.name, p] as const))("%s", (_, plugin) => {
  const encode = Schema.encodeUnknownSync(plugin.request as unknown as Schema.Codec<unknown, unknown>)
  const samples = () =>
    Effect.runSync(Arbitrary.sampleEffect(Arbitrary.schema(plugin.request as unknown as Schema.Codec<unknown, unknown>), { count: RUNS, seed: plugin.name }))
      .map((value) => JSON.parse(JSON.stringify(encode(value))) as Record<string, unknown>)

  it(`generated valid requests (${RUNS}): valid for the document, never 400, never 5xx, answers valid for the document`, async () => {
    const validate = requestValidator(plugin)
    const bodies = samples()
    for (let i = 0; i < bodies.length; i += 8) {
      await Promise.all(bodies.slice(i, i + 8).map(async (body) => {
        expect(validate(body), `request ${JSON.stringify(body)} against the document: ${ajv.errorsText(validate.errors)}`).toBe(true)
        const { body: answer, status } = await postChecked(plugin, body)
        expect(status, `${JSON.stringify(body)} → ${JSON.stringify(answer)}`).not.toBe(400)
      }))
    }
  })

  it("requests made invalid are invalid for the document and answered 400 naming the path", async () => {
    const validate = requestValidator(plugin)
    const schema = operationOf(plugin).requestBody.content["application/json"].schema
    const resolved: Record<string, any> = schema.$ref === undefined ? schema : doc.components.schemas[String(schema.$ref).split("/").pop()!]
    const base = samples()[0]!
    const broken: Array<readonly [string, Record<string, unknown>]> = [["/zz_unknown", { ...base, zz_unknown: 1 }]]
    for (const [name, property] of Object.entries(resolved.properties as Record<string, Record<string, unknown>>)) {
      const wrongType = property.type === "string" || property.$ref !== undefined || property.anyOf !== undefined ? { not: "this" } : "not this"
      broken.push([`/${name}`, { ...base, [name]: wrongType }])
      if ((resolved.required ?? []).includes(name)) {
        const { [name]: _, ...rest } = base
        broken.push([`/${name}`, rest])
      }
    }
    for (const [path, body] of broken) {
      expect(validate(body), `${plugin.path} ${JSON.stringify(body)} should be invalid for the document`).toBe(false)
      const { body: answer, status } = await postChecked(plugin, body)
      expect(status, `${JSON.stringify(body)} → ${JSON.stringify(answer)}`).toBe(400)
      const paths = (answer.errors ?? []).map((e: { path: string }) => e.path)
      expect(paths.some((p: string) => p === path || p.startsWith(`${path}/`)), `${path} in ${JSON.stringify(paths)}`).toBe(true)
    }
  })
})

describe("values the schema and the document both refuse", () => {
  it.each([
    ["/v1/clinical", { query: "" }, "/query"],
    ["/v1/clinical", { query: "   " }, "/query"],
    ["/v1/temporal", { patient_axes: {} }, "/patient_axes"],
    ["/v1/drug-outcomes", { drug: "metformin", axes_filter: ["TA", "TA"] }, "/axes_filter"],
    ["/v1/population", { cohort_definition: { conditions: [""] } }, "/cohort_definition/conditions/0"]
  ])("%s %j: refused with 400 at %s, and the document refuses it too", async (path, body, where) => {
    const plugin = builtins.find((p) => p.path === path)!
    expect(requestValidator(plugin)(body)).toBe(false)
    const { body: answer, status } = await postChecked(plugin, body)
    expect(status).toBe(400)
    expect(answer.errors.map((e: { path: string }) => e.path)).toContain(where)
  })
})

describe("the ledger", () => {
  it("holds exactly one row per 2xx answered above", async () => {
    expect(answered2xx).toBeGreaterThan(0)
    expect((await ledgerOf(server, account.accountId)).rows).toHaveLength(answered2xx)
  })
})
