/**
 * The account portal in a real browser: Debian's Chromium driven by playwright-core. An operator
 * invites an owner from the CLI; the owner opens the link, sets a password, issues a token (shown
 * once) that answers the API, sees the calls just made in the usage page, revokes it (401), rolls
 * another with an hour's grace (both answer), registers a passkey on Chromium's virtual
 * authenticator (DevTools protocol, WebAuthn domain) and signs in with it; invites a developer,
 * who cannot invite; axe-core finds no serious or critical violation; the page's CSP holds.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchChromium } from "../../scripts/chromium.ts"
import { hcc, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer
let browser: Browser
let context: BrowserContext
let page: Page
let origin: string
let account: string
const violations: Array<string> = []
/** How long a check waits for the page: a password's scrypt takes seconds on a machine busy with the rest of the suite. */
const POLL_MS = 20_000

/** The token issued in the page (the page forgets it on reload: it is shown once). */
let ciToken = ""
const PASSWORD = "violet kettle harbour"
const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

/** The code of a CLI invite's link, opened at this test's origin (localhost: a passkey's relying party must be a domain). */
const inviteUrl = (email: string, role: string) => {
  const { link } = JSON.parse(hcc(server, ["accounts", "invite", "--account", account, "--email", email, "--role", role, "--json"])) as { link: string }
  return `${origin}/portal${link.slice(link.indexOf("#"))}`
}

const api = (token: string, path: string, body?: unknown) =>
  fetch(`${server.url}${path}`, { method: body === undefined ? "GET" : "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })

const watch = (p: Page) =>
  p.on("console", (m) => {
    if (/Content.Security.Policy|Refused to/i.test(m.text())) violations.push(m.text())
  })

/** axe-core's serious and critical violations on the page as it is now. */
const axeProblems = async (p: Page) => {
  // Through DevTools, not a script element: the page's CSP allows no inline script.
  await p.evaluate(axeSource)
  const result = await p.evaluate(() => (window as any).axe.run(document, { resultTypes: ["violations"] }))
  return (result.violations as Array<{ id: string; impact: string; nodes: Array<unknown> }>).filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.id} (${v.nodes.length})`)
}

const tokenRows = () => page.$$eval("#tokens tbody tr", (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent ?? "")))

beforeAll(async () => {
  server = await startServer()
  await waitReady(server)
  origin = server.url.replace("127.0.0.1", "localhost")
  account = newAccount(server, { tier: "professional" }).accountId
  browser = await launchChromium()
  context = await browser.newContext({ viewport: { width: 1280, height: 1200 } })
  page = await context.newPage()
  watch(page)
}, 180_000)

afterAll(async () => {
  await browser?.close()
  await server?.stop()
})

describe("the account portal in Chromium", () => {
  it("an invite from the CLI → sign-up → signed in; the link's code leaves the address bar", async () => {
    await page.goto(inviteUrl("owner@example.org", "owner"))
    await page.waitForSelector("#sign-up:not([hidden])")
    expect(page.url()).toBe(`${origin}/portal`)
    expect(await page.textContent("#invite-about")).toContain("as owner, as owner@example.org")
    await page.fill("#new-password", "password1234")
    await page.click("text=Create my sign-in")
    await expect.poll(() => page.textContent("#sign-up-problem"), { timeout: POLL_MS }).toContain("commonly used")
    await page.fill("#new-password", PASSWORD)
    await page.click("text=Create my sign-in")
    await page.waitForSelector("#signed-in:not([hidden])")
    expect(await page.textContent("#you")).toContain("owner@example.org, owner of")
    // The account's details come from their own request after the signed-in view shows.
    await expect.poll(() => page.textContent("#account"), { timeout: POLL_MS }).toContain("Professional")
    // Signed out, then in again with the password.
    await page.click("#sign-out")
    await page.waitForSelector("#sign-in:not([hidden])")
    await page.fill("#email", "owner@example.org")
    await page.fill("#password", "not the password")
    await page.click("#sign-in-form button[type=submit]")
    await expect.poll(() => page.textContent("#sign-in-problem"), { timeout: POLL_MS }).toContain("do not match")
    await page.fill("#email", "owner@example.org")
    await page.fill("#password", PASSWORD)
    await page.click("#sign-in-form button[type=submit]")
    await page.waitForSelector("#signed-in:not([hidden])")
    expect(await page.inputValue("#password")).toBe("")
  })

  it("issues a token (shown once, with the lines that use it) that answers the API, then shows the calls just made", async () => {
    await page.fill("#token-label", "ci")
    await page.click("#issue-form button[type=submit]")
    await page.waitForSelector("#new-token:not([hidden])")
    const token = (await page.textContent("#new-token-value"))!
    ciToken = token
    expect(token).toMatch(/^hcc_[0-9A-Za-z]{36}$/)
    expect(await page.textContent("#new-token-curl")).toContain(`${origin}/v1/catalog`)
    expect(await page.textContent("#new-token-python")).toContain("from hcc_client import Client")
    await page.click("#copy-token")
    await expect.poll(() => page.textContent("#copy-state"), { timeout: POLL_MS }).not.toBe("")
    expect((await api(token, "/v1/catalog")).status).toBe(200)
    for (let i = 0; i < 2; i++) expect((await api(token, "/v1/temporal", { patient_axes: { PO: [5, 5.2, 5.1, 5.4, 5.3, 5.6] }, interval: "monthly" })).status).toBe(200)
    await page.reload()
    await page.waitForSelector("#signed-in:not([hidden])")
    await expect.poll(() => page.$$eval("#usage-today tbody tr", (rows) => rows.map((r) => r.textContent)), { timeout: POLL_MS }).toEqual([expect.stringMatching(/^\/v1\/temporal2/)])
    expect(await page.textContent("#usage-summary")).toContain("Today: 2 calls")
    expect(await page.locator("#usage-chart svg g.mark-rect path").count()).toBeGreaterThan(0)
    // Its last use is written in the background (at most once a minute): read again until it shows.
    await expect.poll(async () => {
      await page.reload()
      await page.waitForSelector("#signed-in:not([hidden])")
      return (await tokenRows()).find((r) => r[0] === "ci")?.[3]
    }, { timeout: 15_000 }).toMatch(/UTC$/)
    expect(JSON.stringify(await tokenRows())).not.toContain(token)
  })

  it("revokes the token: the API answers 401", async () => {
    const token = ciToken
    expect((await api(token, "/v1/catalog")).status).toBe(200)
    await page.click("text=Revoke ci")
    await expect.poll(async () => (await tokenRows()).find((r) => r[0] === "ci")?.[5], { timeout: POLL_MS }).toMatch(/^revoked/)
    expect((await api(token, "/v1/catalog")).status).toBe(401)
  })

  it("rolls a token with an hour's grace: the old one answers until then, the new one too", async () => {
    // The new token is shown once the table is redrawn: wait for it to replace the one shown before.
    const before = await page.textContent("#new-token-value")
    await page.fill("#token-label", "nightly")
    await page.click("#issue-form button[type=submit]")
    await expect.poll(() => page.textContent("#new-token-value"), { timeout: POLL_MS }).not.toBe(before)
    const old = (await page.textContent("#new-token-value"))!
    await page.selectOption("#grace", "3600")
    await page.click("text=Roll nightly")
    await expect.poll(() => page.textContent("#state"), { timeout: POLL_MS }).toContain("Rolled nightly")
    await expect.poll(() => page.textContent("#new-token-value"), { timeout: POLL_MS }).not.toBe(old)
    const fresh = (await page.textContent("#new-token-value"))!
    expect((await api(old, "/v1/catalog")).status).toBe(200)
    expect((await api(fresh, "/v1/catalog")).status).toBe(200)
    const nightly = (await tokenRows()).filter((r) => r[0] === "nightly")
    expect(nightly).toHaveLength(2)
    const ends = nightly.map((r) => r[4]).filter((e) => e !== "never")
    expect(ends).toHaveLength(1)
    const left = Date.parse(ends[0]!.replace(" UTC", "Z").replace(" ", "T")) - Date.now()
    expect(left).toBeGreaterThan(50 * 60_000)
    expect(left).toBeLessThanOrEqual(60 * 60_000)
  })

  it("registers a passkey on Chromium's virtual authenticator, and signs in with it after signing out", async () => {
    const cdp = await context.newCDPSession(page)
    await cdp.send("WebAuthn.enable")
    await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true }
    })
    await page.click("#add-passkey")
    await expect.poll(() => page.textContent("#passkeys"), { timeout: POLL_MS }).toBe("1 passkey can sign you in.")
    await page.click("#sign-out")
    await page.waitForSelector("#sign-in:not([hidden])")
    expect(await page.isHidden("#signed-in")).toBe(true)
    await page.click("#passkey-sign-in")
    await page.waitForSelector("#signed-in:not([hidden])")
    expect(await page.textContent("#you")).toContain("owner@example.org")
  })

  it("an owner invites a developer, who signs up and cannot invite", async () => {
    await page.fill("#invite-email", "dev@example.org")
    await page.selectOption("#invite-role", "developer")
    await page.click("#invite-form button[type=submit]")
    await expect.poll(() => page.textContent("#invite-link"), { timeout: POLL_MS }).toContain("#invite=")
    const link = (await page.textContent("#invite-link"))!.match(/http\S+/)![0]
    const devContext = await browser.newContext()
    const dev = await devContext.newPage()
    watch(dev)
    await dev.goto(link)
    await dev.waitForSelector("#sign-up:not([hidden])")
    await dev.fill("#new-password", "another long passphrase")
    await dev.click("text=Create my sign-in")
    await dev.waitForSelector("#signed-in:not([hidden])")
    expect(await dev.isHidden("#people-section")).toBe(true)
    expect(await dev.isHidden("#audit-section")).toBe(true)
    // Asked anyway, from the page itself (its session and CSRF token): refused.
    const status = await dev.evaluate(async () => {
      const session = await (await fetch("/portal/api/session")).json()
      const res = await fetch("/portal/api/people/invite", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": session.csrf_token }, body: JSON.stringify({ email: "x@example.org", role: "owner" }) })
      return res.status
    })
    expect(status).toBe(403)
    expect(await axeProblems(dev)).toEqual([])
    await devContext.close()
    await page.reload()
    await page.waitForSelector("#signed-in:not([hidden])")
    await expect.poll(() => page.$$eval("#people tbody tr td:first-child", (cells) => cells.map((c) => c.textContent)), { timeout: POLL_MS }).toEqual(["owner@example.org", "dev@example.org"])
    const audit = await page.$$eval("#audit tbody tr", (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent).slice(1, 3).join(" ")))
    expect(audit).toEqual(expect.arrayContaining(["owner@example.org token issued", "owner@example.org token revoked", "owner@example.org token rolled", "owner@example.org passkey registered", "dev@example.org signed up"]))
  })

  it("axe-core finds no serious or critical violation, signed in and signed out; no CSP violation", async () => {
    expect(await axeProblems(page)).toEqual([])
    await page.click("#sign-out")
    await page.waitForSelector("#sign-in:not([hidden])")
    expect(await axeProblems(page)).toEqual([])
    expect(violations).toEqual([])
  })
})
