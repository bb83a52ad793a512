/**
 * The portal across processes: a session begun on one server is valid on another sharing its
 * PostgreSQL database (and a token issued there answers on the first, and its revocation there is
 * seen here); `hcc serve --workers 2` answers one session from both workers.
 *
 * A served process stores a password at OWASP's scrypt cost; a server on the test's thread, at the
 * lower one serverThread.ts gives it.
 */
import { afterAll, describe, expect, it } from "vitest"
import { query } from "../support/db.ts"
import { testDatabase } from "../support/postgres.ts"
import { hcc, newAccount, startServer, type TestServer, waitReady } from "../support/server.ts"

const started: Array<TestServer> = []
afterAll(async () => {
  await Promise.all(started.map((s) => s.stop()))
})

const start = async (options: Parameters<typeof startServer>[0]) => {
  const s = await startServer(options)
  started.push(s)
  await waitReady(s)
  return s
}

const portal = (s: TestServer, path: string, init: { readonly body?: unknown; readonly cookie?: string; readonly csrf?: string } = {}) =>
  fetch(`${s.url}/portal/api/${path}`, {
    method: init.body === undefined ? "GET" : "POST",
    headers: {
      ...(init.body === undefined ? {} : { "content-type": "application/json", origin: s.url }),
      ...(init.cookie === undefined ? {} : { cookie: init.cookie }),
      ...(init.csrf === undefined ? {} : { "x-csrf-token": init.csrf }),
      connection: "close"
    },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })

/** An owner of a new account signed up on `s`: their cookie and CSRF token. */
const owner = async (s: TestServer, email: string) => {
  const account = newAccount(s, { tier: "starter" }).accountId
  const { link } = JSON.parse(hcc(s, ["accounts", "invite", "--account", account, "--email", email, "--role", "owner", "--json"])) as { link: string }
  const res = await portal(s, "sign-up", { body: { code: link.split("#invite=")[1], password: "violet kettle harbour" } })
  expect(res.status).toBe(201)
  const set = res.headers.get("set-cookie")!
  return { cookie: set.slice(0, set.indexOf(";")), csrf: ((await res.json()) as { csrf_token: string }).csrf_token }
}

describe("the portal across processes", () => {
  it("PostgreSQL: a session made on one server works on another; a token issued there, revoked here, is refused there", async () => {
    const databaseUrl = await testDatabase()
    const [a, b] = [await start({ databaseUrl }), await start({ databaseUrl, env: { HCC_AUTH_CACHE_MS: "0" } })]
    const me = await owner(a!, "pg@example.org")
    // On the test's server thread, a lower cost than a process's (below).
    const [person] = await query<{ password_hash: string }>(a!, "SELECT password_hash FROM people WHERE email = 'pg@example.org'")
    expect(person?.password_hash).toMatch(/^scrypt\$12\$8\$1\$/)
    expect((await portal(b!, "account", { cookie: me.cookie })).status).toBe(200)
    const issued = await portal(b!, "tokens/issue", { body: { label: "on b" }, cookie: me.cookie, csrf: me.csrf })
    expect(issued.status).toBe(201)
    const token = (await issued.json()) as { token: string; id: string }
    expect((await fetch(`${a!.url}/v1/catalog`, { headers: { authorization: `Bearer ${token.token}` } })).status).toBe(200)
    expect((await portal(a!, "tokens/revoke", { body: { token_id: token.id }, cookie: me.cookie, csrf: me.csrf })).status).toBe(200)
    expect((await fetch(`${b!.url}/v1/catalog`, { headers: { authorization: `Bearer ${token.token}` } })).status).toBe(401)
    // Signing out on one ends the session on the other.
    expect((await portal(b!, "sign-out", { body: {}, cookie: me.cookie, csrf: me.csrf })).status).toBe(200)
    expect((await portal(a!, "account", { cookie: me.cookie })).status).toBe(401)
  }, 180_000)

  it("--workers 2: one session is answered by both workers", async () => {
    const s = await start({ serveArgs: ["--workers", "2"] })
    const me = await owner(s, "workers@example.org")
    const statuses: Array<number> = []
    for (let i = 0; i < 12; i++) statuses.push((await portal(s, "account", { cookie: me.cookie })).status)
    expect(statuses.every((x) => x === 200)).toBe(true)
    await expect.poll(() => new Set(s.logLines().filter((l) => l.path === "/portal/api/account" && l.status === 200).map((l) => l.pid)).size, { timeout: 10_000 }).toBe(2)
    // A served process hashes at OWASP's cost (a test server on the thread hashes at less, serverThread.ts).
    const [person] = await query<{ password_hash: string }>(s, "SELECT password_hash FROM people WHERE email = 'workers@example.org'")
    expect(person?.password_hash).toMatch(/^scrypt\$17\$8\$1\$/)
  }, 180_000)
})
