/**
 * The explorer (/docs/explore) in a real browser: Debian's Chromium driven by playwright-core
 * (the system browser; nothing is downloaded). A person signs in with a token, asks each of the
 * README's seven questions through the form, and sees the chart — the marks the view draws from
 * that answer — beside the answer's JSON, which equals the API's; problems are shown where they
 * belong (401 at the token, a 400's pointer and a 422's unknown name at their field, a 429 and its
 * wait at the Ask button); the token
 * never reaches the address bar, a cookie or the server's log; a third-party plugin's view is
 * drawn the same way; and the page's Content-Security-Policy (no inline script, no eval) holds.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { type PluginView, VIEW_MEDIA_TYPE } from "../../src/plugin/view.ts"
import { type DrawnItem, drawView } from "../../src/views/render.ts"
import { launchChromium } from "../../scripts/chromium.ts"
import { readmeCalls } from "../support/datasets.ts"
import { askThroughForm, markCounts, signIn } from "../support/explorer.ts"
import { call, fixtureDataDir, fixturePlugin, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer
let browser: Browser
let page: Page
const violations: Array<string> = []
let openapi: any

const ask = (path: string, body: unknown) => askThroughForm(page, path, body)

/** The screens every README question is drawn at: a laptop's, and a phone's. */
const SCREENS = [[1280, 800], [390, 844]] as const

/** A cohort narrow enough (13 patients in the fixture) that many of its monthly means rest on fewer than 11 patients. */
const NARROW = { cohort_definition: { age_range: "57-59", sex: "female", conditions: ["heart_failure"] }, analysis_type: "trend", granularity: "monthly" }

/** axe-core's serious and critical violations on the page as it is now. */
const seriousViolations = async (): Promise<Array<string>> => {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8"))
  const result = await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ["violations"] }))
  return (result.violations as Array<{ id: string; impact: string; nodes: Array<{ target: Array<string> }> }>)
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`)
}

/**
 * The forest plot as the browser drew it, against the answer: each diamond spans its pooled
 * interval (its ends where vega puts the interval's ends, in the same SVG units); the squares'
 * areas are in the ratio of their studies' weights; the estimate [95 % CI] and weight columns are there.
 */
const forestAsDrawn = async (items: ReadonlyArray<DrawnItem>, drawn: any) => {
  const trails = items.filter((i) => i.role === "mark" && i.marktype === "trail")
  const ends = [...Map.groupBy(trails, (t) => t.datum!.metric as string).values()].map((points) => [Math.min(...points.map((p) => p.x!)), Math.max(...points.map((p) => p.x!))])
  const diamonds = await page.$$eval("#chart g.mark-trail path", (ps) => ps.map((p) => { const b = (p as SVGGraphicsElement).getBBox(); return [b.x, b.x + b.width] }))
  expect(diamonds.length).toBe(drawn.view_data.forest.filter((r: any) => r.kind === "pooled" && r.estimate !== null).length)
  // Within a pixel: the outline's tip is drawn half a pixel beyond the point it ends at.
  for (const [i, [lo, hi]] of diamonds.entries()) {
    expect(Math.abs(lo! - ends[i]![0]!)).toBeLessThanOrEqual(1)
    expect(Math.abs(hi! - ends[i]![1]!)).toBeLessThanOrEqual(1)
  }
  const squares = items.filter((i) => i.role === "mark" && i.marktype === "symbol" && i.datum!.kind === "study")
  const sides = await page.$$eval("#chart g.mark-symbol path", (ps) => ps.map((p) => (p as SVGGraphicsElement).getBBox().width))
  expect(sides.length).toBe(squares.length)
  const perWeight = sides.map((side, i) => side ** 2 / (squares[i]!.datum!.weight as number))
  for (const r of perWeight) expect(r / perWeight[0]!).toBeCloseTo(1, 1)
  const text = (await page.textContent("#chart svg"))!
  expect(text).toContain("Estimate [95 % CI]")
  expect(text).toContain("Weight")
  for (const s of squares) expect(text).toContain(s.datum!.estimate_text as string)
}

beforeAll(async () => {
  server = await startServer({ dataDir: fixtureDataDir(inject("fixtureDir")), env: { HCC_PLUGINS: fixturePlugin("series-chart") } })
  await waitReady(server)
  openapi = await (await call(server, "/v1/openapi.json", { token: null })).json()
  browser = await launchChromium()
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
  page.on("console", (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) violations.push(m.text())
  })
  await page.goto(`${server.url}/docs/explore`)
  await page.waitForSelector("body[data-ready=true]")
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe("the explorer in Chromium", () => {
  it("refuses a bad token at the token field, then signs in with a good one", async () => {
    await page.fill("#token", "hcc_not_a_real_token")
    await page.click("text=Use this token")
    await expect.poll(() => page.textContent("#token-problem")).toContain("401")
    expect(await page.isHidden("#ask")).toBe(true)
    await signIn(page, server.demoToken)
    expect(await page.textContent("#token-problem")).toBe("")
    // The catalog's endpoints, the third party's among them.
    const paths = await page.$$eval("#domain option", (os) => os.map((o) => (o as HTMLOptionElement).value))
    expect(paths).toEqual(expect.arrayContaining(["/v1/population", "/v1/series-chart"]))
  })

  const calls = readmeCalls()
  it("has the README's seven questions to ask", () => {
    expect(calls.map(([path]) => path).sort()).toEqual(["/v1/clinical", "/v1/device-outcomes", "/v1/drug-outcomes", "/v1/one-health", "/v1/population", "/v1/risk-model", "/v1/temporal"])
  })

  it.each(SCREENS.flatMap(([width, height]) => calls.map(([path, body]) => [width, height, path, body] as const)))(
    "at %i×%i, %s: the README's question is answered, drawn, shown as the API answers it; nothing scrolls sideways, axe-core finds no serious violation",
    async (width, height, path, body) => {
      await page.setViewportSize({ width, height })
      expect(await ask(path, body)).toBe("answered")
      const shown = JSON.parse((await page.textContent("#answer-json"))!)
      const api = await (await call(server, path, { token: server.demoToken, body })).json()
      expect(shown).toEqual(api)
      expect(await page.textContent("#answer-cost")).toContain(`hcc_cost ${api.hcc_cost}`)
      expect(await page.textContent("#answer-cost")).toMatch(/burst: [\d,]+ left/)
      // The chart: the marks the view draws from the answer's view representation (the page asks
      // for it), as vega draws them in Node.
      const drawn = await (await call(server, path, { token: server.demoToken, body, headers: { accept: VIEW_MEDIA_TYPE } })).json()
      const view: PluginView = openapi.paths[path].post["x-hcc-view"]
      const node = await drawView(view, body, drawn, 11)
      const expected = await markCounts(page, node.svg)
      expect(Object.values(expected).reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
      expect(await markCounts(page, null)).toEqual(expected)
      expect((await page.textContent("#chart svg"))!.length).toBeGreaterThan(0)
      // Named by its title for every reader: the figure's caption and the chart's accessible name
      // (the SVG's own tick labels and marks hidden from assistive technology).
      const caption = (await page.textContent("#chart-caption"))!
      expect(caption.length).toBeGreaterThan(10)
      expect(await page.getAttribute("#chart", "aria-label")).toBe(caption)
      expect(await page.getAttribute("#chart svg", "aria-hidden")).toBe("true")
      // The numbers beside the chart, and the same call as snippets (which never hold the token).
      expect(await page.locator("#chart-tables table, #chart-tables ol").count()).toBeGreaterThan(0)
      expect(JSON.parse((await page.textContent("#chart-spec"))!).$schema).toBe("https://vega.github.io/schema/vega-lite/v6.json")
      for (const id of ["#snippet-curl", "#snippet-python", "#snippet-typescript"]) {
        const text = (await page.textContent(id))!
        // The path, or the TypeScript client's method for it.
        expect(text).toMatch(id === "#snippet-typescript" ? /await hcc\.[a-zA-Z]+\(\{/ : new RegExp(path))
        expect(text).toContain(JSON.stringify(Object.keys(body as object)[0]))
        expect(text).not.toContain(server.demoToken)
      }
      if (path === "/v1/device-outcomes") await forestAsDrawn(node.items, drawn)
      if (path === "/v1/clinical") expect(await page.$$eval("#chart-tables ol li", (li) => li.map((l) => l.textContent))).toEqual(api.reasoning_chain)
      // Any screen: the page never scrolls sideways (a chart shrinks to its box); any reader.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width)
      expect(await seriousViolations()).toEqual([])
    }
  )

  it("a narrow cohort's chart says what is withheld and why, with the threshold, and no text overlaps", async () => {
    await page.setViewportSize({ width: 1280, height: 800 })
    expect(await ask("/v1/population", NARROW)).toBe("answered")
    // The page asks for the view representation: the means withheld, and each one's patients and interval ends.
    const api = await (await call(server, "/v1/population", { token: server.demoToken, body: NARROW, headers: { accept: VIEW_MEDIA_TYPE } })).json()
    expect(api.suppressed.length).toBeGreaterThan(0)
    const caption = (await page.textContent("#chart-caption"))!
    expect(caption).toContain(`Withheld: ${api.suppressed.length + api.view_data.suppressed.length} values rest on fewer than 11 patients (the small-cell rule)`)
    expect(caption).toContain("Bands: the 95 % interval of each mean (patients as clusters)")
    expect(caption).toContain("Shaded: a period with an axis mean withheld")
    expect(await page.textContent("#chart-tables")).toContain("withheld (fewer than 11)")
    // One band per period with a withheld mean, and no two texts of the chart overlapping.
    const periods = new Set(api.suppressed.map((p: string) => p.split("/")[2]))
    expect(await page.locator("#chart g.mark-rect path").count()).toBe(periods.size)
    const boxes = await page.$$eval("#chart svg text", (ts) =>
      ts.filter((t) => (t.textContent ?? "").trim() !== "").map((t) => {
        const r = t.getBoundingClientRect()
        return { text: t.textContent, left: r.left, right: r.right, top: r.top, bottom: r.bottom }
      }))
    const overlapping = boxes.flatMap((a, i) =>
      boxes.slice(i + 1).filter((b) => a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5).map((b) => `${a.text} × ${b.text}`))
    expect(overlapping).toEqual([])
    expect(await seriousViolations()).toEqual([])
  })

  it("shows a 422's unknown name and its suggestions at the field it concerns", async () => {
    expect(await ask("/v1/drug-outcomes", { drug: "metformn", outcome_type: "efficacy" })).toBe("problem")
    const text = await page.textContent("#field-drug-problem")
    expect(text).toContain("metformn")
    expect(text).toContain("metformin")
    expect(await page.getAttribute("#field-drug", "aria-invalid")).toBe("true")
  })

  it("after a problem with no field at fault, focus is on the message (a 422 cohort too small)", async () => {
    expect(await ask("/v1/population", { cohort_definition: { age_range: "18-19", axes_threshold: { PO: { min: 9.9 } }, conditions: ["type_2_diabetes"] }, analysis_type: "trend", granularity: "quarterly" })).toBe("problem")
    expect(await page.textContent("#ask-problem")).toContain("422")
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("ask-problem")
  })

  it("has a skip link to the content", async () => {
    expect(await page.getAttribute("a.skip", "href")).toBe("#main")
    expect(await page.getAttribute("main", "id")).toBe("main")
  })

  it("shows a 400's located error at the field its pointer names", async () => {
    expect(await ask("/v1/risk-model", { patient_profile: { axes_snapshot: { PO: 11 } }, risk_type: "cardiovascular" })).toBe("problem")
    expect(await page.textContent("#field-patient_profile-axes_snapshot-PO-problem")).toContain("/patient_profile/axes_snapshot/PO")
    expect(await page.getAttribute("#field-patient_profile-axes_snapshot-PO", "aria-invalid")).toBe("true")
    expect(await page.textContent("#ask-problem")).toContain("400")
  })

  it("draws a third-party plugin's declared view", async () => {
    expect(await ask("/v1/series-chart", { values: [1, 3, 2, 6] })).toBe("answered")
    expect(await markCounts(page, null)).toMatchObject({ rect: 4, rule: 1 })
    expect(await page.textContent("#chart svg")).toContain("Series of 4 values, mean 3")
  })

  it("shows a 429 at the Ask button with its wait, and the limits left after each answer", async () => {
    const limited = newAccount(server, { tier: "starter", dailyLimit: 1 })
    await page.click("#sign-out")
    await page.fill("#token", limited.token)
    await page.click("text=Use this token")
    await page.waitForSelector("#ask:not([hidden])")
    expect(await ask("/v1/series-chart", { values: [1, 2] })).toBe("answered")
    expect(await page.textContent("#answer-cost")).toMatch(/daily: 0 left/)
    expect(await ask("/v1/series-chart", { values: [1, 2] })).toBe("problem")
    const problem = (await page.textContent("#ask-problem"))!
    expect(problem).toContain("429 rate_limited (daily)")
    expect(problem).toMatch(/Try again in \d+ s\./)
    // Back to the demo account for what follows.
    await page.click("#sign-out")
    await signIn(page, server.demoToken)
  })

  it("never puts the token in the address, a cookie or the server's log, and breaks no policy", async () => {
    expect(page.url()).toBe(`${server.url}/docs/explore`)
    expect(await page.context().cookies()).toEqual([])
    expect(server.stdout()).not.toContain(server.demoToken)
    expect(server.stderr()).not.toContain(server.demoToken)
    expect(violations).toEqual([])
    const csp = (await call(server, "/docs/explore", { token: null })).headers.get("content-security-policy")!
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toMatch(/script-src[^;]*'unsafe-(inline|eval)'/)
  })

  it("serves the bundle with a validator: a second fetch with its ETag is a 304", async () => {
    const first = await call(server, "/docs/explore/app.js", { token: null })
    expect(first.status).toBe(200)
    expect(first.headers.get("content-type")).toContain("javascript")
    const etag = first.headers.get("etag")!
    expect(etag).toMatch(/^"/)
    const again = await call(server, "/docs/explore/app.js", { token: null, headers: { "if-none-match": etag } })
    expect(again.status).toBe(304)
  })
})
