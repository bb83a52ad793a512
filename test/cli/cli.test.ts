/**
 * The `hcc` command line as an operator uses it: every command with `--json` (output parses;
 * errors as problem JSON with exit ≠ 0), usage errors exit 2 with one line and a hint, examples in
 * every `--help`, `--log-level` honoured, `accounts update` / `disable` taking effect over HTTP,
 * `tokens list` saying when a token was last used, duplicate account names refused.
 */
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, newAccount, runHcc, startServer, type Target, tempDataDir, type TestServer, tryHcc, waitForLog, waitReady } from "../support/server.ts"

/**
 * `hcc <args>` on the test's command thread: the same commands as the process (runCli, src/cli.ts;
 * run-cli.test.ts holds the two to the same answers), without a process start each. `serve` runs as
 * the process (runCli does not serve), and so do the tests below of what the process itself does:
 * its exit code and its two streams.
 */
const command = (target: Target, args: ReadonlyArray<string>) => (args[0] === "serve" ? runHcc(target, args) : tryHcc(target, args))

const json = (r: { readonly stdout: string }) => JSON.parse(r.stdout) as Record<string, any>
const problem = (r: { readonly stderr: string }) => JSON.parse(r.stderr.trim().split("\n").at(-1)!) as Record<string, any>

describe("every command with --json", () => {
  const dir = tempDataDir()

  it("accounts create / list / update / disable / enable print JSON as the HTTP API names things", () => {
    const created = command(dir, ["accounts", "create", "--name", "acme", "--tier", "professional", "--burst-limit", "7", "--json"])
    expect(created.status).toBe(0)
    const account = json(created)
    expect(account).toEqual({
      id: expect.stringMatching(/^acc_/),
      name: "acme",
      tier: "Professional",
      daily_limit: 1000,
      burst_per_minute: 7,
      overrides: { daily_limit: null, burst_per_minute: 7 },
      created_at: expect.any(String),
      disabled_at: null
    })
    const list = JSON.parse(command(dir, ["accounts", "list", "--json"]).stdout) as Array<Record<string, unknown>>
    expect(list).toEqual([account])
    const updated = json(command(dir, ["accounts", "update", account.id, "--tier", "Enterprise", "--burst-limit", "tier", "--daily-limit", "5", "--name", "acme-labs", "--json"]))
    expect(updated).toMatchObject({ name: "acme-labs", tier: "Enterprise", daily_limit: 5, burst_per_minute: 200, overrides: { daily_limit: 5, burst_per_minute: null } })
    const disabled = json(command(dir, ["accounts", "disable", account.id, "--json"]))
    expect(disabled.disabled_at).toEqual(expect.any(String))
    expect(json(command(dir, ["accounts", "enable", account.id, "--json"])).disabled_at).toBeNull()
  })

  it("tokens issue / list / revoke print JSON; the token only from issue", () => {
    const account = json(command(dir, ["accounts", "create", "--name", "tokens-test", "--tier", "starter", "--json"]))
    const issued = json(command(dir, ["tokens", "issue", "--account", account.id, "--label", "ci", "--json"]))
    expect(issued).toEqual({
      id: expect.stringMatching(/^tok_/),
      account_id: account.id,
      label: "ci",
      created_at: expect.any(String),
      expires_at: null,
      revoked_at: null,
      last_used_at: null,
      token: expect.stringMatching(/^hcc_/)
    })
    const listed = JSON.parse(command(dir, ["tokens", "list", "--account", account.id, "--json"]).stdout) as Array<Record<string, unknown>>
    expect(listed).toEqual([{ ...issued, token: undefined }].map(({ token: _, ...rest }) => rest))
    expect(json(command(dir, ["tokens", "revoke", issued.id, "--json"])).revoked_at).toEqual(expect.any(String))
  })

  it("data generate / export / import print JSON on stdout, progress on stderr", () => {
    const data = tempDataDir()
    const generated = command(data, ["data", "generate", "--patients", "200", "--seed", "3", "--json"])
    expect(generated.status).toBe(0)
    expect(json(generated)).toMatchObject({ patients: 200, seed: 3, seconds: expect.any(Number) })
    expect(generated.stderr).toMatch(/generating 200 patients: writing 100%/)
    const out = join(tempDataDir(), "export")
    expect(json(command(data, ["data", "export", out, "--json"]))).toEqual({ format: "csv", folder: out })
    expect(readdirSync(out)).toContain("patients.csv")
    expect(json(command(tempDataDir(), ["data", "import", out, "--json"]))).toMatchObject({ format: "csv", folder: out, patients: 200, rows: { patients: 200 }, seconds: expect.any(Number), phases: { reading: expect.any(Number) } })
  })

  it("data export shows each table as a phase, with its share done as its pages are written", () => {
    // 1,000 patients: their monthly scores take two pages of the export, so the share moves within the table.
    const data = tempDataDir()
    expect(command(data, ["data", "generate", "--patients", "1000", "--seed", "3"]).status).toBe(0)
    const exported = command(data, ["data", "export", join(tempDataDir(), "export")])
    expect(exported.status).toBe(0)
    const lines = exported.stderr.split("\n").filter((l) => l.startsWith("exporting: writing axis_scores"))
    expect(lines[0]).toMatch(/^exporting: writing axis_scores \(\d+ of \d+\) 0% /)
    expect(lines.some((l) => / [1-9]0% \(/.test(l))).toBe(true)
    expect(lines.at(-1)).toMatch(/ 100% \(/)
  })

  it("--version --json", () => {
    expect(json(runHcc(dir, ["--version", "--json"]))).toEqual({ name: "hcc", version: expect.stringMatching(/^\d+\.\d+\.\d+/) })
  })

  it("errors are problem JSON on stderr with exit ≠ 0, stdout empty", () => {
    const missing = runHcc(dir, ["accounts", "disable", "acc_nope", "--json"])
    expect(missing.status).toBe(1)
    expect(missing.stdout).toBe("")
    expect(problem(missing)).toEqual({ type: "about:blank", title: "Not Found", code: "account_not_found", detail: "no account with id acc_nope", exit_code: 1 })
    const revoke = runHcc(dir, ["tokens", "revoke", "tok_nope", "--json"])
    expect(problem(revoke)).toMatchObject({ code: "token_not_found", exit_code: 1 })
    const badImport = runHcc(tempDataDir(), ["data", "import", join(tempDataDir(), "nothing-here"), "--json"])
    expect(badImport.status).toBe(1)
    expect(problem(badImport)).toMatchObject({ code: "import_rejected", detail: "nothing was imported: 1 problem", errors: [expect.stringMatching(/no such folder/)] })
    const usage = runHcc(dir, ["accounts", "create", "--name", "x", "--tier", "gold", "--json"])
    expect(usage.status).toBe(2)
    expect(problem(usage)).toMatchObject({ code: "usage_error", exit_code: 2, hint: "Run 'hcc accounts create --help' for usage.", detail: expect.stringContaining("--tier") })
  })
})

describe("usage errors", () => {
  const dir = tempDataDir()
  const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>, RegExp, string]> = [
    ["a missing flag", ["accounts", "create", "--name", "x"], /Missing required flag: --tier/, "hcc accounts create"],
    ["an invalid value", ["tokens", "issue", "--account", "acc_x", "--expires-in-days", "soon"], /expires-in-days/, "hcc tokens issue"],
    ["an unknown subcommand", ["accounts", "lst"], /Unknown subcommand "lst"/, "hcc accounts"],
    ["an unknown flag", ["tokens", "list", "--acount", "x"], /acount/, "hcc tokens list"],
    ["a value the command refuses", ["data", "generate", "--patients", "0"], /--patients must be between 1 and/, "hcc data generate"],
    ["nothing to change", ["accounts", "update", "acc_x"], /nothing to change/, "hcc accounts update"],
    ["a bad limit", ["accounts", "update", "acc_x", "--burst-limit", "0"], /--burst-limit must be a whole number from 1/, "hcc accounts update"],
    ["a bad --workers", ["serve", "--workers", "many"], /--workers must be auto or a whole number/, "hcc serve"],
    ["a bad --threads", ["serve", "--threads", "many"], /--threads must be auto or a whole number from 0 to 99/, "hcc serve"]
  ]
  for (const [what, args, message, named] of cases) {
    it(`${what}: exit 2, one line and a hint, not the whole help`, () => {
      const r = command(dir, args)
      expect(r.status).toBe(2)
      expect(r.stderr).toMatch(message)
      expect(r.stderr).toContain(`Run '${named} --help' for usage.`)
      expect(r.stderr).not.toContain("USAGE")
      expect(r.stdout).not.toContain("USAGE")
      expect(r.stderr.trim().split("\n").length).toBeLessThanOrEqual(5)
    })
  }

  it("help asked for is shown and exits 0; every command's help has examples", () => {
    const commands = [
      ["serve"], ["accounts", "create"], ["accounts", "list"], ["accounts", "update"], ["accounts", "disable"], ["accounts", "enable"],
      ["tokens", "issue"], ["tokens", "list"], ["tokens", "revoke"], ["data", "generate"], ["data", "import"], ["data", "export"]
    ]
    for (const c of commands) {
      const r = command(dir, [...c, "--help"])
      expect(r.status, c.join(" ")).toBe(0)
      expect(r.stdout, c.join(" ")).toContain("EXAMPLES")
      expect(r.stdout, c.join(" ")).toContain(`hcc ${c.join(" ")}`)
    }
  })
})

describe("duplicate account names", () => {
  it("are refused on create and on rename, whatever their case", () => {
    const dir = tempDataDir()
    const first = JSON.parse(command(dir, ["accounts", "create", "--name", "Acme", "--tier", "starter", "--json"]).stdout) as { id: string }
    const again = command(dir, ["accounts", "create", "--name", "acme", "--tier", "starter"])
    expect(again.status).toBe(1)
    expect(again.stderr).toContain(`an account named "acme" already exists (${first.id})`)
    const other = JSON.parse(command(dir, ["accounts", "create", "--name", "Other", "--tier", "starter", "--json"]).stdout) as { id: string }
    const rename = command(dir, ["accounts", "update", other.id, "--name", "ACME", "--json"])
    expect(rename.status).toBe(1)
    expect(JSON.parse(rename.stderr.trim())).toMatchObject({ code: "duplicate_account_name", exit_code: 1 })
    // Renaming an account to its own name in another case is allowed.
    expect(command(dir, ["accounts", "update", first.id, "--name", "ACME"]).status).toBe(0)
    expect((JSON.parse(command(dir, ["accounts", "list", "--json"]).stdout) as Array<{ name: string }>).map((a) => a.name)).toEqual(["ACME", "Other"])
  })
})

describe("changes reach a running server", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ env: { HCC_AUTH_CACHE_MS: "0" } })
    await waitReady(server)
  })
  afterAll(async () => {
    await server.stop()
  })

  it("accounts disable: its tokens get 401 at once; enable: they work again", async () => {
    const { accountId, token } = newAccount(server, { tier: "starter" })
    expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
    expect(command(server, ["accounts", "disable", accountId]).status).toBe(0)
    const refused = await call(server, "/v1/catalog", { token })
    expect(refused.status).toBe(401)
    expect(((await refused.json()) as { code: string; detail: string })).toMatchObject({ code: "invalid_token", detail: expect.stringContaining("disabled") })
    expect(command(server, ["accounts", "enable", accountId]).status).toBe(0)
    expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
  })

  it("accounts update: the new tier's and overrides' limits apply to the next request", async () => {
    const { accountId, token } = newAccount(server, { tier: "starter" })
    const before = await (await call(server, "/v1/usage", { token })).json() as { tier: string; limits: { burst: { limit: number } } }
    expect(before).toMatchObject({ tier: "Starter", limits: { burst: { limit: 10 } } })
    expect(command(server, ["accounts", "update", accountId, "--tier", "enterprise", "--burst-limit", "3"]).status).toBe(0)
    const after = await (await call(server, "/v1/usage", { token })).json() as { tier: string; limits: { burst: { limit: number }; daily: { limit: number } } }
    expect(after).toMatchObject({ tier: "Enterprise", limits: { burst: { limit: 3 }, daily: { limit: 10_000 } } })
    // The burst override binds: the window already holds two requests; the fourth is refused.
    expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
    const limited = await call(server, "/v1/catalog", { token })
    expect(limited.status).toBe(429)
  })

  it("tokens list says when a token was last used", async () => {
    const { accountId, token, tokenId } = newAccount(server, { tier: "starter" })
    const unused = JSON.parse(command(server, ["tokens", "list", "--account", accountId, "--json"]).stdout) as Array<{ id: string; last_used_at: string | null }>
    expect(unused).toEqual([expect.objectContaining({ id: tokenId, last_used_at: null })])
    const sent = Date.now()
    expect((await call(server, "/v1/catalog", { token })).status).toBe(200)
    let lastUsed: string | null = null
    for (let i = 0; i < 50 && lastUsed === null; i++) {
      await new Promise((r) => setTimeout(r, 100))
      lastUsed = (JSON.parse(command(server, ["tokens", "list", "--account", accountId, "--json"]).stdout) as Array<{ last_used_at: string | null }>)[0]!.last_used_at
    }
    expect(Math.abs(Date.parse(lastUsed!) - sent)).toBeLessThan(10_000)
    expect(command(server, ["tokens", "list", "--account", accountId]).stdout).toMatch(/LAST USED[\s\S]*\d{4}-\d\d-\d\d \d\d:\d\d/)
  })
})

describe("serve", () => {
  it("accepts --json (its log is JSON lines) and --log-level debug logs the probes", async () => {
    const server = await startServer({ serveArgs: ["--json", "--log-level", "debug"], env: { HCC_LOG_LEVEL: "info" } })
    try {
      await fetch(`${server.url}/healthz`)
      const line = await waitForLog(server, (l) => l.msg === "request" && l.path === "/healthz")
      expect(line.level).toBe("info")
      for (const l of server.stdout().split("\n").filter((x) => x.trim() !== "")) expect(() => JSON.parse(l)).not.toThrow()
    } finally {
      await server.stop()
    }
  })

  it("without --log-level the probes stay out of the log at info", async () => {
    const server = await startServer({ serveArgs: [], env: { HCC_LOG_LEVEL: "info" } })
    try {
      await fetch(`${server.url}/healthz`)
      await fetch(`${server.url}/v1/catalog`)
      await waitForLog(server, (l) => l.msg === "request" && l.path === "/v1/catalog")
      expect(server.logLines().some((l) => l.msg === "request" && l.path === "/healthz")).toBe(false)
    } finally {
      await server.stop()
    }
  })
})

describe("--log-level on other commands", () => {
  it("sends log lines to stderr at the level asked, never to stdout", () => {
    const dir = tempDataDir()
    const quiet = runHcc(dir, ["accounts", "list", "--json"])
    expect(quiet.stderr).toBe("")
    const loud = runHcc(tempDataDir(), ["accounts", "list", "--json", "--log-level", "debug"])
    expect(JSON.parse(loud.stdout)).toEqual([])
    expect(loud.stderr).toMatch(/"level":"debug"/)
    expect(existsSync(join(dir, "hcc.db"))).toBe(true)
  })
})
