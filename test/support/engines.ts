/**
 * The HTTP contract runs against both engines: `describe.each(ENGINES)` and a server per engine,
 * on SQLite in its data folder or on a database of the run's PostgreSQL made for the test file.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { expect } from "vitest"
import { testDatabase } from "./postgres.ts"
import { type ServerOptions, startServer, type TestServer } from "./server.ts"

/** The engines the service runs on. */
export const ENGINES = ["sqlite", "postgres"] as const
/** One engine. */
export type Engine = (typeof ENGINES)[number]

/** Each test file's database, by file: a worker runs many files and keeps this module between them. */
const databases = new Map<string, Promise<string>>()
/** The test file's database on `engine` (undefined for SQLite, which lives in the data folder). */
export const databaseFor = async (engine: Engine): Promise<string | undefined> => {
  if (engine === "sqlite") return undefined
  const file = expect.getState().testPath ?? ""
  let url = databases.get(file)
  if (url === undefined) {
    url = testDatabase()
    databases.set(file, url)
  }
  return url
}

/** Starts a server on `engine` (on PostgreSQL, on the test file's database). */
export const startOn = async (engine: Engine, options: ServerOptions = {}): Promise<TestServer> =>
  startServer({ ...options, databaseUrl: await databaseFor(engine) })

/**
 * The runs of the HTTP contract's catalogue: each engine, and SQLite with OpenTelemetry export on
 * (every request then answered inside its server span).
 */
export const CONTRACT_RUNS = [...ENGINES, "sqlite with OTLP export"] as const
/** One run. */
export type ContractRun = (typeof CONTRACT_RUNS)[number]

let collector: Promise<string> | undefined
/** A local OTLP/HTTP endpoint that accepts and drops whatever is exported to it (one per test file). */
const otlpCollector = (): Promise<string> =>
  (collector ??= new Promise((resolve) => {
    const server = createServer((req, res) => {
      req.resume()
      req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end("{}"))
    })
    server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
    server.unref()
  }))

/** Starts a server for one run of the contract. */
export const startRun = async (run: ContractRun, options: ServerOptions = {}): Promise<TestServer> =>
  run === "sqlite with OTLP export"
    ? startServer({ ...options, env: { ...options.env, OTEL_EXPORTER_OTLP_ENDPOINT: await otlpCollector(), OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_BSP_SCHEDULE_DELAY: "100" } })
    : startOn(run, options)
