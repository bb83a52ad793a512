/**
 * A durable transaction on SQLite commits without fsync inside the synchronous call (`synchronous =
 * NORMAL` for it) and is made durable by flushing the write-ahead log asynchronously afterwards; the
 * connection's other statements keep the file's level (FULL).
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { DatabaseSync, type SQLInputValue, StatementSync } from "node:sqlite"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { AppConfig } from "../../src/config/AppConfig.ts"
import * as Database from "../../src/db/Database.ts"
import { durableTransaction } from "../../src/db/Database.ts"
import { Idempotency } from "../../src/metering/Idempotency.ts"
import { Accounts } from "../../src/auth/Accounts.ts"
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

describe("an Idempotency-Key claim on SQLite", () => {
  it("commits relaxed (synchronous = NORMAL: no fsync holding the event loop); the ledger's flush makes it durable", async () => {
    // The `synchronous` level in force when the claim's INSERT runs, read on its own connection.
    const levels: Array<number> = []
    const dbOf = new WeakMap<StatementSync, DatabaseSync>()
    const prepare = DatabaseSync.prototype.prepare
    const all = StatementSync.prototype.all
    DatabaseSync.prototype.prepare = function(this: DatabaseSync, sql: string) {
      const st = prepare.call(this, sql)
      dbOf.set(st, this)
      return st
    }
    StatementSync.prototype.all = function(this: StatementSync, ...args: Array<SQLInputValue>) {
      if (this.sourceSQL.startsWith("INSERT INTO idempotency_keys")) {
        levels.push((prepare.call(dbOf.get(this)!, "PRAGMA synchronous").get() as { synchronous: number }).synchronous)
      }
      return (all as (...a: Array<SQLInputValue>) => ReturnType<StatementSync["all"]>).apply(this, args)
    } as StatementSync["all"]
    try {
      const claims = await Effect.runPromise(
        Effect.gen(function*() {
          const idempotency = yield* Idempotency
          const account = yield* (yield* Accounts).create({ name: "claims", tier: "starter" })
          return [yield* idempotency.claim(account.id, "key-1", "f1"), yield* idempotency.claim(account.id, "key-1", "f1")]
        }).pipe(
          Effect.scoped,
          Effect.provide(Layer.mergeAll(Idempotency.layer, Accounts.layer).pipe(Layer.provideMerge(Database.layer), Layer.provide(AppConfig.layerTest({ dataDir: join(dir, "claims") }))))
        )
      )
      expect(claims.map((c) => c._tag)).toEqual(["New", "InUse"])
      // 1 = NORMAL (2 = FULL, the file's level, which fsyncs inside the synchronous commit).
      expect(levels).toEqual([1, 1])
    } finally {
      DatabaseSync.prototype.prepare = prepare
      StatementSync.prototype.all = all
    }
  })
})
