/**
 * The portal's security through HTTP, as an attacker would try it (OWASP ASVS v4 §2–3): a wrong
 * password and a guessed session id get nothing and are throttled; a cross-site or token-less
 * change is refused; a session id held before a sign-in is useless after it; the cookie's flags;
 * an invite link works once; no password, token, session id or invite code in any log line or
 * URL; a developer cannot invite or read the audit log; a revoked token answers 401 at once.
 */
import { request } from "node:http"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { hcc, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer
let account: string
const PASSWORD = "violet kettle harbour"
const secrets: Array<string> = [PASSWORD]

/**
 * The client address this test's portal calls come from: each test its own loopback address
 * (127.0.0.x reaches the server on 127.0.0.1), so the per-address sign-in throttle counts each
 * test's attempts apart, as it would different people's.
 */
let from = "127.0.0.2"
beforeEach(() => {
  from = `127.0.0.${Number(from.split(".")[3]) + 1}`
})

/** A portal call: JSON body, the portal's own Origin unless told, a cookie and CSRF token when given. */
const portal = (path: string, init: { readonly body?: unknown; readonly cookie?: string; readonly csrf?: string | undefined; readonly headers?: Record<string, string>; readonly on?: TestServer } = {}): Promise<Response> => {
  const s = init.on ?? server
  const headers: Record<string, string> = { accept: "application/json", ...(init.body === undefined ? {} : { "content-type": "application/json", origin: s.url }), ...init.headers }
  if (init.cookie !== undefined) headers.cookie = init.cookie
  if (init.csrf !== undefined) headers["x-csrf-token"] = init.csrf
  const body = init.body === undefined ? undefined : JSON.stringify(init.body)
  return new Promise((resolve, reject) => {
    const req = request(`${s.url}/portal/api/${path}`, { method: body === undefined ? "GET" : "POST", headers, localAddress: from }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        const h = new Headers()
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) for (const x of Array.isArray(v) ? v : [v]) h.append(k, x)
        resolve(new Response(res.statusCode === 204 ? null : Buffer.concat(chunks), { status: res.statusCode!, headers: h }))
      })
    })
    req.on("error", reject)
    req.end(body)
  })
}

/** The session cookie (`name=value`) a response sets. */
const cookieOf = (res: Response): string => {
  const set = res.headers.get("set-cookie") ?? ""
  return set.slice(0, set.indexOf(";"))
}

/** An invite from the CLI, as an operator makes it; the code from the link's fragment. */
const invite = (email: string, role: "owner" | "developer", on = server, accountId = account) => {
  const out = JSON.parse(hcc(on, ["accounts", "invite", "--account", accountId, "--email", email, "--role", role, "--json"])) as { link: string }
  const code = out.link.slice(out.link.indexOf("#invite=") + "#invite=".length)
  secrets.push(code)
  return { link: out.link, code }
}

const signUp = async (email: string, role: "owner" | "developer", password = PASSWORD, on = server) => {
  const { code } = invite(email, role, on)
  const res = await portal("sign-up", { body: { code, password }, on })
  expect(res.status).toBe(201)
  const session = (await res.json()) as { csrf_token: string }
  const cookie = cookieOf(res)
  secrets.push(cookie.slice(cookie.indexOf("=") + 1), session.csrf_token)
  return { cookie, csrf: session.csrf_token }
}

beforeAll(async () => {
  server = await startServer({ env: { HCC_LOG_LEVEL: "debug" } })
  await waitReady(server)
  account = newAccount(server, { tier: "starter" }).accountId
}, 120_000)

afterAll(async () => {
  await server?.stop()
})

describe("the portal through HTTP", () => {
  it("an invite link carries its code in the fragment, and works once", async () => {
    const { code, link } = invite("once@example.org", "owner")
    expect(link).toMatch(/^http:\/\/localhost:\d+\/portal#invite=[A-Za-z0-9_-]{43}$/)
    expect((await portal("sign-up", { body: { code, password: PASSWORD } })).status).toBe(201)
    const again = await portal("sign-up", { body: { code, password: PASSWORD } })
    expect(again.status).toBe(410)
    expect(((await again.json()) as { code: string }).code).toBe("invite_invalid")
  })

  it("the session cookie is HttpOnly, SameSite=Strict, Path=/, not Secure over http; __Host- and Secure behind https", async () => {
    const res = await portal("sign-in", { body: { email: "once@example.org", password: PASSWORD } })
    expect(res.status).toBe(200)
    expect(res.headers.get("set-cookie")).toMatch(/^hcc_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/)
    expect(res.headers.get("cache-control")).toBe("no-store")

    const tls = await startServer({ env: { HCC_PUBLIC_URL: "https://portal.example" } })
    try {
      await waitReady(tls)
      const other = newAccount(tls, { tier: "starter" }).accountId
      process.env.HCC_PUBLIC_URL = "https://portal.example"
      let invited: ReturnType<typeof invite>
      try {
        invited = invite("tls@example.org", "owner", tls, other)
      } finally {
        // The worker runs other files after this one.
        delete process.env.HCC_PUBLIC_URL
      }
      const { code, link } = invited
      expect(link.startsWith("https://portal.example/portal#invite=")).toBe(true)
      // From the service's public origin only.
      expect((await portal("sign-up", { body: { code, password: PASSWORD }, on: tls })).status).toBe(403)
      const ok = await portal("sign-up", { body: { code, password: PASSWORD }, on: tls, headers: { origin: "https://portal.example" } })
      expect(ok.status).toBe(201)
      expect(ok.headers.get("set-cookie")).toMatch(/^__Host-hcc_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Secure$/)
    } finally {
      await tls.stop()
    }
  }, 120_000)

  it("a wrong password gets nothing, and the sixth try in a minute is throttled even with the right one", async () => {
    await signUp("throttled@example.org", "developer")
    for (let i = 0; i < 5; i++) {
      const res = await portal("sign-in", { body: { email: "throttled@example.org", password: `wrong password ${i}` } })
      expect(res.status).toBe(401)
      expect(res.headers.get("set-cookie")).toBeNull()
      expect(await res.text()).not.toContain("throttled@example.org")
    }
    const res = await portal("sign-in", { body: { email: "THROTTLED@example.org", password: PASSWORD } })
    expect(res.status).toBe(429)
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(res.headers.get("set-cookie")).toBeNull()
  })

  it("a change from another site, or without the session's CSRF token, is refused", async () => {
    const me = await signUp("csrf@example.org", "owner")
    const cases: ReadonlyArray<[Record<string, string>, string | undefined]> = [
      [{ origin: "https://evil.example" }, me.csrf],
      [{ origin: server.url, "sec-fetch-site": "cross-site" }, me.csrf],
      [{ origin: server.url }, undefined],
      [{ origin: server.url }, "x".repeat(43)]
    ]
    for (const [headers, csrf] of cases) {
      const res = await portal("tokens/issue", { body: { label: "stolen" }, cookie: me.cookie, csrf, headers })
      expect(res.status, JSON.stringify(headers)).toBe(403)
    }
    const tokens = (await (await portal("tokens", { cookie: me.cookie })).json()) as { tokens: Array<{ label: string }> }
    expect(tokens.tokens.map((t) => t.label)).not.toContain("stolen")
  })

  it("a session id held before signing in is useless after it (the id is renewed)", async () => {
    const before = await portal("sign-in", { body: { email: "csrf@example.org", password: PASSWORD } })
    const planted = cookieOf(before)
    expect((await portal("account", { cookie: planted })).status).toBe(200)
    const after = await portal("sign-in", { body: { email: "csrf@example.org", password: PASSWORD }, cookie: planted })
    const renewed = cookieOf(after)
    secrets.push(planted.split("=")[1]!, renewed.split("=")[1]!)
    expect(renewed).not.toBe(planted)
    expect((await portal("account", { cookie: planted })).status).toBe(401)
    expect((await portal("account", { cookie: renewed })).status).toBe(200)
  })

  it("a developer issues and revokes tokens (401 at once) but cannot invite or read the audit log", async () => {
    const dev = await signUp("dev@example.org", "developer")
    const issued = await portal("tokens/issue", { body: { label: "ci", expires_in_days: 30 }, cookie: dev.cookie, csrf: dev.csrf })
    expect(issued.status).toBe(201)
    const token = (await issued.json()) as { token: string; id: string; expires_at: string }
    secrets.push(token.token)
    expect((await fetch(`${server.url}/v1/catalog`, { headers: { authorization: `Bearer ${token.token}` } })).status).toBe(200)
    expect((await portal("tokens/revoke", { body: { token_id: token.id }, cookie: dev.cookie, csrf: dev.csrf })).status).toBe(200)
    expect((await fetch(`${server.url}/v1/catalog`, { headers: { authorization: `Bearer ${token.token}` } })).status).toBe(401)
    // Another account's token is not this account's to revoke.
    const stranger = newAccount(server, { tier: "starter" })
    expect((await portal("tokens/revoke", { body: { token_id: stranger.tokenId }, cookie: dev.cookie, csrf: dev.csrf })).status).toBe(404)
    const invited = await portal("people/invite", { body: { email: "friend@example.org", role: "owner" }, cookie: dev.cookie, csrf: dev.csrf })
    expect(invited.status).toBe(403)
    expect((await portal("audit", { cookie: dev.cookie })).status).toBe(403)
    // Nothing a person can send changes the tier.
    expect((await portal("account", { body: { tier: "unlimited" }, cookie: dev.cookie, csrf: dev.csrf })).status).toBe(405)
  })

  it("usage counts the calls a limit refused (429) by endpoint, beside the charged ones", async () => {
    const me = await signUp("usage@example.org", "owner")
    const issued = (await (await portal("tokens/issue", { body: { label: "burst" }, cookie: me.cookie, csrf: me.csrf })).json()) as { token: string }
    secrets.push(issued.token)
    const statuses: Array<number> = []
    for (let i = 0; i < 14; i++) statuses.push((await fetch(`${server.url}/v1/catalog`, { headers: { authorization: `Bearer ${issued.token}` } })).status)
    const refused = statuses.filter((s) => s === 429).length
    expect(refused).toBeGreaterThan(0)
    await expect.poll(async () => {
      const usage = (await (await portal("usage", { cookie: me.cookie })).json()) as { today: { refused: number; by_endpoint: Array<{ endpoint: string; refused: number }> } }
      return usage.today.by_endpoint.find((r) => r.endpoint === "/v1/catalog")?.refused
    }, { timeout: 10_000 }).toBeGreaterThanOrEqual(refused)
  })

  it("an owner removes a person (their session ends at once) but not the account's last owner; sign out everywhere ends every session", async () => {
    const boss = await signUp("boss@example.org", "owner")
    const temp = await signUp("temp@example.org", "developer")
    const people = (await (await portal("people", { cookie: boss.cookie })).json()) as { people: Array<{ id: string; email: string; role: string }> }
    const tempId = people.people.find((p) => p.email === "temp@example.org")!.id
    expect((await portal("people/remove", { body: { person_id: tempId }, cookie: boss.cookie, csrf: boss.csrf })).status).toBe(200)
    expect((await portal("account", { cookie: temp.cookie })).status).toBe(401)
    // Every owner but one removed, the last one stays.
    const owners = people.people.filter((p) => p.role === "owner" && p.email !== "boss@example.org")
    for (const o of owners) expect((await portal("people/remove", { body: { person_id: o.id }, cookie: boss.cookie, csrf: boss.csrf })).status).toBe(200)
    const self = people.people.find((p) => p.email === "boss@example.org")!.id
    const last = await portal("people/remove", { body: { person_id: self }, cookie: boss.cookie, csrf: boss.csrf })
    expect(last.status).toBe(409)
    expect(((await last.json()) as { code: string }).code).toBe("last_owner")
    const second = cookieOf(await portal("sign-in", { body: { email: "boss@example.org", password: PASSWORD } }))
    secrets.push(second.split("=")[1]!)
    const everywhere = await portal("sign-out-everywhere", { body: {}, cookie: boss.cookie, csrf: boss.csrf })
    expect(((await everywhere.json()) as { sessions_ended: number }).sessions_ended).toBe(2)
    expect(everywhere.headers.get("set-cookie")).toMatch(/^hcc_session=; .*Max-Age=0/)
    expect((await portal("account", { cookie: second })).status).toBe(401)
  })

  it("a password change needs the current one, ends every other session, and the old password stops working", async () => {
    const me = await signUp("changer@example.org", "developer")
    const elsewhere = cookieOf(await portal("sign-in", { body: { email: "changer@example.org", password: PASSWORD } }))
    secrets.push(elsewhere.split("=")[1]!)
    const NEW = "copper lantern meadow"
    secrets.push(NEW)
    expect((await portal("password", { body: { current_password: "not it at all", new_password: NEW }, cookie: me.cookie, csrf: me.csrf })).status).toBe(401)
    const changed = await portal("password", { body: { current_password: PASSWORD, new_password: NEW }, cookie: me.cookie, csrf: me.csrf })
    expect(changed.status).toBe(200)
    const renewed = cookieOf(changed)
    secrets.push(renewed.split("=")[1]!, ((await changed.json()) as { csrf_token: string }).csrf_token)
    expect((await portal("account", { cookie: elsewhere })).status).toBe(401)
    expect((await portal("account", { cookie: me.cookie })).status).toBe(401)
    expect((await portal("account", { cookie: renewed })).status).toBe(200)
    expect((await portal("sign-in", { body: { email: "changer@example.org", password: PASSWORD } })).status).toBe(401)
    expect((await portal("sign-in", { body: { email: "changer@example.org", password: NEW } })).status).toBe(200)
  })

  it("a new password is held to the same rules as the first", async () => {
    const me = await signUp("weak@example.org", "developer")
    const weak = await portal("password", { body: { current_password: PASSWORD, new_password: "qwerty123456" }, cookie: me.cookie, csrf: me.csrf })
    expect(weak.status).toBe(400)
    expect(((await weak.json()) as { code: string }).code).toBe("weak_password")
    expect((await portal("account", { cookie: me.cookie })).status).toBe(200)
  })

  it("an invite never tells an owner that an address belongs to another account; the invitee learns it at sign-up", async () => {
    const other = newAccount(server, { tier: "starter" }).accountId
    const owner = await (async () => {
      const { code } = invite("other-owner@example.org", "owner", server, other)
      const res = await portal("sign-up", { body: { code, password: PASSWORD } })
      const set = res.headers.get("set-cookie")!
      return { cookie: set.slice(0, set.indexOf(";")), csrf: ((await res.json()) as { csrf_token: string }).csrf_token }
    })()
    const res = await portal("people/invite", { body: { email: "dev@example.org", role: "developer" }, cookie: owner.cookie, csrf: owner.csrf })
    expect(res.status).toBe(201)
    const code = ((await res.json()) as { link: string }).link.split("#invite=")[1]!
    secrets.push(code)
    const signUp = await portal("sign-up", { body: { code, password: PASSWORD } })
    expect(signUp.status).toBe(409)
    expect(((await signUp.json()) as { code: string }).code).toBe("email_taken")
    // A developer does not see the people either.
    const dev = cookieOf(await portal("sign-in", { body: { email: "dev@example.org", password: PASSWORD } }))
    secrets.push(dev.split("=")[1]!)
    expect((await portal("people", { cookie: dev })).status).toBe(403)
  })

  it("a disabled account's people can neither sign in nor act; the operator's changes are in its audit log", async () => {
    const me = await signUp("disabled@example.org", "owner")
    hcc(server, ["tokens", "issue", "--account", account, "--label", "by the operator"])
    hcc(server, ["accounts", "disable", account])
    try {
      expect((await portal("account", { cookie: me.cookie })).status).toBe(403)
      expect(((await (await portal("sign-in", { body: { email: "disabled@example.org", password: PASSWORD } })).json()) as { code: string }).code).toBe("account_disabled")
    } finally {
      hcc(server, ["accounts", "enable", account])
    }
    const log = (await (await portal("audit", { cookie: me.cookie })).json()) as { entries: Array<{ actor: string; action: string; detail: Record<string, unknown> }> }
    const operator = log.entries.filter((e) => e.actor === "operator (hcc CLI)").map((e) => e.action)
    expect(operator).toEqual(expect.arrayContaining(["account_enabled", "account_disabled", "token_issued"]))
  })

  it("an owner reads the audit log: who, what, when, from where, never a token", async () => {
    const owner = await signUp("auditor@example.org", "owner")
    const log = (await (await portal("audit", { cookie: owner.cookie })).json()) as { entries: Array<{ actor: string; action: string; address: string; at: string }> }
    const actions = log.entries.map((e) => `${e.actor} ${e.action}`)
    expect(actions).toEqual(expect.arrayContaining(["dev@example.org token_issued", "dev@example.org token_revoked", "operator (hcc CLI) person_invited", "auditor@example.org signed_up"]))
    expect(log.entries.every((e) => e.address !== "" && !Number.isNaN(Date.parse(e.at)))).toBe(true)
    const text = JSON.stringify(log)
    for (const s of secrets) expect(text).not.toContain(s)
  })

  it("a guessed session id gets nothing, and guessing is throttled", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 35; i++) statuses.push((await portal("account", { cookie: `hcc_session=${"A".repeat(42)}${i % 10}` })).status)
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401])
    expect(statuses).toContain(429)
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true)
  })

  it("no password, token, session id, CSRF token or invite code in any log line, nor any in a logged path", async () => {
    await server.stop()
    const logs = server.stdout() + server.stderr()
    expect(logs).toContain("/portal/api/sign-in")
    for (const s of secrets) expect(logs, s.slice(0, 6)).not.toContain(s)
    for (const line of server.logLines()) if (typeof line.path === "string") expect(line.path).toMatch(/^\/[a-z0-9/._-]*$/)
  })
})
