/**
 * POST /v1/clinical on the run's generated population (30,000 patients, default seed): the query is
 * read by the documented rules; every number in the reasoning chain is the one the dataset gives
 * (the sql_like chain's SQL is run on the database and must return the numbers the chain states);
 * the three formats differ only in how the chain is written; partial and empty understanding;
 * errors with paths.
 */
import { DatabaseSync } from "node:sqlite"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { readFileSync } from "node:fs"
import { INTERACTIONS, TREND_SLOPE, verdictOf } from "../../plugins/clinical/evidence.ts"
import { phraseTable, understand } from "../../plugins/clinical/understand.ts"
import { AXES } from "../../src/plugin/axes.ts"
import { useFixture } from "../support/fixture.ts"
import { call } from "../support/server.ts"

const fixture = useFixture()

const post = async (body: unknown) => {
  const res = await call(fixture.server, "/v1/clinical", { body })
  return { status: res.status, body: (await res.json()) as Record<string, any> }
}
const read = (query: string) => understand(query, phraseTable(fixture.data.vocabulary))
const sample = {
  query: "Patient on metformin + lisinopril with declining NM axis. Suggest intervention.",
  axes: ["PO", "NM", "ER"],
  time_range: "6_months",
  response_format: "structured"
}

describe("reading the query", () => {
  it("finds drugs by generic and brand name, any case and punctuation, each once", () => {
    const u = read("On GLUCOPHAGE, Zestril/prinivil and metformin+ASPIRIN; also lipitor.")
    expect(u.drugs).toEqual(["metformin", "lisinopril", "aspirin", "atorvastatin"])
    expect(u.unknown).toEqual([])
  })

  it("finds conditions by code words, common names and abbreviations, longest phrase first, plurals folded", () => {
    expect(read("T2DM with high blood pressure and congestive heart failure").conditions).toEqual(["type_2_diabetes", "hypertension", "heart_failure"])
    expect(read("patients with chronic kidney diseases").conditions).toEqual(["chronic_kidney_disease"])
    expect(read("type 2 diabetes").conditions).toEqual(["type_2_diabetes"])
  })

  it("finds axes by capital codes and by the words of their names, not by lower-case look-alikes", () => {
    expect(read("NM and PO falling; emotional wellbeing").axes).toEqual(["PO", "NM", "ER"])
    expect(read("seen in the er last week, po intake").axes).toEqual([])
    expect(read("Nutritional decline").axes).toEqual(["NM"])
  })

  it("finds the direction (the first stated) and a duration in days", () => {
    const u = read("NM improving over the last 6 months, was declining")
    expect(u.direction).toBe("improving")
    expect(u.durationDays).toBe(183)
    expect(read("stable for two weeks").durationDays).toBe(14)
    expect(read("a 90-day course").durationDays).toBe(90)
    expect(read("metformin twice a day").durationDays).toBeUndefined()
    expect(read("NM worsened").direction).toBe("declining")
  })

  it("reports a word within two edits of a drug or condition as not understood, with the name it resembles", () => {
    const u = read("on metfromin and lisinopril with hypertensoin")
    expect(u.drugs).toEqual(["lisinopril"])
    expect(u.unknown).toEqual([{ text: "metfromin", closest: "metformin" }, { text: "hypertensoin", closest: "hypertension" }])
  })
})

describe("the verdict on a trend", () => {
  it("is ±0.01 points per month at p < 0.05, as docs/analytics.md states it in both places", () => {
    expect(TREND_SLOPE).toBe(0.01)
    expect(verdictOf(0.015, 0.01)).toBe("improving")
    expect(verdictOf(-0.015, 0.01)).toBe("declining")
    expect(verdictOf(0.01, 0.01)).toBe("improving")
    expect(verdictOf(0.0099, 0.01)).toBe("stable")
    expect(verdictOf(-0.05, 0.05)).toBe("stable")
    const docs = readFileSync(join(import.meta.dirname, "../../docs/analytics.md"), "utf8").replace(/\s+/g, " ")
    expect(docs).toContain("clinical's verdict (slope against ±0.01 points per month)")
    expect(docs).toContain("p < 0.05 and mean slope ≤ −0.01, `improving` when p < 0.05 and ≥ +0.01")
    expect(docs).not.toMatch(/±0\.02/)
  })
})

describe("the interaction knowledge base", () => {
  it("names only drugs of the dataset, each pair once, each with a source", () => {
    const keys = INTERACTIONS.map((x) => x.drugs.join("+"))
    expect(new Set(keys).size).toBe(keys.length)
    for (const x of INTERACTIONS) {
      for (const d of x.drugs) expect(fixture.data.vocabulary.drug).toContain(d)
      expect(x.source).toMatch(/prescribing information|FDA/)
    }
    expect(keys).toContain("lisinopril+metformin")
  })
})

describe("the endpoint", () => {
  it("answers the spec's sample: both drugs, the interaction finding, the NM evidence from data and the requested correlations", async () => {
    const { status, body } = await post(sample)
    expect(status).toBe(200)
    expect(Object.keys(body).sort()).toEqual(["confidence", "contributing_data", "hcc_cost", "reasoning_chain", "suggestions"])
    const chain = body.reasoning_chain as Array<string>
    expect(chain[0]).toBe("understood: drugs=metformin,lisinopril; conditions=none; axes=NM; direction=declining; duration=none")
    expect(chain.some((s) => s.startsWith("interaction: lisinopril+metformin severity=moderate") && s.includes("Zestril"))).toBe(true)
    expect(chain.some((s) => s.startsWith("NM: level="))).toBe(true)
    expect(body.suggestions[0]).toContain("blood glucose")
    expect(body.hcc_cost).toBe(2.5)
    expect(Object.keys(body.contributing_data.axis_correlations)).toEqual(["PO_NM", "PO_ER", "NM_ER"])
    expect(body.contributing_data.encounters).toBeGreaterThan(0)
    expect(body.confidence).toBeGreaterThan(0)
    expect(body.confidence).toBeLessThanOrEqual(1)
    expect((await post(sample)).body).toEqual(body)
  })

  it("every number of the chain is what the SQL of its sql_like form returns on the database", async () => {
    const structured = (await post(sample)).body
    const sql = (await post({ ...sample, response_format: "sql_like" })).body
    const db = new DatabaseSync(join(fixture.server.dataDir, "hcc.db"), { readOnly: true })
    try {
      let checked = 0
      for (const step of sql.reasoning_chain as Array<string>) {
        for (const line of step.split("\n")) {
          const m = /^(WITH .*); -- → (.*)$/.exec(line)
          if (m === null || line.includes("Pearson")) continue
          // A count of 1 to 10 patients is stated as "fewer than 11" (the minimum cell size), never as itself.
          const published = (v: unknown) => typeof v === "number" && v >= 1 && v < 11 ? "fewer than 11" : v
          const rows = db.prepare(m[1]!).all().map((r) => Object.values(r as Record<string, unknown>))
          const stated = m[2]!
          if (stated.startsWith("(") || stated === "no rows") {
            expect(rows.map((r) => `(${r.map(published).join(", ")})`).sort().join(" ")).toBe(stated === "no rows" ? "" : stated.split(/(?<=\)) /).sort().join(" "))
          } else if (stated.startsWith("fewer than 11")) {
            expect(published(rows[0]![0])).toBe("fewer than 11")
          } else {
            const numbers = stated.split(/[ ,(]+/).map(Number).filter((x) => !Number.isNaN(x))
            rows[0]!.forEach((v, i) => expect(Number(v)).toBeCloseTo(numbers[i]!, 4))
          }
          checked++
        }
      }
      expect(checked).toBeGreaterThanOrEqual(5)
      const [[encounters]] = [[structured.contributing_data.encounters]]
      expect(sql.contributing_data.encounters).toBe(encounters)
    } finally {
      db.close()
    }
  })

  it("the sql_like statements look patients up through the dataset's indexes, even where SQLite makes no automatic index", async () => {
    const sql = (await post({ ...sample, response_format: "sql_like" })).body
    const db = new DatabaseSync(join(fixture.server.dataDir, "hcc.db"), { readOnly: true })
    try {
      // Other tools (and older SQLite builds) run without automatic indexes: the shipped SQL must not need them.
      db.exec("PRAGMA automatic_index = OFF")
      const statements = (sql.reasoning_chain as Array<string>).flatMap((step) =>
        step.split("\n").flatMap((line) => /^(WITH .*); -- → /.exec(line)?.[1] ?? []))
      expect(statements.length).toBeGreaterThanOrEqual(5)
      for (const statement of statements) {
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${statement}`).all().map((r) => String((r as { detail: string }).detail))
        // A correlated per-patient lookup (aliases e and c) that scans its table is the quadratic case.
        expect(plan.filter((d) => /^SCAN (e|c)\b/.test(d))).toEqual([])
        expect(plan.some((d) => d.includes("USING INDEX drug_exposures_patient_drug"))).toBe(true)
      }
    } finally {
      db.close()
    }
  })

  it("axis_correlations are Pearson r across the similar patients' mean scores in the window, keys canonical whatever the request order", async () => {
    const { body } = await post({ ...sample, axes: ["ER", "NM", "PO"] })
    expect(Object.keys(body.contributing_data.axis_correlations)).toEqual(["PO_NM", "PO_ER", "NM_ER"])
    const db = new DatabaseSync(join(fixture.server.dataDir, "hcc.db"), { readOnly: true })
    try {
      const sqlBody = (await post({ ...sample, response_format: "sql_like" })).body
      const line = (sqlBody.reasoning_chain as Array<string>).find((s) => s.includes("Pearson"))!
      const rows = db.prepare(line.split("; --")[0]!).all().map((r) => Object.values(r as Record<string, unknown>).slice(1) as Array<number | null>)
      const r = (a: number, b: number) => {
        const pairs = rows.filter((x) => x[a] !== null && x[b] !== null).map((x) => [x[a]!, x[b]!] as const)
        const mx = pairs.reduce((s, p) => s + p[0], 0) / pairs.length
        const my = pairs.reduce((s, p) => s + p[1], 0) / pairs.length
        let sxy = 0, sxx = 0, syy = 0
        for (const [x, y] of pairs) {
          sxy += (x - mx) * (y - my)
          sxx += (x - mx) ** 2
          syy += (y - my) ** 2
        }
        return sxy / Math.sqrt(sxx * syy)
      }
      expect(body.contributing_data.axis_correlations.PO_NM).toBeCloseTo(r(0, 1), 2)
      expect(body.contributing_data.axis_correlations.PO_ER).toBeCloseTo(r(0, 2), 2)
      expect(body.contributing_data.axis_correlations.NM_ER).toBeCloseTo(r(1, 2), 2)
    } finally {
      db.close()
    }
  })

  it("the three response formats give three different chains over the same evidence", async () => {
    const bodies = await Promise.all(["structured", "natural_language", "sql_like"].map(async (f) => (await post({ ...sample, response_format: f })).body))
    const chains = bodies.map((b) => JSON.stringify(b.reasoning_chain))
    expect(new Set(chains).size).toBe(3)
    for (const b of bodies) {
      expect(b.reasoning_chain.length).toBe(bodies[0]!.reasoning_chain.length)
      expect(b.suggestions).toEqual(bodies[0]!.suggestions)
      expect(b.confidence).toBe(bodies[0]!.confidence)
      expect(b.contributing_data).toEqual(bodies[0]!.contributing_data)
    }
    expect(bodies[1]!.reasoning_chain[0]).toBe("The query names the drugs metformin and lisinopril, the NM (Nutritional & Metabolic) axis and a declining direction.")
    expect(bodies[2]!.reasoning_chain.every((s: string) => s.startsWith("--") || s.startsWith("WITH ") || s.startsWith("SELECT "))).toBe(true)
  })

  it("a partly understood query says so in the chain and lowers confidence by a quarter", async () => {
    const full = (await post({ query: "lisinopril with declining NM", axes: ["NM", "PO"] })).body
    const partial = (await post({ query: "metfromin and lisinopril with declining NM", axes: ["NM", "PO"] })).body
    expect(partial.reasoning_chain[1]).toBe("not_understood: 'metfromin' (closest known: metformin); confidence × 0.75")
    expect(Math.abs(partial.confidence - 0.75 * full.confidence)).toBeLessThanOrEqual(0.01)
    expect(partial.contributing_data).toEqual(full.contributing_data)
  })

  it("a query with nothing recognisable is 422 query_not_understood, with near misses as suggestions", async () => {
    const none = await post({ query: "What will the weather be tomorrow?" })
    expect(none.status).toBe(422)
    expect(none.body.code).toBe("query_not_understood")
    const miss = await post({ query: "Patient on metfromin." })
    expect(miss.status).toBe(422)
    expect(miss.body.suggestions).toEqual(["metformin"])
  })

  it("no drug or condition: the evidence is everyone; a duration in the query sets the window unless time_range is given", async () => {
    const { body } = await post({ query: "Is PO declining over the last 3 months?", axes: ["PO"] })
    expect(body.reasoning_chain[1]).toMatch(/^window: \d{4}-\d{2}-01\.\.2026-09-30 \(3 months, from the query's duration\)$/)
    expect(body.reasoning_chain[2]).toMatch(/^similar_patients: all 30,000 \(no drug or condition named\)/)
    expect(body.contributing_data.axis_correlations).toEqual({})
    const directionOnly = (await post({ query: "Is it improving?" })).body
    expect(directionOnly.reasoning_chain).toContain("direction improving stated without an axis: not checked")
    expect(directionOnly.confidence).toBe(0)
    const explicit = (await post({ query: "Is PO declining over the last 3 months?", axes: ["PO"], time_range: "1_year" })).body
    expect(explicit.reasoning_chain[1]).toContain("(1_year, from time_range)")
  })

  it("planted: heart failure patients' PO declines, confirmed with confidence and an intervention", async () => {
    const { body } = await post({ query: "heart failure patient with declining physical score", time_range: "1_year", axes: ["PO", "NM"] })
    const po = (body.reasoning_chain as Array<string>).find((s) => s.startsWith("PO: "))!
    expect(po).toContain("verdict=declining; query says declining: confirmed")
    expect(body.suggestions.some((s: string) => s.startsWith("Offer physical activity program for PO"))).toBe(true)
    expect(body.confidence).toBeGreaterThan(0.8)
  })

  it("too few similar patients: said in the chain, no data evidence, the interactions still reported", async () => {
    const { body } = await post({ query: "warfarin, ibuprofen, omeprazole, levothyroxine and sertraline with asthma, copd and obesity; NM declining" })
    const cohort = (body.reasoning_chain as Array<string>).find((s) => s.startsWith("similar_patients:"))!
    expect(cohort).toMatch(/^similar_patients: \d+ with .* \(fewer than 11: no data evidence reported\)$/)
    expect(body.confidence).toBe(0)
    expect(body.contributing_data.encounters).toBe(0)
    expect(body.suggestions.at(-1)).toMatch(/^Too few similar patients/)
    expect(body.suggestions.some((s: string) => s.includes("ibuprofen + warfarin: major interaction"))).toBe(true)
  })

  it.each([
    [{ query: "" }, "/query"],
    [{ query: "x".repeat(2001) }, "/query"],
    [{ query: "metformin", axes: [] }, "/axes"],
    [{ query: "metformin", axes: ["NM", "NM"] }, "/axes"],
    [{ query: "metformin", time_range: "2_weeks" }, "/time_range"],
    [{ query: "metformin", response_format: "xml" }, "/response_format"],
    [{ axes: [...AXES] }, "/query"]
  ])("400 names the path: %j", async (request, path) => {
    const { body, status } = await post(request)
    expect(status).toBe(400)
    expect(body.errors.map((e: any) => e.path)).toContain(path)
  })
})
