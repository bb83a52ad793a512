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
import { drawView } from "../../src/views/render.ts"
import { launchChromium } from "../../scripts/chromium.ts"
import { readmeCalls } from "../support/datasets.ts"
import { call, fixtureDataDir, fixturePlugin, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer
let browser: Browser
let page: Page
const violations: Array<string> = []
let openapi: any

/** Marks by type in an SVG the way Vega draws them: `g.mark-<type>.role-mark`, one child per item. */
const markCounts = (p: Page, svg: string | null): Promise<Record<string, number>> =>
  p.evaluate((markup) => {
    const root = markup === null ? document.querySelector("#chart svg") : new DOMParser().parseFromString(markup, "image/svg+xml").documentElement
    const counts: Record<string, number> = {}
    for (const g of root?.querySelectorAll("g.role-mark") ?? []) {
      const type = [...g.classList].find((c) => c.startsWith("mark-"))!.slice(5)
      counts[type] = (counts[type] ?? 0) + g.children.length
    }
    return counts
  }, svg)

const ask = async (path: string, body: unknown) => {
  await page.selectOption("#domain", path)
  if (!(await page.locator("details:has(#request-json)").evaluate((d) => (d as HTMLDetailsElement).open))) await page.click("text=The request as JSON")
  await page.fill("#request-json", JSON.stringify(body))
  await page.click("#use-json")
  await page.click("#ask-button")
  await page.waitForSelector("body[data-state=answered], body[data-state=problem]")
  return page.evaluate(() => document.body.dataset["state"])
}

beforeAll(async () => {
  server = await startServer({ dataDir: fixtureDataDir(inject("fixtureDir")), env: { HCC_PLUGINS: fixturePlugin("series-chart") } })
  await waitReady(server)
  openapi = await (await call(server, "/v1/openapi.json", { token: null })).json()
  browser = await launchChromium()
  page = await browser.newPage({ viewport: { width: 1200, height: 1400 } })
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
    await page.fill("#token", server.demoToken)
    await page.click("text=Use this token")
    await page.waitForSelector("#ask:not([hidden])")
    expect(await page.textContent("#token-problem")).toBe("")
    // The catalog's endpoints, the third party's among them.
    const paths = await page.$$eval("#domain option", (os) => os.map((o) => (o as HTMLOptionElement).value))
    expect(paths).toEqual(expect.arrayContaining(["/v1/population", "/v1/series-chart"]))
  })

  const calls = readmeCalls()
  it("has the README's seven questions to ask", () => {
    expect(calls.map(([path]) => path).sort()).toEqual(["/v1/clinical", "/v1/device-outcomes", "/v1/drug-outcomes", "/v1/one-health", "/v1/population", "/v1/risk-model", "/v1/temporal"])
  })

  it.each(calls.map(([path, body]) => [path, body] as const))("%s: the README's question is answered, drawn, and shown as the API answers it", async (path, body) => {
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
    const expected = await markCounts(page, (await drawView(view, body, drawn)).svg)
    expect(Object.values(expected).reduce((a, b) => a + b, 0)).toBeGreaterThan(0)
    expect(await markCounts(page, null)).toEqual(expected)
    expect((await page.textContent("#chart svg"))!.length).toBeGreaterThan(0)
    // Named by its title for every reader: the figure's caption and the chart's accessible name
    // (the SVG's own tick labels and marks hidden from assistive technology).
    const caption = (await page.textContent("#chart-caption"))!
    expect(caption.length).toBeGreaterThan(10)
    expect(await page.getAttribute("#chart", "aria-label")).toBe(caption)
    expect(await page.getAttribute("#chart svg", "aria-hidden")).toBe("true")
    // A table beside the chart, and the same call as snippets (which never hold the token).
    expect(await page.locator("#chart-tables table").count()).toBeGreaterThan(0)
    for (const id of ["#snippet-curl", "#snippet-python", "#snippet-typescript"]) {
      const text = (await page.textContent(id))!
      // The path, or the TypeScript client's method for it.
      expect(text).toMatch(id === "#snippet-typescript" ? /await hcc\.[a-zA-Z]+\(\{/ : new RegExp(path))
      expect(text).toContain(JSON.stringify(Object.keys(body as object)[0]))
      expect(text).not.toContain(server.demoToken)
    }
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

  it("has a skip link to the content, and at a phone's 390 px nothing scrolls sideways; axe-core finds no serious violation", async () => {
    expect(await page.getAttribute("a.skip", "href")).toBe("#main")
    expect(await ask("/v1/temporal", calls.find(([p]) => p === "/v1/temporal")![1])).toBe("answered")
    await page.setViewportSize({ width: 390, height: 844 })
    try {
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390)
      await page.evaluate(readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8"))
      const result = await page.evaluate(() => (window as any).axe.run(document, { resultTypes: ["violations"] }))
      const serious = (result.violations as Array<{ id: string; impact: string }>).filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => v.id)
      expect(serious).toEqual([])
    } finally {
      await page.setViewportSize({ width: 1200, height: 1400 })
    }
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
    await page.fill("#token", server.demoToken)
    await page.click("text=Use this token")
    await page.waitForSelector("#ask:not([hidden])")
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
