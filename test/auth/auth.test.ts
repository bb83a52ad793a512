/** Authentication over HTTP: changed, revoked and expired tokens; no plaintext token at rest or in logs. */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { query } from "../support/db.ts"
import { ENGINES, startOn } from "../support/engines.ts"
import { call, hcc, newAccount, startServer, type TestServer, waitForLog } from "../support/server.ts"

let server: TestServer

beforeAll(async () => {
  // No principal cache here, so revocation and expiry are visible on the very next request.
  server = await startServer({ env: { HCC_AUTH_CACHE_MS: "0" } })
})
afterAll(async () => {
  await server.stop()
})

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

describe("demo account", () => {
  it("is created on first start with its token in demo.token (0600)", async () => {
    const file = join(server.dataDir, "demo.token")
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(server.demoToken).toMatch(/^hcc_[0-9A-Za-z]{36}$/)
    const res = await call(server, "/v1/usage")
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ tier: "Professional", limits: { daily: { limit: 1000 }, burst: { limit: 50 } } })
  })
  it("the log names the token file, never the token", () => {
    const created = server.logLines().find((l) => l.msg === "created the demo account")
    expect(created?.token_file).toBe(join(server.dataDir, "demo.token"))
  })
})

describe.each(ENGINES)("token checks on %s", (engine) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startOn(engine, { env: { HCC_AUTH_CACHE_MS: "0" } })
  })
  afterAll(async () => {
    await server.stop()
  })

  it("every single-character change of a valid token is 401 invalid_token", async () => {
    const { token } = newAccount(server, { tier: "enterprise" })
    expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
    for (const pos of [4, 10, 20, 33, 34, 39]) {
      const c = ALPHABET[(ALPHABET.indexOf(token[pos]!) + 7) % 62]!
      const changed = token.slice(0, pos) + c + token.slice(pos + 1)
      const res = await call(server, "/v1/catalog", { token: changed })
      expect(res.status).toBe(401)
      expect(((await res.json()) as { code: string }).code).toBe("invalid_token")
    }
  })
  it("a well-formed token that was never issued is 401", async () => {
    const body = "A".repeat(30)
    // A valid checksum but no such token in the database.
    const { checksum } = await import("../../src/auth/Token.ts")
    const res = await call(server, "/v1/catalog", { token: `hcc_${body}${checksum(body)}` })
    expect(res.status).toBe(401)
  })
  it("a revoked token is 401 from the next request on", async () => {
    const { token, tokenId } = newAccount(server, { tier: "enterprise" })
    expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
    const revoked = JSON.parse(hcc(server, ["tokens", "revoke", tokenId, "--json"])) as { revoked_at: string | null }
    expect(revoked.revoked_at).not.toBeNull()
    const res = await call(server, "/v1/catalog", { token })
    expect(res.status).toBe(401)
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_token"')
  })
  it("with the default 1 s principal cache, a revoked token is refused once its cached look-up expires", async () => {
    const cached = await startOn(engine)
    try {
      const { token, tokenId } = newAccount(cached, { tier: "enterprise" })
      expect((await call(cached, "/v1/catalog", { token })).status).toBe(200)
      hcc(cached, ["tokens", "revoke", tokenId])
      // Asked again, a few times a second (within the burst limit), until refused; the deadline only bounds a failure.
      const deadline = Date.now() + 30_000
      let status = 200
      while (status === 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100))
        status = (await call(cached, "/v1/catalog", { token })).status
      }
      expect(status).toBe(401)
    } finally {
      await cached.stop()
    }
  })
  it("an expired token is 401", async () => {
    const { token, tokenId } = newAccount(server, { tier: "enterprise" })
    expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
    // Move the expiry into the past directly in the database (no waiting a day in a test).
    await query(server, "UPDATE tokens SET expires_at = ? WHERE id = ?", ["2020-01-01T00:00:00.000Z", tokenId], true)
    expect((await call(server, "/v1/catalog", { token })).status).toBe(401)
  })
  it("tokens issued with an expiry list it, and list never shows a token", () => {
    const { accountId } = newAccount(server, { tier: "starter" })
    const issued = JSON.parse(hcc(server, ["tokens", "issue", "--account", accountId, "--expires-in-days", "7", "--json"])) as { expires_at: string; token: string }
    const days = (Date.parse(issued.expires_at) - Date.now()) / 86_400_000
    expect(days).toBeGreaterThan(6.99)
    expect(days).toBeLessThan(7.01)
    const listed = hcc(server, ["tokens", "list", "--account", accountId])
    expect(listed).not.toContain(issued.token)
    expect(listed).not.toContain(issued.token.slice(4, 20))
  })
})

describe("secrets at rest and in logs", () => {
  it("no plaintext token exists in the database files or the server log", async () => {
    const tokens = [server.demoToken, newAccount(server.dataDir, { tier: "starter" }).token]
    for (const token of tokens) {
      expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
      const changed = token.slice(0, -1) + (token.endsWith("x") ? "y" : "x")
      expect((await call(server, "/v1/catalog", { token: changed })).status).toBe(401)
    }
    const files = readdirSync(server.dataDir).filter((f) => f.startsWith("hcc.db"))
    expect(files).toContain("hcc.db")
    for (const f of files) {
      const bytes = readFileSync(join(server.dataDir, f)).toString("latin1")
      for (const token of tokens) {
        expect(bytes.includes(token)).toBe(false)
        expect(bytes.includes(token.slice(4, 34))).toBe(false)
      }
    }
    // The hash is what is stored.
    const db = new DatabaseSync(join(server.dataDir, "hcc.db"), { readOnly: true })
    const { createHash } = await import("node:crypto")
    const row = db.prepare("SELECT COUNT(*) AS n FROM tokens WHERE token_hash = ?").get(createHash("sha256").update(tokens[1]!).digest("hex")) as { n: number }
    db.close()
    expect(row.n).toBe(1)
    await waitForLog(server, (l) => l.msg === "request" && l.status === 401)
    const log = server.stdout()
    for (const token of tokens) expect(log.includes(token.slice(4, 34))).toBe(false)
  })
})
