/**
 * A durable transaction on SQLite commits without fsync inside the synchronous call (`synchronous =
 * NORMAL` for it) and is made durable by flushing the write-ahead log asynchronously afterwards; the
 * connection's other statements keep the file's level (FULL).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { durableTransaction } from "../../src/db/Database.ts"
import * as SqliteClient from "../../src/db/SqliteClient.ts"

const dir = mkdtempSync(join(tmpdir(), "hcc-durable-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const level = (sql: SqlClient.SqlClient) => Effect.map(sql<{ synchronous: number }>`PRAGMA synchronous`, ([r]) => r!.synchronous)

describe("durableTransaction on SQLite", () => {
  it("commits relaxed, then flushes the write-ahead log; other statements stay FULL", async () => {
    const filename = join(dir, "a.db")
    const seen = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (v INTEGER)`
        const before = yield* level(sql)
        const inside = yield* durableTransaction(sql, Effect.andThen(sql`INSERT INTO t (v) VALUES (1)`, level(sql)))
        const after = yield* level(sql)
        const rows = yield* sql<{ v: number }>`SELECT v FROM t`
        return { before, inside, after, rows: rows.map((r) => r.v), log: existsSync(`${filename}-wal`) }
      }).pipe(Effect.scoped, Effect.provide(SqliteClient.layer({ filename })))
    )
    // 2 = FULL, 1 = NORMAL.
    expect(seen).toEqual({ before: 2, inside: 1, after: 2, rows: [1], log: true })
  })

  it("fails (does not pretend durability) when the write-ahead log cannot be flushed", async () => {
    const filename = join(dir, "b.db")
    const exit = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (v INTEGER)`
        // Gone from under the connection: the flush opens the log by name and must say so.
        rmSync(`${filename}-wal`)
        return yield* Effect.exit(durableTransaction(sql, sql`INSERT INTO t (v) VALUES (1)`))
      }).pipe(Effect.scoped, Effect.provide(SqliteClient.layer({ filename })))
    )
    expect(exit._tag).toBe("Failure")
  })

  it("is a plain transaction on a client without a log file (:memory:)", async () => {
    const rows = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (v INTEGER)`
        yield* durableTransaction(sql, sql`INSERT INTO t (v) VALUES (2)`)
        return yield* sql<{ v: number }>`SELECT v FROM t`
      }).pipe(Effect.scoped, Effect.provide(SqliteClient.layer({ filename: ":memory:" })))
    )
    expect(rows.map((r) => r.v)).toEqual([2])
  })
})
