/**
 * The explorer (docs/explore.md) under /docs — the one human-facing path that answers without a
 * token — so a person can open it, then paste a token the page keeps in the tab: the page at
 * /docs/explore and its script and stylesheet, bundled by `npm run build` (scripts/build-explore.ts)
 * into build/explore. Its Content-Security-Policy allows scripts and styles from this origin only:
 * no inline script, no eval (charts are drawn by Vega's interpreter), calls to this origin only.
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { docsNav, EXPLORE_PATH } from "./Guides.ts"
import { pageCsp } from "./Hygiene.ts"

export { EXPLORE_PATH }
const BUILD = resolve(import.meta.dirname, "../../build")

/** The assets: path, file in build/explore, media type. */
export const EXPLORE_ASSETS: ReadonlyArray<readonly [string, string, string]> = [
  [`${EXPLORE_PATH}/app.js`, "app.js", "text/javascript; charset=utf-8"],
  [`${EXPLORE_PATH}/style.css`, "style.css", "text/css; charset=utf-8"]
]

/**
 * The page's policy. Vega's SVG renderer sets a few style attributes on the elements it draws
 * (cursor, font), so style attributes are allowed (`style-src-attr`); style elements and
 * stylesheets only from this origin.
 */
export const EXPLORE_CSP = pageCsp("'self'", "'self'", ["style-src-attr 'unsafe-inline'"])

/** The head of a page whose script and stylesheet are bundled under `base` (the explorer's, the portal's). */
export const bundledPageHead = (title: string, base: string): string => `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} — HCC Medical Intelligence API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${base}/style.css">
<script type="module" src="${base}/app.js"></script>
</head>
`

const page = (): string => {
  return `${bundledPageHead("Explorer", EXPLORE_PATH)}<body>
<a class="skip" href="#main">Skip to the content</a>
<nav aria-label="Documentation">${docsNav(EXPLORE_PATH)}</nav>
<main id="main" tabindex="-1">
<h1>Explorer</h1>
<p>Ask any endpoint and see its answer drawn. Answers are statistics over the service's dataset, not medical advice.</p>
<noscript><p class="problem">The explorer needs JavaScript; the API reference at /docs does not.</p></noscript>
<section aria-labelledby="token-heading">
<h2 id="token-heading">Token</h2>
<form id="token-form" autocomplete="off">
<label for="token">Bearer token</label>
<input id="token" type="password" autocomplete="off" spellcheck="false" aria-describedby="token-help token-problem">
<button type="submit">Use this token</button>
<button type="button" id="sign-out">Forget the token</button>
<p id="token-help"><small>Kept in this browser tab only (cleared when the tab closes): never in the address, a cookie or a log. A token comes from <code>hcc tokens issue</code>; the demo token is in <code>$HCC_DATA_DIR/demo.token</code>.</small></p>
<p id="token-problem" class="problem" role="alert"></p>
<p id="token-state" role="status"></p>
</form>
</section>
<div class="workspace">
<section id="ask" aria-labelledby="ask-heading" hidden>
<h2 id="ask-heading">Question</h2>
<div class="field"><label for="domain">Endpoint</label><select id="domain"></select><small id="domain-summary"></small></div>
<div class="field"><label for="example">Example</label><select id="example"></select><span><button type="button" id="fill-example">Fill the form with it</button></span></div>
<form id="request-form" novalidate>
<div id="fields"></div>
<details><summary>The request as JSON</summary>
<label for="request-json" class="visually-hidden">Request body as JSON</label>
<textarea id="request-json" rows="10" spellcheck="false"></textarea>
<button type="button" id="use-json">Fill the form from this JSON</button>
</details>
<button type="submit" id="ask-button">Ask</button> <span id="ask-state" role="status"></span>
<p id="ask-problem" class="problem" role="alert" tabindex="-1"></p>
</form>
<div id="vocabularies"></div>
</section>
<section id="answer" aria-labelledby="answer-heading" hidden>
<h2 id="answer-heading" tabindex="-1">Answer</h2>
<p id="answer-cost"></p>
<figure aria-labelledby="chart-caption"><div id="chart" tabindex="0"></div><figcaption id="chart-caption"></figcaption></figure>
<p id="chart-actions" hidden><button type="button" id="save-svg">Save as SVG</button><button type="button" id="save-png">Save as PNG</button></p>
<details id="chart-spec-box"><summary>The chart's Vega-Lite specification</summary><pre id="chart-spec" tabindex="0"></pre></details>
<details><summary>The chart's numbers as tables</summary><div id="chart-tables"></div></details>
<h3>JSON</h3>
<pre id="answer-json" tabindex="0"></pre>
<h3>The same call</h3>
<h4 id="curl-heading">curl</h4><button type="button" class="copy" data-copy="snippet-curl" aria-describedby="curl-heading">Copy</button><pre id="snippet-curl" tabindex="0"></pre>
<h4 id="python-heading">Python client</h4><button type="button" class="copy" data-copy="snippet-python" aria-describedby="python-heading">Copy</button><pre id="snippet-python" tabindex="0"></pre>
<h4 id="typescript-heading">TypeScript client</h4><button type="button" class="copy" data-copy="snippet-typescript" aria-describedby="typescript-heading">Copy</button><pre id="snippet-typescript" tabindex="0"></pre>
<p id="copy-state" role="status"></p>
</section>
</div>
</main>
</body>
</html>`
}

/** Reads one built asset of `folder` (under build/) once; a missing build is said plainly (run npm run build). */
export const builtAsset = (folder: string, file: string, type: string): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
  let answer: HttpServerResponse.HttpServerResponse | undefined
  return Effect.sync(() => {
    if (answer !== undefined) return answer
    try {
      return (answer = HttpServerResponse.uint8Array(readFileSync(join(BUILD, folder, file)), { contentType: type }))
    } catch {
      return HttpServerResponse.text(`This page is not built: run npm run build (build/${folder}/${file} is missing).`, { status: 503 })
    }
  })
}

/** The explorer's routes: path → answer (GET, no token). */
export const explorePages = (): ReadonlyArray<readonly [string, Effect.Effect<HttpServerResponse.HttpServerResponse>]> => {
  let html: HttpServerResponse.HttpServerResponse | undefined
  return [
    [EXPLORE_PATH, Effect.sync(() => (html ??= HttpServerResponse.setHeader(HttpServerResponse.html(page()), "content-security-policy", EXPLORE_CSP)))],
    ...EXPLORE_ASSETS.map(([path, file, type]) => [path, builtAsset("explore", file, type)] as const)
  ]
}
