/**
 * Problem types that lead somewhere: every code of the error catalogue resolves, through its
 * `type` URI, to an anchor of the errors guide served under /docs; the guide pages are rendered
 * offline, self-contained (no script, nothing loaded from elsewhere) and linked from the API
 * reference and from each other.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ERROR_CATALOG } from "../../src/http/errorCatalog.ts"
import { GUIDES } from "../../src/http/Guides.ts"
import { call, startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer
const pages = new Map<string, string>()
const page = async (path: string) => {
  let html = pages.get(path)
  if (html === undefined) {
    const res = await call(server, path, { token: null })
    expect(res.status, path).toBe(200)
    expect(res.headers.get("content-type")).toContain("text/html")
    pages.set(path, html = await res.text())
  }
  return html
}

beforeAll(async () => {
  server = await startServer()
  await waitReady(server)
})
afterAll(async () => {
  await server.stop()
})

describe("problem types", () => {
  it("every catalogued code's type URI leads to an anchor of the errors guide", async () => {
    for (const { code } of ERROR_CATALOG) {
      const target = new URL(`/docs/errors#${code}`, server.url)
      const html = await page(target.pathname)
      expect(html, code).toContain(`id="${target.hash.slice(1)}"`)
    }
  })
  it("an actual problem answer carries that type, and it resolves", async () => {
    const res = await call(server, "/nowhere", { token: null })
    const body = (await res.json()) as { type: string; code: string }
    expect(body.type).toBe("/docs/errors#not_found")
    const target = new URL(body.type, `${server.url}/nowhere`)
    expect(await page(target.pathname)).toContain(`id="not_found"`)
  })
})

describe("guide pages", () => {
  it("are linked from the API reference (its description) and answer 200, self-contained, with a strict CSP", async () => {
    const doc = (await (await call(server, "/v1/openapi.json", { token: null })).json()) as { info: { description: string } }
    for (const g of GUIDES) {
      expect(doc.info.description).toContain(`(/docs/${g.page})`)
      const res = await call(server, `/docs/${g.page}`, { token: null })
      expect(res.status).toBe(200)
      const html = await res.text()
      expect(html).toContain(`<title>${g.title}`)
      expect(html).not.toMatch(/<script|<link[^>]+stylesheet|src="https?:/)
      const csp = res.headers.get("content-security-policy")!
      expect(csp).toContain("default-src 'none'")
      expect(csp).toMatch(/style-src 'sha256-/)
      // Links between guides point at their pages.
      expect(html).not.toMatch(/href="(api|errors|analytics|temporal|data|plugins|deploy|client|cli|core)\.md/)
      for (const other of GUIDES) expect(html).toContain(`href="/docs/${other.page}"`)
    }
  })
  it("share one navigation with the explorer and the account portal, each page marked where it is", async () => {
    const navOf = (html: string) => /<nav aria-label="Documentation">([\s\S]*?)<\/nav>/.exec(html)?.[1]
    const links = (nav: string) => [...nav.matchAll(/<a href="([^"]+)"/g)].map((m) => m[1])
    const explorer = navOf(await page("/docs/explore"))!
    expect(explorer).toContain(`<a href="/docs/explore" aria-current="page">`)
    for (const path of [...GUIDES.map((g) => `/docs/${g.page}`), "/portal"]) {
      const nav = navOf(await page(path))!
      expect(links(nav)).toEqual(links(explorer))
      expect([...nav.matchAll(/<a href="([^"]+)" aria-current="page"/g)].map((m) => m[1])).toEqual([path])
    }
    expect(links(explorer)).toEqual(["/docs", "/docs/explore", "/portal", ...GUIDES.map((g) => `/docs/${g.page}`)])
  })
})
