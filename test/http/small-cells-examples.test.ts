/**
 * On the default dataset (50,000 patients, the default seed), three servers over one database:
 * the default small-cell rule (minimum 11), the rule off (`HCC_MIN_CELL_SIZE=1`, answers as they
 * were before the rule) and counts rounded to multiples of 5 (`HCC_COUNT_ROUNDING=5`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { call, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

let strict: TestServer
let off: TestServer
let rounded: TestServer
let token: string
beforeAll(async () => {
  strict = await startServer({ env: { HCC_POPULATION: "50000" } })
  await waitReady(strict)
  token = newAccount({ dataDir: strict.dataDir }, { tier: "unlimited" }).token
  ;[off, rounded] = await Promise.all([
    startServer({ dataDir: strict.dataDir, env: { HCC_MIN_CELL_SIZE: "1" } }),
    startServer({ dataDir: strict.dataDir, env: { HCC_COUNT_ROUNDING: "5" } })
  ])
  await Promise.all([waitReady(off), waitReady(rounded)])
}, 240_000)
afterAll(async () => {
  await Promise.all([strict.stop(), off?.stop(), rounded?.stop()])
})

const ask = async (server: TestServer, path: string, body: unknown) => {
  const res = await call(server, path, { body, token })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}
const at = (body: unknown, pointer: string) => pointer.slice(1).split("/").reduce((o: any, key) => o?.[key], body)

describe("the rule in force", () => {
  it("is in the catalog and in the start-up log; off is a warning", async () => {
    const catalog = async (server: TestServer) => (await (await call(server, "/v1/catalog", { token })).json()).disclosure
    expect(await catalog(strict)).toEqual({ min_cell_size: 11, count_rounding: 1 })
    expect(await catalog(off)).toEqual({ min_cell_size: 1, count_rounding: 1 })
    expect(await catalog(rounded)).toEqual({ min_cell_size: 11, count_rounding: 5 })
    expect(strict.logLines().find((l) => l.msg === "small-cell protection")).toMatchObject({ level: "info", min_cell_size: 11, count_rounding: 1 })
    expect(off.logLines().find((l) => String(l.msg).startsWith("small-cell protection is off"))).toMatchObject({ level: "warn", min_cell_size: 1 })
  })

  it("the OpenAPI document marks what may be withheld: nullable fields, and `suppressed` on every plugin answer", async () => {
    const doc = await (await call(strict, "/v1/openapi.json", { token: null })).json()
    const schemaOf = (path: string) => {
      const s = doc.paths[path].post.responses["200"].content["application/json"].schema
      return s.$ref === undefined ? s : doc.components.schemas[s.$ref.split("/").at(-1)]
    }
    for (const plugin of builtins) expect(schemaOf(plugin.path).properties.suppressed, plugin.path).toMatchObject({ type: "array" })
    const device = schemaOf("/v1/device-outcomes").properties.outcomes
    expect(JSON.stringify(device)).toContain("\"null\"")
    expect(device.description).toContain("minimum cell size")
  })
})

describe("the examples of small cells", () => {
  const cochlear = { device_category: "cochlear_implant", outcome_metrics: ["infection_rate"], time_period: "1_months" }

  it("two cochlear implants in a month: withheld as a 422 naming the minimum, not the count; answered as before with the rule off", async () => {
    const withheld = await ask(strict, "/v1/device-outcomes", cochlear)
    expect(withheld.status).toBe(422)
    expect(withheld.body).toMatchObject({ code: "cohort_too_small", context: { minimum: 11 } })
    expect(withheld.body.detail).toContain("fewer than 11")
    expect(JSON.stringify(withheld.body)).not.toMatch(/\b2 implant|cohort_size|sample_size/)
    const before = await ask(off, "/v1/device-outcomes", cochlear)
    expect(before).toEqual({ status: 200, body: { device_category: "cochlear_implant", studies_analyzed: 2, outcomes: { infection_rate: 0 }, sample_size: 2, hcc_cost: 3 } })
  })

  it("a narrow population cohort: the averages of periods with fewer than 11 patients scored are null and listed; the rest as before", async () => {
    const request = { cohort_definition: { age_range: "90-99", conditions: ["asthma", "heart_failure"] }, analysis_type: "trend", granularity: "monthly" }
    const withheld = (await ask(strict, "/v1/population", request)).body
    const before = (await ask(off, "/v1/population", request)).body
    expect(withheld.cohort_size).toBe(before.cohort_size)
    expect(before.suppressed).toBeUndefined()
    const suppressed = withheld.suppressed as Array<string>
    expect(suppressed.length).toBeGreaterThan(0)
    for (const pointer of suppressed) {
      expect(at(withheld, pointer), pointer).toBeNull()
      expect(typeof at(before, pointer), pointer).toBe("number")
    }
    // Nothing else differs.
    const { suppressed: _, ...rest } = withheld
    const restored = structuredClone(rest)
    for (const pointer of suppressed) {
      const keys = pointer.slice(1).split("/")
      at(restored, `/${keys.slice(0, -1).join("/")}`)[keys.at(-1)!] = at(before, pointer)
    }
    expect(restored).toEqual(before)
  })

  it("a cohort of fewer than 11: the 422 names the minimum, never the count (the rule off: as before, with the count)", async () => {
    const request = { cohort_definition: { age_range: "90-99", conditions: ["asthma", "hypothyroidism"] }, analysis_type: "trend" }
    const withheld = await ask(strict, "/v1/population", request)
    expect(withheld.status).toBe(422)
    expect(withheld.body).toMatchObject({ code: "cohort_too_small", context: { minimum: 11 } })
    const before = await ask(off, "/v1/population", request)
    expect(before.status).toBe(422)
    const count = before.body.context.cohort_size as number
    expect(count).toBeGreaterThan(0)
    expect(count).toBeLessThan(11)
    expect(withheld.body.detail).not.toContain(String(count))
    expect(withheld.body.context.cohort_size).toBeUndefined()
  })

  it("drug-outcomes with population_size minimum_1: each axis correlation resting on fewer than 11 patients is null and listed", async () => {
    const request = { drug: "levothyroxine", outcome_type: "adverse_events", population_size: "minimum_1" }
    const withheld = (await ask(strict, "/v1/drug-outcomes", request)).body
    const before = (await ask(off, "/v1/drug-outcomes", request)).body
    expect(withheld.cohort_size).toBe(before.cohort_size)
    expect(withheld.suppressed.length).toBeGreaterThan(0)
    for (const pointer of withheld.suppressed as Array<string>) {
      expect(at(withheld, pointer)).toBeNull()
      expect(at(before, pointer)).not.toBeNull()
    }
  })
})

describe("rounding to multiples of 5 applies to every count in every answer", () => {
  const round5 = (n: number) => (n === 0 ? 0 : Math.max(5, Math.round(n / 5) * 5))
  /** The answers of a plugin's examples from the rounding server and from the default one. */
  const both = async (path: string, request: unknown) => {
    const [r, s] = await Promise.all([ask(rounded, path, request), ask(strict, path, request)])
    expect(r.status).toBe(200)
    expect(s.status).toBe(200)
    return { r: r.body, s: s.body }
  }
  const examplesOf = (name: string) => builtins.find((p) => p.name === name)!.examples!.map((e) => e.request)

  it("population: cohort_size", async () => {
    for (const request of examplesOf("population")) {
      const { r, s } = await both("/v1/population", request)
      expect(s.cohort_size % 5).not.toBe(0)
      expect(r).toEqual({ ...s, cohort_size: round5(s.cohort_size) })
    }
  })

  it("drug-outcomes: cohort_size", async () => {
    for (const request of [...examplesOf("drug-outcomes"), { drug: "warfarin" }]) {
      const { r, s } = await both("/v1/drug-outcomes", request)
      expect(r).toEqual({ ...s, cohort_size: round5(s.cohort_size) })
    }
  })

  it("device-outcomes: sample_size", async () => {
    for (const request of [...examplesOf("device-outcomes"), { device_category: "hip_implant", outcome_metrics: ["infection_rate"] }]) {
      const { r, s } = await both("/v1/device-outcomes", request)
      expect(r).toEqual({ ...s, sample_size: round5(s.sample_size) })
    }
  })

  it("clinical: the encounters and every count the reasoning states", async () => {
    const counts = /similar_patients: (?:all )?([\d,]+)(?: of ([\d,]+))?|encounters_in_window=([\d,]+)|n=([\d,]+)|among ([\d,]+)|(?:gastrointestinal_intolerance|cough|bleeding|myalgia|edema|hypoglycemia) ([\d,]+) \(/g
    const numbersOf = (lines: ReadonlyArray<string>) =>
      lines.flatMap((l) => [...l.matchAll(counts)].flatMap((m) => m.slice(1).filter((x) => x !== undefined).map((x) => Number(x.replaceAll(",", "")))))
    for (const request of [...examplesOf("clinical"), { query: "Patients with hypertension, is PO declining?" }]) {
      const { r, s } = await both("/v1/clinical", request)
      expect(r.contributing_data.encounters).toBe(round5(s.contributing_data.encounters))
      const stated = numbersOf(r.reasoning_chain)
      expect(stated.length).toBeGreaterThan(2)
      expect(stated).toEqual(numbersOf(s.reasoning_chain).map(round5))
      for (const n of stated) expect(n % 5).toBe(0)
    }
  })

  it("risk-model, one-health and temporal publish no count: their answers are unchanged", async () => {
    for (const name of ["risk-model", "one-health", "temporal"]) {
      const path = builtins.find((p) => p.name === name)!.path
      for (const request of examplesOf(name)) {
        const { r, s } = await both(path, request)
        expect(r, name).toEqual(s)
      }
    }
  })
})
