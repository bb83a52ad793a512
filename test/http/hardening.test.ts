/**
 * The edges, over real HTTP: a shutdown that answers every request already sent on keep-alive
 * connections; slow sockets past the connection cap that do not lock normal callers out; half-sent
 * bodies that hold no daily quota; Node's own refusals as problem+json; security headers, HEAD and
 * CORS; an owner-only data folder and database file.
 */
import { createHash } from "node:crypto"
import { spawn } from "node:child_process"
import { mkdtempSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { Agent, request as httpRequest } from "node:http"
import { connect, type Socket } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SERVER_NODE_FLAGS } from "../../src/nodeFlags.ts"
import { call, commandLine, fixturePlugin, newAccount, ROOT, startServer, type TestServer, waitReady } from "../support/server.ts"

const portOf = (server: TestServer) => Number(new URL(server.url).port)

/** Opens a raw TCP connection to the server. */
const rawSocket = (server: TestServer): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const s = connect(portOf(server), "127.0.0.1", () => resolve(s))
    s.once("error", reject)
  })

/** Everything the server sends on a socket until it closes (or `ms` pass). */
const readAll = (s: Socket, ms = 5000): Promise<string> =>
  new Promise((resolve) => {
    let data = ""
    s.setEncoding("utf8")
    s.on("data", (d: string) => (data += d))
    const done = () => resolve(data)
    s.once("close", done)
    s.once("error", done)
    setTimeout(done, ms)
  })

/** A POST over a given keep-alive agent: `sent` once its bytes are written, `done` with status, headers and body. */
const sendWith = (server: TestServer, agent: Agent, path: string, body: unknown, token: string) => {
  let markSent = () => {}
  const sent = new Promise<void>((r) => (markSent = r))
  const done = new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>((resolve, reject) => {
    const text = JSON.stringify(body)
    const req = httpRequest({
      agent,
      host: "127.0.0.1",
      port: portOf(server),
      path,
      method: "POST",
      headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text), authorization: `Bearer ${token}` }
    }, (res) => {
      let data = ""
      res.setEncoding("utf8")
      res.on("data", (d: string) => (data += d))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }))
    })
    req.on("error", reject)
    req.on("finish", markSent)
    req.end(text)
  })
  return { sent, done }
}
const postWith = (server: TestServer, agent: Agent, path: string, body: unknown, token: string) => sendWith(server, agent, path, body, token).done

describe("graceful shutdown with keep-alive clients", () => {
  it("answers every request whose bytes were sent before SIGTERM, with Connection: close, and exits 0 without waiting for the grace", async () => {
    const server = await startServer({ env: { HCC_PLUGINS: fixturePlugin("slow-echo"), HCC_SHUTDOWN_GRACE_SECONDS: "600" } })
    await waitReady(server)
    const agent = new Agent({ keepAlive: true, maxSockets: 12 })
    // Twelve keep-alive connections, idle after a first answer each.
    const warm = await Promise.all(Array.from({ length: 12 }, (_, i) => postWith(server, agent, "/v1/slow-echo", { tag: `warm-${i}`, ms: 50 }, server.demoToken)))
    expect(warm.every((r) => r.status === 200)).toBe(true)
    // Twelve more requests on those connections; SIGTERM as soon as their bytes are on the wire.
    const pending = Array.from({ length: 12 }, (_, i) => sendWith(server, agent, "/v1/slow-echo", { tag: `t-${i}`, ms: 300 }, server.demoToken))
    await Promise.all(pending.map((p) => p.sent))
    const exit = server.stop("SIGTERM")
    const answers = await Promise.all(pending.map((p) => p.done))
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200))
    expect(answers.map((a) => JSON.parse(a.body).tag).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `t-${i}`).sort())
    expect(answers.every((a) => a.headers.connection === "close")).toBe(true)
    // The grace period is longer than the test may take: exiting at all means it did not wait for it.
    expect(await exit).toBe(0)
    agent.destroy()
  })
})

describe("npm start in a container", () => {
  it("SIGTERM to npm stops the service cleanly (the script execs node, so the signal reaches it)", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "hcc-npm-start-"))
    const child = spawn("npm", ["start"], {
      cwd: ROOT,
      env: { ...process.env, PORT: "0", HOST: "127.0.0.1", HCC_DATA_DIR: dataDir, HCC_POPULATION: "1000", HCC_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
    for (let i = 0; i < 600 && !out.includes('"msg":"listening"'); i++) await new Promise((r) => setTimeout(r, 50))
    const pid = Number(/"pid":(\d+)/.exec(out.split("\n").find((l) => l.includes('"msg":"listening"')) ?? "")?.[1])
    expect(pid).toBeGreaterThan(0)
    // It runs node with the server's flags (src/nodeFlags.ts), so it does not warn of their absence.
    expect(commandLine(pid)).toEqual(expect.arrayContaining([...SERVER_NODE_FLAGS]))
    expect(out).not.toContain("started without the server's node flags")
    child.kill("SIGTERM")
    expect(await exited).toBe(0)
    // The node process itself is gone, and said so.
    const alive = () => {
      try {
        process.kill(pid, 0)
        return true
      } catch {
        return false
      }
    }
    for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50))
    expect(alive()).toBe(false)
    expect(out).toContain('"msg":"stopped"')
  })
})

describe("resource bounds", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({
      env: {
        HCC_PLUGINS: fixturePlugin("series-stats"),
        HCC_MAX_CONNECTIONS: "40",
        HCC_HEADERS_TIMEOUT_SECONDS: "2",
        HCC_REQUEST_TIMEOUT_SECONDS: "4"
      }
    })
    await waitReady(server)
  })
  afterAll(async () => {
    await server.stop()
  })

  it("200 slow-header sockets past a cap of 40 do not stop normal requests; a slow socket gets 408 problem+json", async () => {
    const slow: Array<Socket> = []
    for (let i = 0; i < 200; i++) {
      const s = await rawSocket(server).catch(() => undefined)
      if (s === undefined) continue
      s.on("error", () => {})
      s.write("POST /v1/series-stats HTTP/1.1\r\nHost: x\r\n")
      slow.push(s)
    }
    const drip = setInterval(() => {
      for (const s of slow) if (!s.destroyed) s.write("X-Slow: 1\r\n")
    }, 300)
    try {
      for (let i = 0; i < 10; i++) {
        const res = await call(server, "/v1/series-stats", { body: { values: [1, 2, i] }, headers: { connection: "close" }, timeoutMs: 5000 })
        expect(res.status).toBe(200)
      }
      // A slow socket that is still open is answered 408 once its headers time out.
      const survivor = await rawSocket(server)
      survivor.write("GET /healthz HTTP/1.1\r\nHost: x\r\n")
      const answer = await readAll(survivor, 6000)
      expect(answer).toMatch(/^HTTP\/1\.1 408 /)
      expect(answer).toContain("application/problem+json")
      expect(answer).toContain('"code":"request_timeout"')
      expect(answer).toMatch(/X-Request-Id: [0-9a-f-]{36}/i)
    } finally {
      clearInterval(drip)
      for (const s of slow) s.destroy()
    }
  })

  it("half-sent bodies hold no daily quota: five of them, then a whole request of a daily-5 account is answered", async () => {
    const account = newAccount(server, { tier: "starter", dailyLimit: 5, burstLimit: 1000 })
    const half: Array<Socket> = []
    for (let i = 0; i < 5; i++) {
      const s = await rawSocket(server)
      s.on("error", () => {})
      s.write(`POST /v1/series-stats HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"values":`)
      half.push(s)
    }
    // The server has taken each half-sent request's burst slot (its caller is known) and waits for
    // its body: the account's burst count holds the five besides these usage calls themselves.
    const deadline = Date.now() + 30_000
    for (let polls = 1; ; polls++) {
      const usage = (await (await call(server, "/v1/usage", { token: account.token })).json()) as { limits: { burst: { used: number }; daily: { used: number } } }
      if (usage.limits.burst.used >= 5 + polls) {
        expect(usage.limits.daily.used).toBe(0)
        break
      }
      if (Date.now() > deadline) throw new Error(`the half-sent requests did not reach the server (burst used: ${usage.limits.burst.used})`)
    }
    const res = await call(server, "/v1/series-stats", { token: account.token, body: { values: [3, 4] } })
    expect(res.status).toBe(200)
    for (const s of half) s.destroy()
  })

  it("Node's own refusals are problem+json with hcc_cost 0 and an X-Request-Id: 431 for oversized headers, 400 for a malformed request", async () => {
    const big = await rawSocket(server)
    big.write(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`)
    const tooLarge = await readAll(big)
    expect(tooLarge).toMatch(/^HTTP\/1\.1 431 /)
    const body431 = JSON.parse(tooLarge.slice(tooLarge.indexOf("\r\n\r\n") + 4))
    expect(body431).toMatchObject({ status: 431, code: "headers_too_large", hcc_cost: 0 })
    expect(tooLarge).toMatch(/X-Request-Id: /i)

    const garbage = await rawSocket(server)
    garbage.write("THIS IS NOT HTTP\r\n\r\n")
    const bad = await readAll(garbage)
    expect(bad).toMatch(/^HTTP\/1\.1 400 /)
    expect(bad).toContain("application/problem+json")
    expect(JSON.parse(bad.slice(bad.indexOf("\r\n\r\n") + 4))).toMatchObject({ status: 400, hcc_cost: 0 })
  })
})

describe("HTTP hygiene", () => {
  let server: TestServer
  let withCors: TestServer
  beforeAll(async () => {
    ;[server, withCors] = await Promise.all([
      startServer(),
      startServer({ env: { HCC_CORS_ORIGINS: "https://app.example.com, http://localhost:5173" } })
    ])
    await Promise.all([waitReady(server), waitReady(withCors)])
  })
  afterAll(async () => {
    await Promise.all([server.stop(), withCors.stop()])
  })

  it("every answer says nosniff, no referrer, no framing, a strict CSP; authenticated answers are no-store", async () => {
    for (const [path, token] of [["/healthz", null], ["/v1/usage", server.demoToken], ["/nowhere", null], ["/v1/catalog", null]] as const) {
      const res = await call(server, path, { token })
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff")
      expect(res.headers.get("referrer-policy")).toBe("no-referrer")
      expect(res.headers.get("x-frame-options")).toBe("DENY")
      expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'")
      expect(res.headers.get("cache-control")).toBe(token === null ? null : "no-store")
    }
  })

  it("the /docs page's CSP allows exactly its own inline script and style (by hash) and nothing from elsewhere", async () => {
    const res = await call(server, "/docs", { token: null })
    const html = await res.text()
    const csp = res.headers.get("content-security-policy")!
    const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!)
    const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!)
    expect(scripts.length).toBeGreaterThan(0)
    expect(styles.length).toBeGreaterThan(0)
    for (const s of scripts) expect(csp).toContain(hash(s))
    for (const s of styles) expect(csp).toContain(hash(s))
    expect(csp).toContain("default-src 'none'")
    expect(csp).not.toContain("unsafe-inline")
    expect(csp).not.toMatch(/https?:/)
    // Every script and stylesheet of the page is inline: nothing for the CSP to block.
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet/)
  })

  it("HEAD answers every GET with its headers and no body", async () => {
    const identity = { "accept-encoding": "identity" }
    const get = await call(server, "/v1/catalog", { headers: identity })
    const head = await call(server, "/v1/catalog", { method: "HEAD", headers: identity })
    expect(head.status).toBe(200)
    expect(await head.text()).toBe("")
    expect(head.headers.get("content-type")).toBe(get.headers.get("content-type"))
    expect(head.headers.get("content-length")).toBe(String((await get.arrayBuffer()).byteLength))
    expect((await call(server, "/healthz", { method: "HEAD", token: null })).status).toBe(200)
  })

  it("a real CORS preflight: granted to an allowed origin, not to another; actual answers carry the grant and the readable headers", async () => {
    const preflight = (target: TestServer, origin: string) =>
      fetch(`${target.url}/v1/clinical`, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type, idempotency-key" }
      })
    const ok = await preflight(withCors, "https://app.example.com")
    expect(ok.status).toBe(204)
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com")
    expect(ok.headers.get("access-control-allow-methods")).toContain("POST")
    expect(ok.headers.get("access-control-allow-headers")).toBe("authorization, content-type, idempotency-key, x-request-id, traceparent")
    expect(ok.headers.get("access-control-max-age")).toBe("600")
    expect(ok.headers.get("vary")).toBe("Origin")
    const other = await preflight(withCors, "https://evil.example.net")
    expect(other.status).toBe(204)
    expect(other.headers.get("access-control-allow-origin")).toBeNull()
    // Off by default.
    expect((await preflight(server, "https://app.example.com")).headers.get("access-control-allow-origin")).toBeNull()
    const actual = await call(withCors, "/v1/catalog", { headers: { origin: "http://localhost:5173" } })
    expect(actual.headers.get("access-control-allow-origin")).toBe("http://localhost:5173")
    expect(actual.headers.get("access-control-expose-headers")).toContain("ratelimit")
    expect(actual.headers.get("access-control-expose-headers")).toContain("x-request-id")
  })

  it("the data folder and database file are created owner-only (0700 / 0600)", () => {
    expect(statSync(server.dataDir).mode & 0o777).toBe(0o700)
    expect(statSync(join(server.dataDir, "hcc.db")).mode & 0o777).toBe(0o600)
    expect(statSync(join(server.dataDir, "hcc.db-wal")).mode & 0o777).toBe(0o600)
  })
})
