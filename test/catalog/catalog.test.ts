/**
 * The catalog, the OpenAPI document and the docs page are built from what the registry loaded:
 * a third-party plugin appears in all three and answers with its declared hcc_cost.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import pkg from "../../package.json" with { type: "json" }
import builtins from "../../plugins/index.ts"
import { call, fixturePlugin, ROOT, startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer

beforeAll(async () => {
  server = await startServer({ env: { HCC_PLUGINS: fixturePlugin("series-stats"), HCC_POPULATION: "5000" } })
  await waitReady(server)
})
afterAll(async () => {
  await server.stop()
})

/** The codes the data issue requires in each vocabulary. */
const REQUIRED_VOCABULARY: Record<string, Array<string>> = {
  condition: ["type_2_diabetes", "hypertension", "heart_failure", "copd", "chronic_kidney_disease", "depression", "obesity", "asthma"],
  drug: ["metformin", "lisinopril", "atorvastatin", "sertraline", "warfarin", "aspirin", "ibuprofen", "amlodipine", "levothyroxine", "omeprazole"],
  device: ["insulin_pump", "continuous_glucose_monitor", "cardiac_pacemaker", "knee_implant", "hip_implant", "cochlear_implant"],
  device_metric: ["complication_rate", "revision_rate", "infection_rate", "device_failure_rate", "patient_satisfaction", "pain_reduction", "quality_of_life"],
  species: ["poultry", "cattle", "swine", "dogs", "horses", "wild_birds", "bats", "deer"],
  zoonotic_condition: ["avian_influenza", "west_nile_virus", "lyme_disease", "rabies", "leptospirosis", "brucellosis", "salmonellosis"],
  region: ["southeast_asia", "northeast_us"]
}

describe("GET /v1/catalog", () => {
  it("has the spec's fields, hcc_cost 0, the package version and the loaded domains", async () => {
    const res = await call(server, "/v1/catalog")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^application\/json/)
    const body = (await res.json()) as Record<string, any>
    expect(body.axes).toEqual(["PO", "NM", "ER", "SC", "RS", "ES", "TA", "PV"])
    expect(body.query_types).toEqual(["structured", "natural_language", "sql_like"])
    expect(body.supported_time_ranges).toEqual(["30_days", "90_days", "6_months", "1_year", "all"])
    expect(body.version).toBe(pkg.version)
    expect(body.version).toMatch(/^\d+\.\d+\.\d+$/)
    expect(body.hcc_cost).toBe(0)
    expect(body.domains).toEqual([...builtins.map((p) => p.name), "series-stats"])
    expect(body.endpoints).toContainEqual({
      domain: "series-stats",
      method: "POST",
      path: "/v1/series-stats",
      hcc_cost: 1.25,
      summary: "Count, mean, sample SD, min and max of a numeric series",
      experimental: false
    })
    expect(body.vocabularies.stat).toEqual(["count", "mean", "sd", "min", "max"])
    // The dataset's vocabularies and the population endpoint's own.
    expect(body.vocabularies.analysis_type).toEqual(["trend"])
    expect(body.vocabularies.granularity).toEqual(["monthly", "quarterly", "yearly"])
    for (const [kind, codes] of Object.entries(REQUIRED_VOCABULARY)) expect(body.vocabularies[kind]).toEqual(expect.arrayContaining(codes))
    expect(body.vocabularies.region.length).toBeGreaterThanOrEqual(6)
    expect(body.axis_details[1]).toEqual({ code: "NM", name: "Nutritional & Metabolic" })
    expect(body.axis_score_range).toEqual([0, 10])
    expect(body.tiers).toEqual([
      { name: "Starter", daily_limit: 100, burst_per_minute: 10 },
      { name: "Professional", daily_limit: 1000, burst_per_minute: 50 },
      { name: "Enterprise", daily_limit: 10000, burst_per_minute: 200 },
      { name: "Unlimited", daily_limit: null, burst_per_minute: 1000 }
    ])
  })
  it("says what the answers are based on: the dataset's as_of, source, size and generator, also as headers of every data answer", async () => {
    const body = (await (await call(server, "/v1/catalog")).json()) as Record<string, any>
    expect(body.dataset).toMatchObject({ as_of: "2026-09-30", source: "synthetic", patients: 5000, generator_version: "1", format: null })
    // Every axis of the generated data is scored for (nearly) everyone.
    for (const axis of body.axes) expect(body.dataset.axis_coverage[axis]).toBeGreaterThan(0.9)
    // Vocabulary entries carry their standard codes (from the shipped concept maps).
    expect(body.standard_codes.condition.type_2_diabetes).toBe("snomed:44054006")
    expect(body.standard_codes.drug.metformin).toBe("rxnorm:6809")
    expect(body.standard_codes.device.knee_implant).toBe("snomed:609588000")
    const answer = await call(server, "/v1/temporal", { body: { patient_axes: { PO: [6, 5.5, 5] } } })
    expect(answer.status).toBe(200)
    expect(answer.headers.get("hcc-dataset-as-of")).toBe("2026-09-30")
    expect(answer.headers.get("hcc-dataset-source")).toBe("synthetic")
    const doc = (await (await call(server, "/v1/openapi.json", { token: null })).json()) as Record<string, any>
    expect(doc.info.description).toContain("Not medical advice")
    expect(doc.info.description).toContain("The default dataset is synthetic")
    expect(readFileSync(join(ROOT, "README.md"), "utf8")).toContain("**Not medical advice.**")
  })
  it("requires a token", async () => {
    expect((await call(server, "/v1/catalog", { token: null })).status).toBe(401)
  })
})

describe("third-party plugin", () => {
  it("answers with its declared hcc_cost and exactly its fields", async () => {
    const res = await call(server, "/v1/series-stats", { body: { values: [2, 4, 4, 4, 5, 5, 7, 9] } })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ label: null, count: 8, mean: 5, sd: Math.sqrt(32 / 7), min: 2, max: 9, hcc_cost: 1.25 })
  })
  it("is in the OpenAPI 3.1 document with its schema, example, security and problem responses", async () => {
    const res = await call(server, "/v1/openapi.json", { token: null })
    expect(res.status).toBe(200)
    const doc = (await res.json()) as Record<string, any>
    expect(doc.openapi).toMatch(/^3\.1\./)
    expect(doc.info.version).toBe(pkg.version)
    const op = doc.paths["/v1/series-stats"].post
    expect(op.summary).toBe("Count, mean, sample SD, min and max of a numeric series")
    expect(op.requestBody.content["application/json"].examples.sample.value).toEqual({ values: [2, 4, 4, 4, 5], label: "sample" })
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(["200", "400", "401", "413", "415", "422", "429", "500", "503"]))
    expect(op.responses["422"].content).toHaveProperty(["application/problem+json"])
    expect(op.security).toEqual([{ bearer: [] }])
    for (const path of ["/v1/catalog", "/v1/usage", "/healthz", "/readyz"]) expect(doc.paths).toHaveProperty([path])
    expect(doc.components.securitySchemes.bearer.type).toBe("http")
    expect(String(doc.components.securitySchemes.bearer.scheme).toLowerCase()).toBe("bearer")
  })
})

describe("the OpenAPI document as a generator expects it", () => {
  it("servers, method-like operationIds, plain component names, finite numbers, no fake integer bounds, hcc_cost a number, every response header, the codes of each error", async () => {
    const doc = (await (await call(server, "/v1/openapi.json", { token: null })).json()) as Record<string, any>
    expect(doc.servers).toEqual([{ url: "/", description: "The server this document was fetched from" }])
    const ids = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) => Object.entries(ops).map(([m, op]) => [`${m} ${path}`, op.operationId]))
    expect(Object.fromEntries(ids)).toMatchObject({ "get /v1/catalog": "getCatalog", "post /v1/drug-outcomes": "postDrugOutcomes", "post /v1/series-stats": "postSeriesStats", "get /healthz": "getHealthz" })
    const text = JSON.stringify(doc)
    expect(Object.keys(doc.components.schemas).filter((k) => k.endsWith("Encoded"))).toEqual([])
    expect(text).not.toContain("Encoded\"")
    expect(text).not.toMatch(/"(-?Infinity|NaN)"/)
    expect(text).not.toContain("9007199254740991")
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(ops)) {
        for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
          expect(response.headers?.["X-Request-Id"], `${method} ${path} ${status}`).toBeDefined()
          if (status === "429" || status === "503") expect(response.headers["Retry-After"]).toBeDefined()
          if (Number(status) >= 400 && status !== "401") expect(response.description, `${method} ${path} ${status}`).toMatch(/Codes: `/)
        }
      }
    }
    const ok = doc.paths["/v1/series-stats"].post.responses["200"]
    expect(ok.content["application/json"].schema.properties.hcc_cost).toEqual({ type: "number", description: "HCC credits this call cost (1.25 here)" })
    expect(ok.headers.RateLimit).toBeDefined()
    expect(ok.headers["HCC-Dataset-Source"]).toBeDefined()
    expect(doc.paths["/v1/clinical"].post.responses["422"].description).toContain("`idempotency_key_reused`")
  })
})

describe("statistical wording (OpenAPI descriptions and docs/analytics.md)", () => {
  it("says what a statistician would: Bonferroni p as an upper bound, weights on the log-odds scale, robust SEs, the permutation test, heuristics named", async () => {
    const doc = JSON.stringify(await (await call(server, "/v1/openapi.json", { token: null })).json())
    expect(doc).toContain("an upper bound on the probability of so clear a trend")
    expect(doc).toContain("multiplies the rate or the odds by e^0.1")
    expect(doc).toContain("not a percentage of risk")
    expect(doc).toContain("max-statistic permutation p-value")
    expect(doc).toContain("Coefficient standard errors are cluster-robust by patient")
    expect(doc).toContain("for health_decline a heuristic")
    expect(doc).not.toContain("Bonferroni-adjusted p < 0.05")
    const analytics = readFileSync(join(ROOT, "docs/analytics.md"), "utf8")
    expect(analytics).not.toContain("means about 10 % higher risk")
    expect(analytics).not.toContain("capped at 1: the probability, were no axis trending")
    expect(analytics).toContain("**cluster-robust by patient**")
    expect(analytics).toContain("**a heuristic, not part of the fitted model**")
    expect(readFileSync(join(ROOT, "docs/temporal.md"), "utf8")).toContain("**least-squares optimum over the domain")
  })
})

describe("GET /docs", () => {
  it("is an HTML reference that loads nothing from another host", async () => {
    const res = await call(server, "/docs", { token: null })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    const html = await res.text()
    expect(html).toContain("/v1/series-stats")
    expect(html).not.toMatch(/<script[^>]+src=/i)
    expect(html).not.toMatch(/<link[^>]+href=["']https?:/i)
    expect(html).not.toMatch(/@import\s+url\(["']?https?:/i)
  })
})

describe("health", () => {
  it("/healthz and /readyz answer without a token", async () => {
    expect(await (await call(server, "/healthz", { token: null })).json()).toEqual({ status: "ok", hcc_cost: 0 })
    expect(await (await call(server, "/readyz", { token: null })).json()).toEqual({
      status: "ready",
      checks: { database: { status: "ok", detail: "the state database answers" }, data: { status: "ok", detail: "5000 patients loaded" } },
      hcc_cost: 0
    })
  })
})
