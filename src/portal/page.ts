/**
 * The portal's page at /portal and its script and stylesheet, bundled by `npm run build`
 * (scripts/build-explore.ts) into build/portal. The same policy as the explorer's: scripts and
 * styles from this origin only, no inline script, no eval (the usage chart is drawn by Vega's
 * interpreter), calls to this origin only, never framed.
 */
import * as Effect from "effect/Effect"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import { builtAsset, bundledPageHead, EXPLORE_CSP } from "../http/Explorer.ts"
import { docsNav } from "../http/Guides.ts"
import { PORTAL_PATH } from "./routes.ts"

/** The assets: path, file in build/portal, media type. */
export const PORTAL_ASSETS: ReadonlyArray<readonly [string, string, string]> = [
  [`${PORTAL_PATH}/app.js`, "app.js", "text/javascript; charset=utf-8"],
  [`${PORTAL_PATH}/style.css`, "style.css", "text/css; charset=utf-8"]
]

const page = `${bundledPageHead("Account portal", PORTAL_PATH)}<body>
<a class="skip" href="#main">Skip to the content</a>
<nav aria-label="Documentation">${docsNav(PORTAL_PATH)}</nav>
<main id="main" tabindex="-1">
<h1>Account portal</h1>
<noscript><p class="problem">The portal needs JavaScript.</p></noscript>
<p id="state" role="status"></p>

<section id="sign-up" aria-labelledby="sign-up-heading" hidden>
<h2 id="sign-up-heading">Set up your sign-in</h2>
<p id="invite-about"></p>
<form id="sign-up-form" novalidate>
<div class="field"><label for="new-password">Password</label><input id="new-password" type="password" autocomplete="new-password" minlength="12" maxlength="256" required aria-describedby="new-password-help sign-up-problem"></div>
<p id="new-password-help"><small>At least 12 characters; a phrase of a few words is easy to remember and hard to guess. Common passwords are refused.</small></p>
<button type="submit">Create my sign-in</button>
<p id="sign-up-problem" class="problem" role="alert"></p>
</form>
</section>

<section id="sign-in" aria-labelledby="sign-in-heading" hidden>
<h2 id="sign-in-heading">Sign in</h2>
<form id="sign-in-form" novalidate>
<div class="field"><label for="email">E-mail address</label><input id="email" type="email" autocomplete="username" required aria-describedby="sign-in-problem"></div>
<div class="field"><label for="password">Password</label><input id="password" type="password" autocomplete="current-password" required aria-describedby="sign-in-problem"></div>
<button type="submit">Sign in</button>
<button type="button" id="passkey-sign-in">Sign in with a passkey</button>
<p id="sign-in-problem" class="problem" role="alert"></p>
</form>
<p><small>No account yet? An owner of your organisation's account, or the service's operator, sends you an invite link.</small></p>
</section>

<div id="signed-in" hidden>
<section aria-labelledby="you-heading">
<h2 id="you-heading">You</h2>
<p id="you"></p>
<button type="button" id="sign-out">Sign out</button>
<button type="button" id="sign-out-everywhere">Sign out everywhere</button>
<button type="button" id="add-passkey">Add a passkey</button>
<p id="passkeys" role="status"></p>
<p id="you-problem" class="problem" role="alert"></p>
<details><summary>Change your password</summary>
<form id="password-form" novalidate>
<div class="field"><label for="current-password">Current password</label><input id="current-password" type="password" autocomplete="current-password" required aria-describedby="password-problem"></div>
<div class="field"><label for="changed-password">New password</label><input id="changed-password" type="password" autocomplete="new-password" minlength="12" maxlength="256" required aria-describedby="password-problem"></div>
<button type="submit">Change the password</button> <span id="password-state" role="status"></span>
<p id="password-problem" class="problem" role="alert"></p>
</form>
</details>
</section>

<section aria-labelledby="account-heading">
<h2 id="account-heading">Account</h2>
<dl id="account"></dl>
</section>

<section aria-labelledby="usage-heading">
<h2 id="usage-heading">Usage</h2>
<p id="usage-summary"></p>
<figure><div id="usage-chart"></div><figcaption>Calls by day and endpoint over the last 30 days (charged calls; refused ones, 429, are counted apart).</figcaption></figure>
<table id="usage-today"><caption>Today by endpoint</caption><thead><tr><th scope="col">Endpoint</th><th scope="col">Calls</th><th scope="col">Credits</th><th scope="col">Refused (429)</th></tr></thead><tbody></tbody></table>
</section>

<section aria-labelledby="tokens-heading">
<h2 id="tokens-heading">Tokens</h2>
<table id="tokens"><caption>Your account's API tokens (the tokens themselves are never shown again)</caption><thead><tr><th scope="col">Label</th><th scope="col">Id</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>
<form id="issue-form" novalidate>
<h3>Issue a token</h3>
<div class="field"><label for="token-label">Label</label><input id="token-label" maxlength="100" required aria-describedby="issue-problem"></div>
<div class="field"><label for="token-days">Expires after (days, empty: never)</label><input id="token-days" type="number" min="1" max="3650" inputmode="numeric"></div>
<button type="submit">Issue</button>
<p id="issue-problem" class="problem" role="alert"></p>
</form>
<div class="field"><label for="grace">When rolling, keep the old token working for</label><select id="grace"><option value="0">no time (revoke it now)</option><option value="3600">1 hour</option><option value="86400" selected>1 day</option><option value="604800">7 days</option></select></div>
<div id="new-token" hidden tabindex="-1" aria-labelledby="new-token-heading">
<h3 id="new-token-heading">Your new token</h3>
<p>Copy it now: it is shown this once, and only its hash is kept.</p>
<pre id="new-token-value"></pre>
<button type="button" id="copy-token">Copy the token</button> <span id="copy-state" role="status"></span>
<h4>curl</h4><pre id="new-token-curl"></pre>
<h4>Python</h4><pre id="new-token-python"></pre>
</div>
</section>

<section id="people-section" aria-labelledby="people-heading" hidden>
<h2 id="people-heading">People</h2>
<table id="people"><caption>Who can sign in to this account</caption><thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Since</th><th scope="col">Actions</th></tr></thead><tbody></tbody></table>
<form id="invite-form" novalidate>
<h3>Invite someone</h3>
<div class="field"><label for="invite-email">E-mail address</label><input id="invite-email" type="email" required aria-describedby="invite-problem"></div>
<div class="field"><label for="invite-role">Role</label><select id="invite-role"><option value="developer">developer (tokens and usage)</option><option value="owner">owner (also people and the audit log)</option></select></div>
<button type="submit">Invite</button>
<p id="invite-problem" class="problem" role="alert"></p>
<p id="invite-link" role="status"></p>
</form>
</section>

<section id="audit-section" aria-labelledby="audit-heading" hidden>
<h2 id="audit-heading">Audit log</h2>
<table id="audit"><caption>Every change to the account, newest first</caption><thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Details</th><th scope="col">From</th></tr></thead><tbody></tbody></table>
</section>
</div>
</main>
</body>
</html>`

/** The portal's page and assets: path → answer (GET, no session needed). */
export const portalPages = (): ReadonlyArray<readonly [string, Effect.Effect<HttpServerResponse.HttpServerResponse>]> => {
  const html = HttpServerResponse.setHeaders(HttpServerResponse.html(page), { "content-security-policy": EXPLORE_CSP, "cache-control": "no-store" })
  return [
    [PORTAL_PATH, Effect.succeed(html)],
    ...PORTAL_ASSETS.map(([path, file, type]) => [path, builtAsset("portal", file, type)] as const)
  ]
}
