/**
 * The typed client (`./client`): every built-in endpoint called with its documented example through
 * the Promise facade and the Effect client; problems reject typed; 429 and 503 are retried as
 * Retry-After asks, with one Idempotency-Key per call kept across its retries.
 */
import * as Effect from "effect/Effect"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { createClient, HccClient, HccProblemError, layer, retryAfterMs } from "../../src/client/index.ts"
import { viewSpec } from "../../src/plugin/view.ts"
import { readmeCalls } from "../support/datasets.ts"
import { fixtureDataDir, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

const example = (name: string) => builtins.find((p) => p.name === name)!.examples![0]!.request as any

describe("against the service", () => {
  let server: TestServer
  let token: string
  beforeAll(async () => {
    server = await startServer({ dataDir: fixtureDataDir(inject("fixtureDir")) })
    await waitReady(server)
    token = newAccount(server, { tier: "unlimited" }).token
  })
  afterAll(async () => {
    await server.stop()
  })

  it("calls every built-in endpoint with its documented example (Promise client)", async () => {
    const client = createClient({ baseUrl: server.url, token })
    expect(await client.healthz()).toEqual({ status: "ok", hcc_cost: 0 })
    expect((await client.readyz()).status).toBe("ready")
    expect((await client.catalog()).domains.length).toBe(7)
    expect((await client.usage()).tier).toBe("Unlimited")
    const answers = {
      clinical: await client.clinical(example("clinical")),
      "drug-outcomes": await client.drugOutcomes(example("drug-outcomes")),
      "risk-model": await client.riskModel(example("risk-model")),
      "device-outcomes": await client.deviceOutcomes(example("device-outcomes")),
      population: await client.population(example("population")),
      "one-health": await client.oneHealth(example("one-health")),
      temporal: await client.temporal(example("temporal"))
    }
    for (const [name, answer] of Object.entries(answers)) {
      expect(answer.hcc_cost, name).toBe(builtins.find((p) => p.name === name)!.hcc_cost)
    }
    // Typed fields, decoded: the temporal answer's rule list is there as the schema says.
    expect(Array.isArray(answers.temporal.decay_rules_triggered)).toBe(true)
  })

  it("the Effect client answers the same, as a layer", async () => {
    const program = Effect.gen(function*() {
      const client = yield* HccClient
      return yield* client.domains.population({ payload: example("population") })
    })
    const answer = await Effect.runPromise(program.pipe(Effect.provide(layer({ baseUrl: server.url, token }))))
    expect(answer.hcc_cost).toBe(builtins.find((p) => p.name === "population")!.hcc_cost)
  })

  it("a chart of an answer with withheld values names the rule and the catalog's threshold", async () => {
    const client = createClient({ baseUrl: server.url, token })
    // 13 patients: many monthly means rest on fewer than 11.
    const request = { cohort_definition: { age_range: "57-59", sex: "female", conditions: ["heart_failure"] }, analysis_type: "trend", granularity: "monthly" } as const
    const narrow = await client.population(request)
    expect(narrow.suppressed!.length).toBeGreaterThan(0)
    const spec = await client.view("/v1/population", request, narrow)
    expect((spec!["title"] as { subtitle: unknown }).subtitle).toEqual([`Withheld: ${narrow.suppressed!.length} values rest on fewer than 11 patients (the small-cell rule)`])
    // Withheld only in the view data (one-health's weeks, listed in view_data.suppressed): named too.
    const [, oneHealth] = readmeCalls().find(([p]) => p === "/v1/one-health")!
    const weekly = await (await fetch(`${server.url}/v1/one-health`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/vnd.hcc.view+json" },
      body: JSON.stringify(oneHealth)
    })).json()
    expect(weekly.suppressed).toBeUndefined()
    expect(weekly.view_data.suppressed.length).toBeGreaterThan(0)
    const weeklySpec = await client.view("/v1/one-health", oneHealth, weekly)
    expect((weeklySpec!["title"] as { subtitle: unknown }).subtitle).toEqual([`Withheld: ${weekly.view_data.suppressed.length} values rest on fewer than 11 patients (the small-cell rule)`])
    const wide = await client.population(example("population"))
    expect(wide.suppressed).toBeUndefined()
    expect((await client.view("/v1/population", example("population"), wide))!["title"]).not.toHaveProperty("subtitle")
  })

  it("problems reject with HccProblemError: status, code, request id", async () => {
    const anonymous = createClient({ baseUrl: server.url })
    const refused = await anonymous.catalog().then(() => undefined, (e: unknown) => e)
    expect(refused).toBeInstanceOf(HccProblemError)
    expect(refused).toMatchObject({ status: 401, code: "missing_token" })
    const client = createClient({ baseUrl: server.url, token })
    const bad = await client.drugOutcomes({ ...example("drug-outcomes"), drug: "no_such_drug" }).then(() => undefined, (e: unknown) => e)
    expect(bad).toBeInstanceOf(HccProblemError)
    expect((bad as HccProblemError).status).toBe(422)
    expect((bad as HccProblemError).code).toBe("unknown_drug")
    expect((bad as HccProblemError).requestId).toEqual(expect.any(String))
    // A body its schema refuses never leaves the client.
    const refusedLocally = await client.drugOutcomes({ ...example("drug-outcomes"), drug: "Not A Code" }).then(() => undefined, (e: unknown) => e)
    expect(String(refusedLocally)).toMatch(/snake_case/)
  })
})

/** A stand-in server that answers from a script, recording each request's method and headers. */
const scripted = async (answers: ReadonlyArray<{ readonly status: number; readonly headers?: Record<string, string>; readonly body: unknown }>) => {
  const seen: Array<{ method: string; headers: IncomingHttpHeaders; at: number }> = []
  let i = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      seen.push({ method: req.method ?? "", headers: req.headers, at: Date.now() })
      const a = answers[Math.min(i++, answers.length - 1)]!
      res.writeHead(a.status, { "content-type": a.status >= 400 ? "application/problem+json" : "application/json", ...a.headers })
      res.end(JSON.stringify(a.body))
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) }
}

const problem = (status: number, code: string, extra: Record<string, unknown> = {}) => ({
  type: "about:blank", title: "x", status, code, detail: code, request_id: "r", hcc_cost: 0, ...extra
})

describe("retries", () => {
  const temporalAnswer = builtins.find((p) => p.name === "temporal")!.examples![0]!.answer

  it("a 429 is retried after the Retry-After it names, with the same Idempotency-Key", async () => {
    const stub = await scripted([
      { status: 429, headers: { "retry-after": "1" }, body: problem(429, "rate_limited", { limit: "burst", retry_after_seconds: 1 }) },
      { status: 200, body: temporalAnswer }
    ])
    try {
      const client = createClient({ baseUrl: stub.url, token: "t" })
      const answer = await client.temporal(example("temporal"))
      expect(answer).toEqual(temporalAnswer)
      expect(stub.seen).toHaveLength(2)
      expect(stub.seen[1]!.at - stub.seen[0]!.at).toBeGreaterThanOrEqual(950)
      const keys = stub.seen.map((s) => s.headers["idempotency-key"])
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
      expect(keys[1]).toBe(keys[0])
      expect(stub.seen[0]!.headers.authorization).toBe("Bearer t")
      // A second call is a new request: a new key.
      await client.temporal(example("temporal"))
      expect(stub.seen[2]!.headers["idempotency-key"]).not.toBe(keys[0])
    } finally {
      await stub.close()
    }
  })

  it("a 503 without Retry-After is retried with backoff; GETs carry no Idempotency-Key", async () => {
    const stub = await scripted([
      { status: 503, body: problem(503, "unavailable") },
      { status: 503, body: problem(503, "unavailable") },
      { status: 200, body: { status: "ok", hcc_cost: 0 } }
    ])
    try {
      const answer = await createClient({ baseUrl: stub.url, backoffMs: 20 }).healthz()
      expect(answer).toEqual({ status: "ok", hcc_cost: 0 })
      expect(stub.seen).toHaveLength(3)
      expect(stub.seen.every((s) => s.headers["idempotency-key"] === undefined)).toBe(true)
    } finally {
      await stub.close()
    }
  })

  it("gives up after `retries`, and never waits longer than maxRetryWaitMs (a daily limit)", async () => {
    const stub = await scripted([{ status: 429, headers: { "retry-after": "3600" }, body: problem(429, "rate_limited", { limit: "daily", retry_after_seconds: 3600 }) }])
    try {
      const e = await createClient({ baseUrl: stub.url, token: "t" }).usage().then(() => undefined, (x: unknown) => x)
      expect(e).toBeInstanceOf(HccProblemError)
      expect((e as HccProblemError).problem).toMatchObject({ code: "rate_limited", limit: "daily" })
      expect(stub.seen).toHaveLength(1)
    } finally {
      await stub.close()
    }
    const always = await scripted([{ status: 503, body: problem(503, "unavailable", { checks: {} }) }])
    try {
      await expect(createClient({ baseUrl: always.url, retries: 2, backoffMs: 5 }).readyz()).rejects.toBeInstanceOf(HccProblemError)
      expect(always.seen).toHaveLength(3)
    } finally {
      await always.close()
    }
  })

  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(retryAfterMs("5")).toBe(5000)
    expect(retryAfterMs(new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), Date.UTC(2030, 0, 1))).toBe(10_000)
    expect(retryAfterMs("soon")).toBeUndefined()
    expect(retryAfterMs(undefined)).toBeUndefined()
  })
})

describe("views", () => {
  const population = builtins.find((p) => p.name === "population")!
  const thirdParty = {
    version: 1,
    data: { values: { from: "/request/values", rows: "values" } },
    spec: { data: { name: "values" }, mark: "bar", encoding: { x: { field: "index", type: "ordinal" }, y: { field: "value", type: "quantitative" } } }
  }

  it("gives a built-in answer's chart from the contract, and a third party's from the OpenAPI document, read once", async () => {
    const stub = await scripted([{ status: 200, body: { paths: { "/v1/series-chart": { post: { "x-hcc-view": thirdParty } } } } }])
    try {
      const client = createClient({ baseUrl: stub.url, token: "t" })
      const ex = population.examples![0]!
      const spec = await client.view("/v1/population", ex.request, ex.answer)
      expect(spec).toEqual(viewSpec(population.view!, ex.request, ex.answer))
      expect((spec!["datasets"] as Record<string, unknown>)["periods"]).toEqual((ex.answer as { periods: unknown }).periods)
      expect(stub.seen).toHaveLength(0)
      const drawn = await client.view("/v1/series-chart", { values: [4, 5] }, { count: 2 })
      expect(drawn!["datasets"]).toEqual({ values: [{ index: 0, value: 4 }, { index: 1, value: 5 }] })
      expect(await client.view("/v1/nowhere", {}, {})).toBeUndefined()
      expect(stub.seen.map((s) => s.method)).toEqual(["GET"])
    } finally {
      await stub.close()
    }
  })
})
