/**
 * An axis no data informs (an imported dataset whose axis model has no instrument for it): the
 * catalog reports its coverage as 0, and answers say it has no scores instead of inventing them.
 */
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, hcc, startServer, tempDataDir, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer
beforeAll(async () => {
  const generated = tempDataDir()
  hcc(generated, ["data", "generate", "--patients", "4000", "--seed", "17"])
  const csv = join(tempDataDir(), "csv")
  hcc(generated, ["data", "export", csv])
  // No RS score anywhere.
  const file = join(csv, "axis_scores.csv")
  const [header, ...rows] = readFileSync(file, "utf8").trim().split("\n")
  const rs = header!.split(",").indexOf("rs")
  writeFileSync(file, [header, ...rows.map((r) => r.split(",").map((v, i) => (i === rs ? "" : v)).join(","))].join("\n") + "\n")
  const dataDir = tempDataDir()
  hcc(dataDir, ["data", "import", csv])
  server = await startServer({ dataDir })
  await waitReady(server)
}, 240_000)
afterAll(async () => {
  await server.stop()
})

const post = async (path: string, body: unknown) => {
  const r = await call(server, path, { body })
  const text = await r.text()
  expect(text, path).not.toMatch(/NaN|Infinity/)
  return { status: r.status, body: JSON.parse(text) as Record<string, any> }
}

describe("an axis without data", () => {
  it("has coverage 0 in the catalog", async () => {
    const catalog = (await (await call(server, "/v1/catalog")).json()) as Record<string, any>
    expect(catalog.dataset.axis_coverage.RS).toBe(0)
    expect(catalog.dataset.axis_coverage.PO).toBeGreaterThan(0.9)
  })
  it("population: its averages are null", async () => {
    const { body, status } = await post("/v1/population", { analysis_type: "trend", axes: ["PO", "RS"] })
    expect(status).toBe(200)
    for (const period of body.periods) {
      expect(period.avg_RS).toBeNull()
      expect(typeof period.avg_PO).toBe("number")
    }
  })
  it("clinical: the reasoning says it has no scores", async () => {
    for (const response_format of ["structured", "natural_language", "sql_like"]) {
      const { body, status } = await post("/v1/clinical", { query: "Patient on metformin with declining RS axis", axes: ["PO", "RS"], response_format })
      expect(status).toBe(200)
      const rsLines = body.reasoning_chain.filter((l: string) => /\bRS\b/.test(l))
      expect(rsLines.length).toBeGreaterThan(0)
      expect(rsLines.join("\n")).toMatch(/no (RS )?scores/i)
      expect(Object.keys(body.contributing_data.axis_correlations)).not.toContain("PO_RS")
    }
  })
  it("drug-outcomes: its trend is no_data and its correlation null; alone it is a 422 that names it", async () => {
    const { body, status } = await post("/v1/drug-outcomes", { drug: "metformin", axes_filter: ["NM", "RS"] })
    expect(status).toBe(200)
    expect(body.axis_breakdown.RS).toEqual({ correlation: null, trend: "no_data" })
    const alone = await post("/v1/drug-outcomes", { drug: "metformin", axes_filter: ["RS"] })
    expect(alone.status).toBe(422)
    expect(alone.body.detail).toMatch(/RS/)
  })
  it("risk-model: a snapshot of it contributes nothing", async () => {
    const { body, status } = await post("/v1/risk-model", { patient_profile: { axes_snapshot: { PO: 5, RS: 1 } }, risk_type: "hospitalization" })
    expect(status).toBe(200)
    expect(body.contributing_factors.map((f: { factor: string }) => f.factor).join(" ")).not.toMatch(/RS/)
  })
})
