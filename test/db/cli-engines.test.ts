/**
 * `hcc data generate | import | export` and `hcc accounts | tokens` on PostgreSQL: the same seed
 * exports byte-identical CSV on both engines, and an import into PostgreSQL exports what went in.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { query } from "../support/db.ts"
import { testDatabase } from "../support/postgres.ts"
import { hcc, tempDataDir } from "../support/server.ts"

/** Every file of a folder, by name. */
const filesOf = (folder: string) => Object.fromEntries(readdirSync(folder).sort().map((f) => [f, readFileSync(join(folder, f), "utf8")]))

describe("the hcc CLI on PostgreSQL", () => {
  it("generates, exports and imports the same bytes as on SQLite", async () => {
    const sqlite = { dataDir: tempDataDir() }
    const pg = { dataDir: tempDataDir(), databaseUrl: await testDatabase() }
    const [fromSqlite, fromPg, roundTrip] = [tempDataDir(), tempDataDir(), tempDataDir()]
    const foreignKeys = async () => (await query<{ n: number }>(pg, "SELECT COUNT(*) AS n FROM pg_constraint WHERE contype = 'f'"))[0]?.n
    hcc(pg, ["accounts", "list"]) // migrates
    const before = await foreignKeys()
    expect(before).toBeGreaterThan(10)
    for (const target of [sqlite, pg]) hcc(target, ["data", "generate", "--patients", "400", "--seed", "11"])
    // The bulk load checks foreign keys once at the end (dropped and re-added): all are back.
    expect(await foreignKeys()).toBe(before)
    hcc(sqlite, ["data", "export", fromSqlite])
    hcc(pg, ["data", "export", fromPg])
    const exported = filesOf(fromSqlite)
    expect(Object.keys(exported)).toContain("patients.csv")
    expect(filesOf(fromPg)).toEqual(exported)
    // Into a second PostgreSQL database and out again.
    const other = { dataDir: tempDataDir(), databaseUrl: await testDatabase() }
    hcc(other, ["data", "import", fromSqlite])
    hcc(other, ["data", "export", roundTrip])
    expect(filesOf(roundTrip)).toEqual(exported)
    const [patients] = await query<{ n: number }>(other, "SELECT COUNT(*) AS n FROM patients")
    expect(patients?.n).toBe(400)
  }, 120_000)

  it("creates and lists accounts, issues, lists and revokes tokens", async () => {
    const pg = { dataDir: tempDataDir(), databaseUrl: await testDatabase() }
    const account = JSON.parse(hcc(pg, ["accounts", "create", "--name", "acme", "--tier", "enterprise", "--burst-limit", "5000000000", "--json"])) as { id: string; burst_per_minute: number }
    expect(account.burst_per_minute).toBe(5_000_000_000)
    expect(JSON.parse(hcc(pg, ["accounts", "list", "--json"]))).toEqual([
      expect.objectContaining({ id: account.id, name: "acme", tier: "Enterprise", burst_per_minute: 5_000_000_000, overrides: { daily_limit: null, burst_per_minute: 5_000_000_000 } })
    ])
    const token = JSON.parse(hcc(pg, ["tokens", "issue", "--account", account.id, "--json"])) as { id: string; token: string }
    expect(hcc(pg, ["tokens", "list", "--account", account.id])).toContain(token.id)
    const revoked = JSON.parse(hcc(pg, ["tokens", "revoke", token.id, "--json"])) as { revoked_at: string | null }
    expect(revoked.revoked_at).not.toBeNull()
  }, 60_000)
})
