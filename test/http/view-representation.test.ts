/**
 * The view representation through the door (src/plugin/viewData.ts): `Accept:
 * application/vnd.hcc.view+json` gets the answer and its `view_data` — without which it is exactly
 * the plain answer — charged the same, held to the small-cell rule, the same on a compute thread as
 * on the HTTP thread; `application/json` stays exactly the answer; an endpoint without view data
 * answers JSON whatever is asked; an Idempotency-Key belongs to one representation.
 */
import { Ajv2020 } from "ajv/dist/2020.js"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { VIEW_MEDIA_TYPE } from "../../src/plugin/view.ts"
import { PARTIAL_MEDIA_TYPE } from "../../src/plugin/viewData.ts"
import { drawView } from "../../src/views/render.ts"
import { readmeCalls } from "../support/datasets.ts"
import { call, fixtureDataDir, startServer, type TestServer, waitReady } from "../support/server.ts"

const KNEE = { device_category: "knee_implant", outcome_metrics: ["complication_rate", "revision_rate", "patient_satisfaction"], time_period: "36_months" }
const VIEW = { accept: VIEW_MEDIA_TYPE }

let server: TestServer
let threaded: TestServer
beforeAll(async () => {
  ;[server, threaded] = await Promise.all([
    startServer({ dataDir: fixtureDataDir(inject("fixtureDir")) }),
    startServer({ dataDir: fixtureDataDir(inject("fixtureDir")), env: { HCC_THREADS: "1" } })
  ])
  await Promise.all([waitReady(server), waitReady(threaded)])
}, 180_000)
afterAll(async () => {
  await Promise.all([server?.stop(), threaded?.stop()])
})

const usage = async (s: TestServer) => (await (await call(s, "/v1/usage")).json()).hcc_cost_today as number

describe("the view representation", () => {
  it("is the answer and its view_data, charged as the answer; plain JSON stays exactly the answer", async () => {
    const plain = await call(server, "/v1/device-outcomes", { body: KNEE })
    expect(plain.headers.get("content-type")).toMatch(/^application\/json/)
    const answer = await plain.json()
    expect(answer).not.toHaveProperty("view_data")
    const before = await usage(server)
    const res = await call(server, "/v1/device-outcomes", { body: KNEE, headers: VIEW })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^application\/vnd\.hcc\.view\+json/)
    const { view_data, ...rest } = await res.json()
    expect(rest).toEqual(answer)
    expect(await usage(server) - before).toBe(answer.hcc_cost)
    // Per metric: its studies, then the pooled row at the answer's value.
    for (const metric of KNEE.outcome_metrics) {
      const rows = view_data.forest.filter((r: any) => r.metric === metric)
      expect(rows.at(-1)).toMatchObject({ kind: "pooled", estimate: answer.outcomes[metric] })
      expect(rows.slice(0, -1).every((r: any) => r.kind === "study")).toBe(true)
      expect(rows.length - 1).toBeLessThanOrEqual(answer.studies_analyzed)
      const pooled = rows.at(-1)
      if (pooled.i2 !== null) expect(pooled.i2).toBeGreaterThanOrEqual(0)
      if (pooled.i2 !== null) expect(pooled.i2).toBeLessThanOrEqual(1)
    }
  })

  it("withholds a study's figures resting on a small cell and says so in view_data.suppressed", async () => {
    const { view_data } = await (await call(server, "/v1/device-outcomes", { body: KNEE, headers: VIEW })).json()
    const rows: Array<any> = view_data.forest
    const rate = rows.filter((r) => r.kind === "study" && r.metric === "complication_rate")
    // Knee implants' complications are rare: few studies have 11 or more events and non-events.
    const withheld = rate.filter((r) => r.estimate === null)
    expect(withheld.length).toBeGreaterThan(0)
    for (const r of withheld) expect([r.ci_low, r.ci_high]).toEqual([null, null])
    const suppressed: Array<string> = view_data.suppressed
    for (const r of withheld) expect(suppressed).toContain(`/view_data/forest/${rows.indexOf(r)}/estimate`)
    expect(suppressed.every((p) => p.startsWith("/view_data/"))).toBe(true)
    for (const r of rows) if (r.n !== null) expect(r.n === 0 || r.n >= 11).toBe(true)
  })

  it("is what the OpenAPI document says it is: the 200's answer and view_data", async () => {
    const doc = await (await call(server, "/v1/openapi.json", { token: null })).json()
    const content = doc.paths["/v1/device-outcomes"].post.responses["200"].content
    expect(Object.keys(content)).toEqual(["application/json", VIEW_MEDIA_TYPE, PARTIAL_MEDIA_TYPE])
    // The partial representation (a network's sites answer it) is what the document says too.
    const validatePartial = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile({ ...content[PARTIAL_MEDIA_TYPE].schema, components: doc.components })
    const partial = await call(server, "/v1/device-outcomes", { body: KNEE, headers: { accept: PARTIAL_MEDIA_TYPE } })
    expect(partial.headers.get("content-type")).toMatch(/^application\/vnd\.hcc\.partial\+json/)
    const partialBody = await partial.json()
    expect(validatePartial(partialBody), JSON.stringify(validatePartial.errors)).toBe(true)
    const validate = new Ajv2020({ strict: false, allErrors: true, validateFormats: false }).compile({ ...content[VIEW_MEDIA_TYPE].schema, components: doc.components })
    const body = await (await call(server, "/v1/device-outcomes", { body: KNEE, headers: VIEW })).json()
    expect(validate(body), JSON.stringify(validate.errors)).toBe(true)
    expect(validate({ ...body, view_data: undefined })).toBe(false)
    expect(doc.paths["/v1/clinical"].post.responses["200"].content).not.toHaveProperty([VIEW_MEDIA_TYPE])
    expect(doc.paths["/v1/risk-model"].post.responses["200"].content).toHaveProperty([VIEW_MEDIA_TYPE])
  })

  it("is the same answered on a compute thread", async () => {
    const here = await (await call(server, "/v1/device-outcomes", { body: KNEE, headers: VIEW })).json()
    const there = await call(threaded, "/v1/device-outcomes", { body: KNEE, headers: VIEW })
    expect(there.headers.get("content-type")).toMatch(/^application\/vnd\.hcc\.view\+json/)
    expect(await there.json()).toEqual(here)
  })

  it("is plain JSON where an endpoint has no view data, or where JSON is preferred", async () => {
    const [, clinicalBody] = readmeCalls().find(([p]) => p === "/v1/clinical")!
    const clinical = await call(server, "/v1/clinical", { body: clinicalBody, headers: VIEW })
    expect(clinical.status).toBe(200)
    expect(clinical.headers.get("content-type")).toMatch(/^application\/json/)
    expect(await clinical.json()).not.toHaveProperty("view_data")
    const preferred = await call(server, "/v1/device-outcomes", { body: KNEE, headers: { accept: `application/json, ${VIEW_MEDIA_TYPE};q=0.5` } })
    expect(await preferred.json()).not.toHaveProperty("view_data")
  })

  it("keeps an Idempotency-Key to one representation: replayed as it was asked, refused for the other", async () => {
    const key = "view-representation-key-1"
    const first = await call(server, "/v1/device-outcomes", { body: KNEE, headers: { ...VIEW, "idempotency-key": key } })
    const again = await call(server, "/v1/device-outcomes", { body: KNEE, headers: { ...VIEW, "idempotency-key": key } })
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expect(again.headers.get("content-type")).toMatch(/^application\/vnd\.hcc\.view\+json/)
    expect(await again.json()).toEqual(await first.json())
    const other = await call(server, "/v1/device-outcomes", { body: KNEE, headers: { "idempotency-key": key } })
    expect(other.status).toBe(422)
    expect((await other.json()).code).toBe("idempotency_key_reused")
  })
})

describe("charts drawn from real view representations", () => {
  it("one-health: both weekly series, the animal one shifted by the lag; one bar per lag, the lag found the tallest; the threshold across", async () => {
    const [, body] = readmeCalls().find(([path]) => path === "/v1/one-health")!
    const res = await call(server, "/v1/one-health", { body, headers: VIEW })
    const answer = await res.json()
    const { view_data } = answer
    expect(view_data.correlation.map((c: any) => c.lag_days)).toEqual([0, 7, 14, 21, 28, 35, 42, 49, 56])
    const best = view_data.correlation.reduce((a: any, c: any) => (c.r !== null && (a === undefined || c.r > a.r) ? c : a), undefined)
    expect(best.r).toBe(answer.correlation_strength)
    expect(`${best.lag_days}_days`).toBe(answer.temporal_lag)
    if (answer.correlation_found) expect(answer.correlation_strength).toBeGreaterThan(view_data.threshold)
    else if (view_data.threshold !== null) expect(answer.correlation_strength).toBeLessThanOrEqual(view_data.threshold)
    const { items } = await drawView(builtins.find((p) => p.name === "one-health")!.view!, body, answer)
    const rects = items.filter((i) => i.role === "mark" && i.marktype === "rect")
    const bars = rects.filter((r) => r.datum!.lag_days !== undefined)
    expect(bars.map((b) => [b.datum!.lag_days, b.datum!.r])).toEqual(view_data.correlation.filter((c: any) => c.r !== null).map((c: any) => [c.lag_days, c.r]))
    // Each week whose human count is withheld (listed in view_data.suppressed) is one grey band.
    const withheld = (view_data.suppressed ?? []).map((p: string) => view_data.weeks[Number(p.split("/")[3])].week).sort()
    expect(withheld.length).toBeGreaterThan(0)
    expect(rects.filter((r) => r.datum!.lag_days === undefined).map((r) => r.datum!.week)).toEqual(withheld)
    expect(items.filter((i) => i.role === "mark" && i.marktype === "rule").map((r) => r.datum!.threshold)).toEqual(view_data.threshold === null ? [] : [view_data.threshold])
    const lines = items.filter((i) => i.role === "mark" && i.marktype === "line")
    const human = lines.filter((l) => l.datum!.series === "human")
    expect(human).toHaveLength(view_data.weeks.filter((w: any) => w.human !== null).length)
    const animal = lines.filter((l) => l.datum!.series === "animal")
    const first = view_data.weeks.findIndex((w: any) => w.animal !== null)
    const shifted = animal.find((l) => l.datum!.week === view_data.weeks[first].week)!
    expect((shifted.datum!.date as Date).getTime() - Date.parse(view_data.weeks[first].week)).toBe(view_data.lag_weeks * 7 * 86_400_000)
  })
})

describe("the README's questions as view representations", () => {
  const ask = async (path: string) => {
    const [, body] = readmeCalls().find(([p]) => p === path)!
    const plain = await (await call(server, path, { body })).json()
    const res = await call(server, path, { body, headers: VIEW })
    const { view_data, ...rest } = await res.json()
    expect(rest).toEqual(plain)
    return { body, answer: { ...plain, view_data }, view_data, view: builtins.find((p) => p.path === path)!.view! }
  }

  it("drug-outcomes: each target axis's d inside its interval, the efficacy score their mean; drawn as a point and an interval per axis", async () => {
    const { answer, body, view, view_data } = await ask("/v1/drug-outcomes")
    const effects: Array<any> = view_data.effects
    expect(effects.map((e) => e.axis)).toEqual(Object.keys(answer.axis_breakdown))
    for (const e of effects) expect(e.ci_low < e.d && e.d < e.ci_high).toBe(true)
    const mean = effects.reduce((s, e) => s + e.d, 0) / effects.length
    expect(Math.abs(mean - answer.efficacy_score)).toBeLessThanOrEqual(0.001)
    const { items } = await drawView(view, body, answer)
    const points = items.filter((i) => i.role === "mark" && i.marktype === "symbol")
    expect(points.map((p) => [p.datum!.axis, p.datum!.d])).toEqual(effects.map((e) => [e.axis, e.d]))
    const intervals = items.filter((i) => i.role === "mark" && i.marktype === "rule" && i.datum!.ci_low !== undefined && i.datum!.d !== undefined)
    expect(intervals.length).toBeGreaterThanOrEqual(effects.length)
  })

  it("population: each period's patients and an interval around each mean, drawn as a band per axis around its line", async () => {
    const { answer, body, view, view_data } = await ask("/v1/population")
    const key = "quarter"
    expect(view_data.periods.map((p: any) => p.period)).toEqual(answer.periods.map((p: any) => p[key]))
    let checked = 0
    for (const [i, period] of (answer.periods as Array<Record<string, any>>).entries()) {
      for (const field of Object.keys(period).filter((f) => f.startsWith("avg_") && period[f] !== null)) {
        const axis = field.slice(4)
        const shown = view_data.periods[i]
        expect(shown[`n_${axis}`]).toBeGreaterThanOrEqual(11)
        expect(shown[`low_${axis}`] < period[field] && period[field] < shown[`high_${axis}`], `${period[key]} ${axis}`).toBe(true)
        checked++
      }
    }
    expect(checked).toBeGreaterThan(0)
    const { items } = await drawView(view, body, answer)
    const bands = items.filter((i) => i.role === "mark" && i.marktype === "area")
    const expected = view_data.periods.flatMap((p: any) => Object.keys(p).filter((f) => f.startsWith("low_") && p[f] !== null).map((f) => [p.period, f.slice(4), p[f], p[`high_${f.slice(4)}`]]))
    expect(bands.map((b) => [b.datum!.period, b.datum!.axis, b.datum!.low, b.datum!.high]).sort()).toEqual(expected.sort())
    // The points carry each mean's patients for their tooltips.
    const points = items.filter((i) => i.role === "mark" && i.marktype === "symbol")
    expect(points.every((p) => typeof p.datum!.n === "number")).toBe(true)
  })

  it("temporal: a band around every prediction, drawn as an area from where the points end", async () => {
    const { answer, body, view, view_data } = await ask("/v1/temporal")
    for (const [axis, preds] of Object.entries(answer.predicted_trajectory as Record<string, Array<number>>)) {
      const band = view_data.band.filter((b: any) => b.axis === axis)
      expect(band.map((b: any) => b.index)).toEqual(preds.map((_, i) => i))
      for (const [i, b] of band.entries()) expect(b.lo <= preds[i]! && preds[i]! <= b.hi).toBe(true)
      // The band widens as the prediction reaches further.
      expect(band.at(-1).hi - band.at(-1).lo).toBeGreaterThanOrEqual(band[0].hi - band[0].lo)
    }
    const { items } = await drawView(view, body, answer)
    const area = items.filter((i) => i.role === "mark" && i.marktype === "area")
    const given = (body as { patient_axes: Record<string, Array<number>> }).patient_axes
    expect(area.map((a) => [a.datum!.axis, a.datum!.step])).toEqual(view_data.band.map((b: any) => [b.axis, given[b.axis]!.length + b.index]))
  })
})
