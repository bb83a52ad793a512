/**
 * The guide pages under /docs (docs/api.md, "Guides"): the project's Markdown guides rendered to
 * HTML once, on each page's first request (marked: CommonMark + GFM tables, no network), each page self-contained
 * (one inline stylesheet, no script), linked from each other and from the API reference. Headings
 * get ids, every error code of docs/errors.md gets an anchor — the `type` of a problem answer is
 * `/docs/errors#<code>` — and links between the guides point at their /docs pages.
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { marked } from "marked"
import { PORTAL_PAGE_PATH } from "../portal/links.ts"
import { ERROR_CATALOG } from "./errorCatalog.ts"

/** Guide pages: path under /docs, source file, title. */
export const GUIDES: ReadonlyArray<{ readonly page: string; readonly file: string; readonly title: string }> = [
  { page: "api", file: "api.md", title: "API behaviour" },
  { page: "errors", file: "errors.md", title: "Errors" },
  { page: "analytics", file: "analytics.md", title: "Analytics" },
  { page: "temporal", file: "temporal.md", title: "Temporal rules" },
  { page: "data", file: "data.md", title: "Data" },
  { page: "plugins", file: "plugins.md", title: "Plugins" },
  { page: "network", file: "network.md", title: "Network of sites" },
  { page: "deploy", file: "deploy.md", title: "Deployment" },
  { page: "client", file: "client.md", title: "Client" },
  { page: "client-python", file: "client-python.md", title: "Python client" },
  { page: "cli", file: "cli.md", title: "CLI" },
  { page: "core", file: "core.md", title: "Compute core" }
]

/** The path of a guide page. */
export const guidePath = (page: string) => `/docs/${page}`

const DOCS_DIR = resolve(import.meta.dirname, "../../docs")

export const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")
const slug = (text: string) => text.toLowerCase().replace(/<[^>]+>/g, "").replace(/&[a-z]+;/g, "").replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1b1b}nav{background:#f3f4f6;padding:.6em 1em;border-bottom:1px solid #ddd}
nav a{margin-right:1em}main{max-width:60em;padding:1em 2em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .5em;vertical-align:top}
code{background:#f3f4f6;padding:0 .2em}pre{background:#f3f4f6;padding:.8em;overflow:auto}:target{background:#fff3bf}`

/** Where the explorer's page is served (src/http/Explorer.ts). */
export const EXPLORE_PATH = "/docs/explore"


/**
 * The one navigation of the service's pages: the API reference, the explorer, the account portal
 * and every guide; `current` (a path) marked as the page shown.
 */
export const docsNav = (current: string): string =>
  [["/docs", "API reference"], [EXPLORE_PATH, "Explorer"], [PORTAL_PAGE_PATH, "Account portal"], ...GUIDES.map((g) => [guidePath(g.page), g.title] as const)]
    .map(([href, text]) => `<a href="${href}"${href === current ? ` aria-current="page"` : ""}>${escapeHtml(text)}</a>`)
    .join("")

/** Renders one guide (served at `path`) to a whole HTML page. */
export const renderGuide = (markdown: string, title: string, path: string): string => {
  let body = marked.parse(markdown, { async: false, gfm: true })
  // Headings get ids (for links into a page).
  body = body.replace(/<h([1-4])>([\s\S]*?)<\/h\1>/g, (_m, level: string, inner: string) => `<h${level} id="${slug(inner)}">${inner}</h${level}>`)
  // An error code in the first cell of a table row gets an anchor: /docs/errors#rate_limited.
  const codes = new Set(ERROR_CATALOG.map((e) => e.code))
  body = body.replace(/<tr>\s*<td><code>([a-z_]+)<\/code><\/td>/g, (m, code: string) => (codes.has(code) ? m.replace("<td>", `<td id="${code}">`) : m))
  // Links between the guides go to their pages.
  for (const g of GUIDES) body = body.replaceAll(`href="${g.file}`, `href="${guidePath(g.page)}`)
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — HCC Medical Intelligence API</title>
<style>${STYLE}</style>
</head>
<body>
<nav aria-label="Documentation">${docsNav(path)}</nav>
<main>
${body}
</main>
</body>
</html>`
}

/**
 * The guide pages, path → answer. Each page is rendered on its first request and kept: rendering
 * all of them at start-up would hold the event loop after the server listens, while probes are
 * already being answered.
 */
export const guidePages = (): ReadonlyArray<readonly [string, Effect.Effect<HttpServerResponse.HttpServerResponse>]> =>
  GUIDES.map((g) => {
    const markdown = readFileSync(join(DOCS_DIR, g.file), "utf8")
    let html: string | undefined
    return [guidePath(g.page), Effect.sync(() => HttpServerResponse.html(html ??= renderGuide(markdown, g.title, guidePath(g.page))))] as const
  })
