/**
 * The dataset writer (src/health/DatasetWriter.ts) fills the set of tables that is not served and
 * switches the views over at the end: between its chunks another process writes without waiting
 * and still reads the previous dataset whole; a write that fails leaves the previous dataset served
 * and mends nothing by hand for the next one; one writer at a time, and a writer killed on this
 * machine does not block the next.
 */
import * as Cause from "effect/Cause"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { spawnSync } from "node:child_process"
import { hostname } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { describe, expect, it } from "vitest"
import { runMigrations } from "../../src/db/migrations.ts"
import * as PgLayer from "../../src/db/PgClient.ts"
import * as SqliteClient from "../../src/db/SqliteClient.ts"
import { type Chunk, DatasetBusy, OnUnfinished, replaceDataset, type Unfinished } from "../../src/health/DatasetWriter.ts"
import { HEALTH_TABLE_NAMES } from "../../src/health/healthTables.ts"
import { generatedChunks } from "../../src/synthetic/generator.ts"
import { datasetStamp } from "../../src/health/snapshot.ts"
import { ENGINES, type Engine } from "../support/engines.ts"
import { testDatabase } from "../support/postgres.ts"
import { tempDataDir } from "../support/server.ts"

/** A migrated database on `engine`: its client layer and, on SQLite, its file. */
const database = async (engine: Engine) => {
  if (engine === "postgres") return { file: undefined, layer: PgLayer.layer({ url: await testDatabase(), maxConnections: 2 }) }
  const file = join(tempDataDir(), "hcc.db")
  return { file, layer: SqliteClient.layer({ filename: file }) }
}

const run = <A, E>(layer: Layer.Layer<SqlClient.SqlClient, unknown>, effect: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.andThen(runMigrations, effect).pipe(Effect.scoped, Effect.provide(layer)))

/** What a reader sees: the patients, the dataset's seed and its stamp. */
const served = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const patients = Number((yield* sql`SELECT COUNT(*) AS n FROM patients`.values)[0]![0])
  const seed = (yield* sql`SELECT value FROM dataset_info WHERE key = 'seed'`.values)[0]?.[0]
  return { patients, seed: seed === undefined ? undefined : String(seed), stamp: yield* datasetStamp }
})

/** The foreign keys of each set on PostgreSQL. */
const foreignKeysBySet = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly set: string; readonly n: number }>`SELECT right(c.conrelid::regclass::text, 1) AS set, COUNT(*)::int AS n
    FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid::regclass::text ~ '_[ab]$' GROUP BY 1 ORDER BY 1`
  return Object.fromEntries(rows.map((r) => [r.set, r.n]))
})

/** Rows in the set the views do not read, all its tables together. */
const spareRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const spare = String((yield* sql`SELECT active FROM dataset_set`.values)[0]![0]) === "a" ? "b" : "a"
  let n = 0
  for (const t of HEALTH_TABLE_NAMES) n += Number((yield* sql.unsafe(`SELECT COUNT(*) AS n FROM ${t}_${spare}`).values)[0]![0])
  return n
})

/** The chunks of a generated population, failing when the `failAt`-th is asked for. */
function* failingAt(failAt: number, chunks: Iterable<Chunk>): Iterable<Chunk> {
  let i = 0
  for (const chunk of chunks) {
    if (++i === failAt) throw new Error("the source broke")
    yield chunk
  }
}

describe("the dataset writer on SQLite", () => {
  it("lets other processes write between its chunks, and they read the previous dataset until the switch", async () => {
    const { file, layer } = await database("sqlite")
    const seen: Array<{ readonly wrote: boolean; readonly patients: number }> = []
    /** Another process's connection, that will not wait for a lock: a write either goes through at once or fails. */
    const other = () => {
      const db = new DatabaseSync(file!)
      db.exec("PRAGMA busy_timeout = 0")
      try {
        let wrote = true
        try {
          db.exec("BEGIN IMMEDIATE")
          db.exec("INSERT INTO leases (name, owner, expires_ms) VALUES ('other', 'x', 0) ON CONFLICT (name) DO UPDATE SET expires_ms = leases.expires_ms + 1")
          db.exec("COMMIT")
        } catch {
          wrote = false
        }
        const patients = Number((db.prepare("SELECT COUNT(*) AS n FROM patients").get() as { n: number }).n)
        seen.push({ wrote, patients })
      } finally {
        db.close()
      }
    }
    function* observed(chunks: Iterable<Chunk>): Iterable<Chunk> {
      for (const chunk of chunks) {
        other()
        yield chunk
      }
    }
    const [before, after] = await run(layer, Effect.gen(function*() {
      yield* replaceDataset(generatedChunks({ patients: 300, seed: 1 }))
      const before = yield* served
      // Three chunks of patients (2,000 a chunk) between the vocabulary's and the surveillance's.
      yield* replaceDataset(observed(generatedChunks({ patients: 4500, seed: 2 })))
      return [before, yield* served] as const
    }))
    expect(before).toMatchObject({ patients: 300, seed: "1" })
    expect(after).toMatchObject({ patients: 4500, seed: "2" })
    expect(after.stamp).not.toBe(before.stamp)
    expect(seen.length).toBe(5)
    expect(seen).toEqual(seen.map(() => ({ wrote: true, patients: 300 })))
  })
})

describe.each(ENGINES)("the dataset writer on %s", (engine) => {
  it("leaves the previous dataset served when a write fails, and the next write succeeds", async () => {
    const { layer } = await database(engine)
    const result = await run(layer, Effect.gen(function*() {
      yield* replaceDataset(generatedChunks({ patients: 300, seed: 1 }))
      const before = yield* served
      const failed = yield* Effect.exit(replaceDataset(failingAt(3, generatedChunks({ patients: 4500, seed: 2 }))))
      const afterFailure = yield* served
      yield* replaceDataset(generatedChunks({ patients: 500, seed: 3 }))
      const next = yield* served
      // The set the failed write had begun (emptied again, its keys back on PostgreSQL) is served now, whole.
      yield* replaceDataset(generatedChunks({ patients: 400, seed: 4 }))
      const keys = engine === "postgres" ? yield* foreignKeysBySet : undefined
      return { before, failed, afterFailure, next, last: yield* served, keys }
    }))
    expect(Exit.isFailure(result.failed) && String(Cause.squash(result.failed.cause))).toContain("the source broke")
    expect(result.afterFailure).toEqual(result.before)
    expect(result.next).toMatchObject({ patients: 500, seed: "3" })
    expect(result.last).toMatchObject({ patients: 400, seed: "4" })
    if (result.keys !== undefined) {
      expect(result.keys["a"]).toBeGreaterThan(0)
      expect(result.keys["b"]).toBe(result.keys["a"])
    }
  })

  it("empties the set it had begun when it fails or is interrupted, and leaves it to a writer that took its lease", async () => {
    const { layer } = await database(engine)
    const left: Array<Unfinished> = []
    const told = Effect.provideService(OnUnfinished, (u: Unfinished) => Effect.sync(() => left.push(u)))
    /** Runs `onSecond` once two chunks (the vocabulary's and 2,000 patients) are committed. */
    const atSecondChunk = (onSecond: Effect.Effect<void>) => {
      let n = 0
      return { onProgress: () => (++n === 2 ? onSecond : Effect.void) }
    }
    const result = await run(layer, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // Both sets filled: the spare one holds the dataset before.
      yield* replaceDataset(generatedChunks({ patients: 200, seed: 9 }))
      yield* replaceDataset(generatedChunks({ patients: 300, seed: 1 }))
      const before = yield* served
      const filled = yield* spareRows
      yield* Effect.exit(told(replaceDataset(failingAt(3, generatedChunks({ patients: 4500, seed: 2 })))))
      const afterFailure = yield* spareRows
      const stuck = yield* Deferred.make<void>()
      const writer = yield* Effect.forkChild(told(replaceDataset(generatedChunks({ patients: 4500, seed: 3 }), atSecondChunk(Effect.andThen(Deferred.succeed(stuck, undefined), Effect.never)))))
      yield* Deferred.await(stuck)
      yield* Fiber.interrupt(writer)
      const afterInterrupt = yield* spareRows
      const keys = engine === "postgres" ? yield* foreignKeysBySet : undefined
      // Another writer takes the lease after the second chunk (as one would after 120 s without renewal).
      const takeOver = Effect.asVoid(Effect.orDie(sql`UPDATE leases SET owner = 'elsewhere/1/writer' WHERE name = 'dataset-write'`))
      const lost = yield* Effect.flip(told(replaceDataset(generatedChunks({ patients: 4500, seed: 4 }), atSecondChunk(takeOver))))
      const afterLost = yield* spareRows
      return { before, filled, afterFailure, afterInterrupt, keys, lost, afterLost, after: yield* served }
    }))
    expect(result.filled).toBeGreaterThan(0)
    expect(result.afterFailure).toBe(0)
    expect(result.afterInterrupt).toBe(0)
    if (result.keys !== undefined) expect(result.keys["b"]).toBe(result.keys["a"])
    expect(result.lost).toBeInstanceOf(DatasetBusy)
    expect(result.afterLost).toBeGreaterThan(0)
    expect(result.after).toEqual(result.before)
    expect(left.map((u) => ({ wrote: u.wrote, emptied: u.emptied }))).toEqual([
      { wrote: true, emptied: true },
      { wrote: true, emptied: true },
      { wrote: true, emptied: false }
    ])
    expect(left[2]?.emptied === false && left[2].error).toBeInstanceOf(DatasetBusy)
  })

  it("refuses a second writer while one writes, and takes over from one killed on this machine", async () => {
    const { layer } = await database(engine)
    const dead = spawnSync(process.execPath, ["-e", ""]).pid
    const result = await run(layer, Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* replaceDataset(generatedChunks({ patients: 300, seed: 1 }))
      const hold = (owner: string) =>
        sql`INSERT INTO leases (name, owner, expires_ms) VALUES ('dataset-write', ${owner}, ${Date.now() + 3_600_000})
          ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_ms = excluded.expires_ms`
      // A live writer (on another machine, so its process cannot be looked at).
      yield* hold("elsewhere/1/writer")
      const busy = yield* Effect.flip(replaceDataset(generatedChunks({ patients: 500, seed: 2 })))
      const whileBusy = yield* served
      // A writer of this machine whose process has ended.
      yield* hold(`${hostname()}/${dead}/writer`)
      yield* replaceDataset(generatedChunks({ patients: 500, seed: 3 }))
      const leases = yield* sql`SELECT owner FROM leases WHERE name = 'dataset-write'`.values
      return { busy, whileBusy, after: yield* served, leases }
    }))
    expect(result.busy).toBeInstanceOf(DatasetBusy)
    expect(result.whileBusy).toMatchObject({ patients: 300, seed: "1" })
    expect(result.after).toMatchObject({ patients: 500, seed: "3" })
    // Released when done.
    expect(result.leases).toEqual([])
  })
})
