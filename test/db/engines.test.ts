/**
 * SQLite and PostgreSQL are one service: the same data gives byte-for-byte the same answers.
 * A server on each engine generates the default dataset (same population and seed); every sample
 * call of README.md is sent to both.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { testDatabase } from "../support/postgres.ts"
import { call, ROOT, startServer, type TestServer, waitReady } from "../support/server.ts"

/** The README's sample calls: each `curl … /v1/<path> … -d '<json>'`. */
const readmeCalls = (): Array<{ readonly path: string; readonly body: string }> => {
  const text = readFileSync(join(ROOT, "README.md"), "utf8").replace(/\\\n\s*/g, "")
  return [...text.matchAll(/curl -s localhost:8080(\/v1\/[a-z-]+) [^\n]*?-d '([^']+)'/g)].map((m) => ({ path: m[1]!, body: m[2]! }))
}

const ENV = { HCC_POPULATION: "12000", HCC_SEED: "20240601" }
let sqlite: TestServer
let postgres: TestServer

beforeAll(async () => {
  const databaseUrl = await testDatabase()
  ;[sqlite, postgres] = await Promise.all([startServer({ env: ENV }), startServer({ env: ENV, databaseUrl })])
  await Promise.all([waitReady(sqlite), waitReady(postgres)])
}, 180_000)
afterAll(async () => {
  await Promise.all([sqlite?.stop(), postgres?.stop()])
})

describe("the same dataset on SQLite and PostgreSQL", () => {
  it("the README has a sample call for each of the seven domains", () => {
    expect(readmeCalls().map((c) => c.path).sort()).toEqual(
      ["/v1/clinical", "/v1/device-outcomes", "/v1/drug-outcomes", "/v1/one-health", "/v1/population", "/v1/risk-model", "/v1/temporal"]
    )
  })
  it("answers every README sample call with identical bodies", async () => {
    for (const { body, path } of readmeCalls()) {
      const [a, b] = await Promise.all([call(sqlite, path, { body }), call(postgres, path, { body })])
      expect([path, a.status, b.status]).toEqual([path, 200, 200])
      expect(await b.text()).toBe(await a.text())
    }
  })
  it("the PostgreSQL server's log names its engine and never the password", () => {
    const started = postgres.logLines().find((l) => l.msg === "state database")
    expect(started).toMatchObject({ engine: "postgres" })
    expect(postgres.stdout()).not.toContain("pg-secret-7f3a")
  })
})
