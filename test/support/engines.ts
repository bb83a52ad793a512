/**
 * The HTTP contract runs against both engines: `describe.each(ENGINES)` and a server per engine,
 * on SQLite in its data folder or on a database of the run's PostgreSQL made for the test file.
 */
import { testDatabase } from "./postgres.ts"
import { type ServerOptions, startServer, type TestServer } from "./server.ts"

/** The engines the service runs on. */
export const ENGINES = ["sqlite", "postgres"] as const
/** One engine. */
export type Engine = (typeof ENGINES)[number]

const databases = new Map<Engine, Promise<string>>()
/** The test file's database on `engine` (undefined for SQLite, which lives in the data folder). */
export const databaseFor = async (engine: Engine): Promise<string | undefined> => {
  if (engine === "sqlite") return undefined
  let url = databases.get(engine)
  if (url === undefined) {
    url = testDatabase()
    databases.set(engine, url)
  }
  return url
}

/** Starts a server on `engine` (on PostgreSQL, on the test file's database). */
export const startOn = async (engine: Engine, options: ServerOptions = {}): Promise<TestServer> =>
  startServer({ ...options, databaseUrl: await databaseFor(engine) })
