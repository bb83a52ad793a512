/**
 * A network of sites through the door (docs/network.md): one generated population split by patient
 * into three sites, each a service with its own dataset, and a coordinator asking them. Population
 * across the network is the answer one service gives over the union of the three (the original
 * dataset), with small cells off everywhere; a site that fails mid-question or never answers is
 * left out, the answer from the others marked partial, within the deadline.
 */
import { execFileSync } from "node:child_process"
import { cpSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createClient } from "../../src/client/index.ts"
import { PARTIAL_MEDIA_TYPE } from "../../src/plugin/viewData.ts"
import { drawView } from "../../src/views/render.ts"
import { launchChromium } from "../../scripts/chromium.ts"
import { askThroughForm, markCounts, signIn } from "../support/explorer.ts"
import { networkFile, splitByPatient } from "../support/network.ts"
import { mulberry32 } from "../support/random.ts"
import { generatedDataDir } from "../support/datasets.ts"
import { metaReference } from "../support/metaReference.ts"
import { call, hcc, newAccount, startServer, tempDataDir, type TestServer, waitReady } from "../support/server.ts"

const OFF = { HCC_MIN_CELL_SIZE: "1" }
let union: TestServer
let sites: Array<TestServer> = []
let coordinator: TestServer
let faulty: TestServer
let fakes: Array<Server> = []
/** The same three sites with the small-cell rule on (11), and a coordinator with it on. */
let strictSites: Array<TestServer> = []
let strict: TestServer
let asked = 0

/** A fake site: one that drops the connection on every question, or one that never answers. */
const fakeSite = async (behaviour: "drop" | "hang"): Promise<string> => {
  const server = createServer((req) => {
    asked++
    if (behaviour === "drop") req.socket.destroy()
  })
  fakes.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

beforeAll(async () => {
  const original = generatedDataDir(3000, 11)
  const exported = `${tempDataDir()}/export`
  hcc(original, ["data", "export", exported])
  const parts = splitByPatient(exported, 3)
  const dirs = parts.map((folder) => {
    const dir = tempDataDir()
    hcc(dir, ["data", "import", folder])
    return dir
  })
  // Copies of the sites' data, to serve with the rule on: made before a server opens a folder, whose
  // files (SQLite's journal, a snapshot being written) come and go while it runs.
  const copies = dirs.map((dir) => {
    const copy = tempDataDir()
    cpSync(dir, copy, { recursive: true })
    return copy
  })
  const started = await Promise.all([original, ...dirs].map((dataDir) => startServer({ dataDir, env: OFF })))
  await Promise.all(started.map((s) => waitReady(s)))
  union = started[0]!
  sites = started.slice(1)
  const members = sites.map((s, i) => ({ name: `site-${i + 1}`, url: s.url, token: newAccount({ dataDir: s.dataDir }, { tier: "unlimited" }).token }))
  strictSites = await Promise.all(copies.map((dataDir) => startServer({ dataDir })))
  await Promise.all(strictSites.map((s) => waitReady(s)))
  const strictMembers = strictSites.map((s, i) => ({ name: `site-${i + 1}`, url: s.url, token: newAccount({ dataDir: s.dataDir }, { tier: "unlimited" }).token }))
  const [drop, hang] = [await fakeSite("drop"), await fakeSite("hang")]
  const coordinators = await Promise.all([
    startServer({ env: { ...OFF, HCC_NETWORK: networkFile(members) } }),
    startServer({ env: { ...OFF, HCC_NETWORK: networkFile([members[0]!, { name: "site-drops", url: drop, token: "t1" }, { name: "site-hangs", url: hang, token: "t2" }], 1) } }),
    startServer({ env: { HCC_NETWORK: networkFile(strictMembers) } })
  ])
  await Promise.all(coordinators.map((s) => waitReady(s)))
  coordinator = coordinators[0]!
  faulty = coordinators[1]!
  strict = coordinators[2]!
}, 300_000)

afterAll(async () => {
  await Promise.all([union, ...sites, ...strictSites, coordinator, faulty, strict].map((s) => s?.stop()))
  for (const f of fakes) f.closeAllConnections()
  await Promise.all(fakes.map((f) => new Promise((resolve) => f.close(resolve))))
})

const QUESTIONS = [
  { analysis_type: "trend" },
  { analysis_type: "trend", granularity: "monthly", cohort_definition: { sex: "female", conditions: ["type_2_diabetes"] } },
  { analysis_type: "trend", granularity: "yearly", axes: ["PO", "ER"], cohort_definition: { age_range: "40-70" } },
  { analysis_type: "trend", cohort_definition: { conditions: ["heart_failure"], axes_threshold: { PO: { min: 5 } } } },
  { analysis_type: "trend", cohort_definition: { axes_threshold: { PO: { min: 5 } } } }
]

describe("population across the network", () => {
  it.each(QUESTIONS.map((q, i) => [i, q] as const).filter(([i]) => i !== 3))("question %i: the answer of one service over the union of the sites, each site's cohort and weight listed", async (_, question) => {
    const one = await (await call(union, "/v1/population", { body: question })).json()
    const res = await call(coordinator, "/v1/network/population", { body: question })
    expect(res.status).toBe(200)
    const { network, hcc_cost, statistical_significance, ...pooled } = await res.json()
    const { hcc_cost: oneCost, statistical_significance: oneP, ...single } = one
    expect(pooled).toEqual(single)
    // The trend test's sums of slopes are added in another order: the same to its 6 significant digits.
    expect(statistical_significance).toBeCloseTo(oneP, 5)
    expect(hcc_cost).toBe(3 * oneCost)
    expect(network.partial).toBe(false)
    expect(network.incomplete).toEqual([])
    expect(network.members.map((m: any) => [m.name, m.status, m.hcc_cost])).toEqual([["site-1", "answered", oneCost], ["site-2", "answered", oneCost], ["site-3", "answered", oneCost]])
    expect(network.members.reduce((s: number, m: any) => s + m.cohort_size, 0)).toBe(single.cohort_size)
    expect(network.members.reduce((s: number, m: any) => s + m.weight, 0)).toBeCloseTo(1, 3)
  })

  it("a cohort under every site's minimum cell size is the network's 422 cohort_too_small", async () => {
    const res = await call(coordinator, "/v1/network/population", { body: QUESTIONS[3] })
    expect(res.status).toBe(422)
    const body = await res.json()
    expect(body.code).toBe("cohort_too_small")
    expect(body.detail).toBe("At every site the cohort is under the site's minimum cell size, so no site publishes it; widen the question.")
  })

  it("the catalog and the OpenAPI document list only the network's endpoints: the sites' costs summed, the domain's sample questions", async () => {
    const costsOf = async (server: TestServer) =>
      Object.fromEntries(((await (await call(server, "/v1/catalog")).json()).endpoints as Array<any>).map((e) => [e.path, e.hcc_cost]))
    const [costs, siteCosts] = await Promise.all([costsOf(coordinator), costsOf(sites[0]!)])
    const domains = ["population", "drug-outcomes", "device-outcomes"]
    expect(Object.keys(costs).sort()).toEqual(domains.map((d) => `/v1/network/${d}`).sort())
    for (const domain of domains) expect(costs[`/v1/network/${domain}`]).toBe(3 * siteCosts[`/v1/${domain}`])
    const doc = await (await call(coordinator, "/v1/openapi.json", { token: null })).json()
    const siteDoc = await (await call(sites[0]!, "/v1/openapi.json", { token: null })).json()
    expect(doc.paths).not.toHaveProperty(["/v1/population"])
    const examples = doc.paths["/v1/network/population"].post.requestBody.content["application/json"].examples
    expect(Object.keys(examples)).toEqual(Object.keys(siteDoc.paths["/v1/population"].post.requestBody.content["application/json"].examples))
  })

  it("the coordinator holds no patient data: ready without any, and a domain path says where its questions are", async () => {
    const ready = await (await fetch(`${coordinator.url}/readyz`)).json()
    expect(ready.checks.data).toEqual({ status: "ok", detail: "none: this service coordinates a network of sites and holds no patient data" })
    expect(coordinator.logLines().some((l) => l.msg === "generated the default dataset" || l.msg === "health data loaded")).toBe(false)
    const res = await call(coordinator, "/v1/population", { body: QUESTIONS[0] })
    expect(res.status).toBe(404)
    const body = await res.json()
    expect(body.code).toBe("not_found")
    expect(body.detail).toBe("No endpoint at /v1/population: this service coordinates a network of sites and holds no patient data; its questions are under /v1/network/ (GET /v1/catalog lists them).")
    expect(body.hcc_cost).toBe(0)
  })

  it("a site answers its partial representation: the answer and what the coordinator pools", async () => {
    const res = await call(sites[0]!, "/v1/population", { body: QUESTIONS[0], headers: { accept: PARTIAL_MEDIA_TYPE } })
    expect(res.headers.get("content-type")).toMatch(/^application\/vnd\.hcc\.partial\+json/)
    const { partial, ...answer } = await res.json()
    expect(answer).toEqual(await (await call(sites[0]!, "/v1/population", { body: QUESTIONS[0] })).json())
    expect(partial.periods.map((p: any) => p.period)).toEqual(answer.periods.map((p: any) => p.quarter))
    for (const [i, p] of partial.periods.entries()) expect(Math.round((p.sum_PO / p.scores_PO) * 1000) / 1000).toBe(answer.periods[i].avg_PO)
  })

  it("with the view representation, the pooled means' intervals from the pooled moments", async () => {
    const res = await call(coordinator, "/v1/network/population", { body: QUESTIONS[0], headers: { accept: "application/vnd.hcc.view+json" } })
    const body = await res.json()
    const one = await (await call(union, "/v1/population", { body: QUESTIONS[0], headers: { accept: "application/vnd.hcc.view+json" } })).json()
    expect(body.view_data.periods.map((p: any) => [p.period, p.n_PO])).toEqual(one.view_data.periods.map((p: any) => [p.period, p.n_PO]))
    for (const [i, p] of body.view_data.periods.entries()) {
      expect(p.low_PO).toBeCloseTo(one.view_data.periods[i].low_PO, 3)
      expect(p.high_PO).toBeCloseTo(one.view_data.periods[i].high_PO, 3)
    }
  })
})

describe("drug outcomes across the network", () => {
  const DRUG = { drug: "metformin", outcome_type: "efficacy" }

  it("the cohort, the adverse-event rate and each axis's correlation and trend are one service's over the union; d pooled by REML across the sites", async () => {
    const one = await (await call(union, "/v1/drug-outcomes", { body: DRUG })).json()
    const res = await call(coordinator, "/v1/network/drug-outcomes", { body: DRUG })
    expect(res.status).toBe(200)
    const pooled = await res.json()
    expect(pooled.cohort_size).toBe(one.cohort_size)
    expect(pooled.adverse_event_rate).toBe(one.adverse_event_rate)
    for (const [axis, b] of Object.entries(one.axis_breakdown as Record<string, { correlation: number; trend: string }>)) {
      expect(pooled.axis_breakdown[axis].trend, axis).toBe(b.trend)
      // From the sums over the pairs rather than the kernel's passes: the same to its 3 decimals.
      expect(Math.abs(pooled.axis_breakdown[axis].correlation - b.correlation), axis).toBeLessThanOrEqual(0.001)
    }
    // Each site's d and standard error, as it publishes them, pooled by the reference.
    const partials = await Promise.all(sites.map(async (s) => (await (await call(s, "/v1/drug-outcomes", { body: DRUG, headers: { accept: PARTIAL_MEDIA_TYPE } })).json()).partial))
    const axes: Array<string> = partials[0].axes.map((a: any) => a.axis)
    const estimates = metaReference(axes.map((_, k) => partials.map((p) => ({ estimate: p.axes[k].d, variance: p.axes[k].se ** 2 })))).map((r) => r.reml.estimate as number)
    expect(pooled.efficacy_score).toBe(Math.round((estimates.reduce((a, b) => a + b, 0) / estimates.length) * 1000) / 1000)
    expect(pooled.network.members.every((m: any) => m.status === "answered")).toBe(true)
  })

  it("the view representation: per axis each site's d and weight, fixed, DerSimonian–Laird and REML (Hartung–Knapp) estimates, τ², I², Q and the prediction interval, as the reference computes them", async () => {
    const { view_data } = await (await call(coordinator, "/v1/network/drug-outcomes", { body: DRUG, headers: { accept: "application/vnd.hcc.view+json" } })).json()
    const partials = await Promise.all(sites.map(async (s) => (await (await call(s, "/v1/drug-outcomes", { body: DRUG, headers: { accept: PARTIAL_MEDIA_TYPE } })).json()).partial))
    const close = (a: number, b: number, places: number) => expect(Math.abs(a - b)).toBeLessThanOrEqual(0.5 * 10 ** -places + 1e-9)
    const rows = view_data.network as Array<any>
    const refs = metaReference(rows.map((_, k) => partials.map((p) => ({ estimate: p.axes[k].d, variance: p.axes[k].se ** 2 }))))
    for (const [k, row] of rows.entries()) {
      const ref = refs[k]
      expect(row.sites.map((s: any) => s.site)).toEqual(["site-1", "site-2", "site-3"])
      close(row.fixed.d, ref.fixed.estimate, 3)
      close(row.dersimonian_laird.d, ref.dl.estimate, 3)
      close(row.dersimonian_laird.ci_low, ref.dl.ci_low, 3)
      close(row.reml_hartung_knapp.d, ref.reml.estimate, 3)
      close(row.reml_hartung_knapp.ci_low, ref.reml_hk.ci_low, 3)
      close(row.reml_hartung_knapp.ci_high, ref.reml_hk.ci_high, 3)
      close(row.tau2_dl, ref.dl.tau2, 6)
      close(row.tau2_reml, ref.reml.tau2, 6)
      close(row.i2, ref.i2, 4)
      close(row.q, ref.q, 4)
      close(row.q_p, ref.q_p, 4)
      close(row.prediction_low, ref.prediction.low, 3)
      close(row.prediction_high, ref.prediction.high, 3)
      expect(row.sites.reduce((s: number, x: any) => s + x.weight, 0)).toBeCloseTo(1, 3)
      // The answer's effect is the REML one with its Hartung–Knapp interval.
      expect(view_data.effects[k]).toMatchObject({ axis: row.axis, d: row.reml_hartung_knapp.d, ci_low: row.reml_hartung_knapp.ci_low, ci_high: row.reml_hartung_knapp.ci_high })
    }
  })
})

describe("device outcomes across the network", () => {
  it("each study's sums added across the sites: the answer and the forest plot of one service over the union", async () => {
    const KNEE = { device_category: "knee_implant", outcome_metrics: ["complication_rate", "revision_rate", "patient_satisfaction"], time_period: "36_months" }
    const VIEW = { accept: "application/vnd.hcc.view+json" }
    const { hcc_cost: _, ...one } = await (await call(union, "/v1/device-outcomes", { body: KNEE, headers: VIEW })).json()
    const res = await call(coordinator, "/v1/network/device-outcomes", { body: KNEE, headers: VIEW })
    expect(res.status).toBe(200)
    const { hcc_cost, network, ...pooled } = await res.json()
    expect(pooled).toEqual(one)
    expect(network.incomplete).toEqual([])
    expect(network.members.map((m: any) => m.cohort_size).reduce((a: number, b: number) => a + b, 0)).toBe(one.sample_size)
  })
})

describe("the clients and the charts", () => {
  const DRUG = { drug: "metformin", outcome_type: "efficacy" }
  const PATH = "/v1/network/drug-outcomes"

  it("the TypeScript client asks the network and draws each axis's forest across the sites: a square per site sized by its weight, a diamond per axis", async () => {
    const client = createClient({ baseUrl: coordinator.url, token: coordinator.demoToken })
    const answer = await client.call(PATH, DRUG, { view: true })
    const rows = (answer["view_data"] as { sites: Array<{ axis: string; site: string; weight: number | null }> }).sites
    const axes = new Set(rows.map((r) => r.axis))
    expect(rows.filter((r) => r.site === "pooled")).toHaveLength(axes.size)
    const spec = await client.view(PATH, DRUG, answer)
    expect((spec!["datasets"] as Record<string, unknown>)["sites"]).toEqual(rows)
    const doc = await (await call(coordinator, "/v1/openapi.json", { token: null })).json()
    const { items } = await drawView(doc.paths[PATH].post["x-hcc-view"], DRUG, answer)
    const squares = items.filter((i) => i.role === "mark" && i.marktype === "symbol" && i.datum?.["weight"] !== undefined && i.datum["site"] !== "pooled")
    expect(squares.map((s) => [s.datum!["axis"], s.datum!["site"]])).toEqual(rows.filter((r) => r.site !== "pooled").map((r) => [r.axis, r.site]))
    // Areas in the ratio of the weights.
    for (const s of squares) expect(s.size! / 400).toBeCloseTo(s.datum!["weight"] as number, 6)
    expect(items.filter((i) => i.role === "mark" && i.marktype === "symbol" && i.datum?.["site"] === "pooled")).toHaveLength(axes.size)
  })

  it("the Python client asks the network and charts the answer with the forest's rows", () => {
    const script = [
      "import json, sys",
      "from hcc_client import Client",
      `answer = Client(base_url=${JSON.stringify(coordinator.url)}, token=${JSON.stringify(coordinator.demoToken)}).call(${JSON.stringify(PATH)}, ${JSON.stringify(DRUG)})`,
      "spec = answer.chart()",
      "print(json.dumps({'members': [m['status'] for m in answer['network']['members']], 'sites': spec['datasets']['sites'], 'layers': len(spec['vconcat'])}))"
    ].join("\n")
    const out = execFileSync("python3", ["-c", script], { encoding: "utf8", env: { ...process.env, PYTHONPATH: new URL("../../clients/python/src", import.meta.url).pathname } })
    const { layers, members, sites: rows } = JSON.parse(out)
    expect(members).toEqual(["answered", "answered", "answered"])
    expect(layers).toBe(3)
    expect(rows.filter((r: any) => r.site === "pooled").length).toBeGreaterThan(0)
    expect(rows.filter((r: any) => r.site !== "pooled").map((r: any) => r.site).slice(0, 3)).toEqual(["site-1", "site-2", "site-3"])
  })
})

describe("the explorer on a coordinator", () => {
  const DRUG = { drug: "metformin", outcome_type: "efficacy" }
  const PATH = "/v1/network/drug-outcomes"

  it("in Chromium: offers the network's questions, asks one and draws each axis's forest across the sites, as the API answers it", async () => {
    const browser = await launchChromium()
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
      await page.goto(`${coordinator.url}/docs/explore`)
      await page.waitForSelector("body[data-ready=true]")
      await signIn(page, coordinator.demoToken)
      const paths = await page.$$eval("#domain option", (os) => os.map((o) => (o as HTMLOptionElement).value))
      expect(paths.sort()).toEqual(["/v1/network/device-outcomes", "/v1/network/drug-outcomes", "/v1/network/population"])
      expect(await askThroughForm(page, PATH, DRUG)).toBe("answered")
      const api = await (await call(coordinator, PATH, { body: DRUG })).json()
      expect(JSON.parse((await page.textContent("#answer-json"))!)).toEqual(api)
      // The marks drawn in the page are the ones the view draws in Node from the view representation.
      const drawn = await (await call(coordinator, PATH, { body: DRUG, headers: { accept: "application/vnd.hcc.view+json" } })).json()
      const doc = await (await call(coordinator, "/v1/openapi.json", { token: null })).json()
      const node = await drawView(doc.paths[PATH].post["x-hcc-view"], DRUG, drawn, 1)
      const expected = await markCounts(page, node.svg)
      expect(await markCounts(page, null)).toEqual(expected)
      // A square per site and axis, and the pooled estimate per axis: every row of the forest.
      const rows = drawn.view_data.sites as Array<{ site: string }>
      const forest = node.items.filter((i) => i.role === "mark" && i.marktype === "symbol" && i.datum?.["site"] !== undefined)
      expect(forest.map((i) => i.datum!["site"]).sort()).toEqual(rows.map((r) => r.site).sort())
      const text = (await page.textContent("#chart svg"))!
      for (const site of ["site-1", "site-2", "site-3"]) expect(text).toContain(site)
    } finally {
      await browser.close()
    }
  })
})

describe("small cells across the network", () => {
  it("narrow questions: no site's partial sums, no count or mean resting on 1 to 10 patients of the network (counted by one service over the union)", async () => {
    const rnd = mulberry32(20_261_206)
    const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rnd() * xs.length)]!
    const catalog = await (await call(union, "/v1/catalog")).json()
    const conditions: Array<string> = catalog.vocabularies.condition
    let withheld = 0
    let answered = 0
    for (let i = 0; i < 24; i++) {
      const start = 20 + Math.floor(rnd() * 60)
      const question = {
        analysis_type: "trend",
        granularity: pick(["monthly", "monthly", "quarterly", "yearly"]),
        cohort_definition: { age_range: `${start}-${start + 2 + Math.floor(rnd() * 6)}`, ...(rnd() < 0.5 ? { sex: pick(["female", "male"]) } : {}), ...(rnd() < 0.3 ? { conditions: [pick(conditions)] } : {}) }
      }
      const res = await call(strict, "/v1/network/population", { body: question, headers: { accept: "application/vnd.hcc.view+json" } })
      const body = await res.json()
      expect(JSON.stringify(body)).not.toContain("\"partial\":{")
      if (res.status === 422) continue
      expect(res.status).toBe(200)
      answered++
      const one = await (await call(union, "/v1/population", { body: question, headers: { accept: "application/vnd.hcc.view+json" } })).json()
      expect(body.cohort_size).toBeGreaterThanOrEqual(11)
      for (const m of body.network.members) if (m.cohort_size !== null) expect(m.cohort_size).toBeGreaterThanOrEqual(11)
      const key = question.granularity === "monthly" ? "month" : question.granularity === "quarterly" ? "quarter" : "year"
      for (const period of body.periods as Array<Record<string, any>>) {
        const union = (one.view_data.periods as Array<Record<string, any>>).find((p) => p.period === period[key])
        for (const [field, value] of Object.entries(period)) {
          if (!field.startsWith("avg_")) continue
          const n = union?.[`n_${field.slice(4)}`] ?? 0
          if (value === null) withheld++
          else expect(n, `${period[key]} ${field}`).toBeGreaterThanOrEqual(11)
        }
      }
      for (const row of body.view_data.periods as Array<Record<string, any>>) {
        for (const [field, value] of Object.entries(row)) if (field.startsWith("n_") && value !== null) expect(value).toBeGreaterThanOrEqual(11)
      }
    }
    expect(answered).toBeGreaterThan(3)
    expect(withheld).toBeGreaterThan(0)
  })
})

describe("faults", () => {
  it("a site that drops the connection mid-question and one that never answers: the answer from the other, marked partial, within the deadline", async () => {
    const before = asked
    const res = await call(faulty, "/v1/network/population", { body: QUESTIONS[0] })
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body.network.partial).toBe(true)
    expect(body.network.members.map((m: any) => [m.name, m.status])).toEqual([["site-1", "answered"], ["site-drops", "failed"], ["site-hangs", "timeout"]])
    expect(body.network.members[2].reason).toBe("no answer within 1 s")
    // The answer is the one site's: its cohort, all of the weight.
    const site = await (await call(sites[0]!, "/v1/population", { body: QUESTIONS[0] })).json()
    expect(body.cohort_size).toBe(site.cohort_size)
    expect(body.periods).toEqual(site.periods)
    // A dropped connection is tried once more under the same key; the silent site is asked once.
    expect(asked - before).toBe(3)
  })

  it("no site answering is a 503 naming each site and why", async () => {
    await sites[0]!.stop()
    const res = await call(faulty, "/v1/network/population", { body: QUESTIONS[0] })
    expect(res.status).toBe(503)
    const body = await res.json()
    expect(body.code).toBe("no_member_answered")
    expect(body.detail).toBe("No site of the network answered this question: site-1 failed (the site could not be reached); site-drops failed (the site could not be reached); site-hangs timeout (no answer within 1 s).")
  })
})
