/**
 * The hot paths' transactions on SQLite (Database.transaction over SqliteClient's direct
 * transaction): a durable one commits without fsync inside the synchronous call (`synchronous =
 * NORMAL` for it) and is made durable by flushing the write-ahead log asynchronously afterwards; the
 * connection's other statements keep the file's level (FULL). A direct transaction rolls back when
 * its body fails, takes turns with effect/sql's transactions on the same connection, and refuses
 * (instead of waiting forever) a statement its body runs through the client rather than its `exec`.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { DatabaseSync, type SQLInputValue, StatementSync } from "node:sqlite"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { AppConfig } from "../../src/config/AppConfig.ts"
import * as Database from "../../src/db/Database.ts"
import { Idempotency } from "../../src/metering/Idempotency.ts"
import { Accounts } from "../../src/auth/Accounts.ts"
import * as SqliteClient from "../../src/db/SqliteClient.ts"

const dir = mkdtempSync(join(tmpdir(), "hcc-durable-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const levelIn = (exec: Database.Exec, sql: SqlClient.SqlClient) => Effect.map(exec(sql<{ synchronous: number }>`PRAGMA synchronous`), ([r]) => r!.synchronous)
const level = (sql: SqlClient.SqlClient) => levelIn(Database.execAlone, sql)

describe("a durable transaction on SQLite", () => {
  it("commits relaxed, then flushes the write-ahead log; other statements stay FULL", async () => {
    const filename = join(dir, "a.db")
    const seen = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (v INTEGER)`
        const before = yield* level(sql)
        const inside = yield* Database.transaction(sql, "durable", (exec) => Effect.andThen(exec(sql`INSERT INTO t (v) VALUES (1)`), levelIn(exec, sql)))
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
        return yield* Effect.exit(Database.transaction(sql, "durable", (exec) => exec(sql`INSERT INTO t (v) VALUES (1)`)))
      }).pipe(Effect.scoped, Effect.provide(SqliteClient.layer({ filename })))
    )
    expect(exit._tag).toBe("Failure")
  })

  it("is a plain transaction on a client without a log file (:memory:)", async () => {
    const rows = await Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE t (v INTEGER)`
        yield* Database.transaction(sql, "durable", (exec) => exec(sql`INSERT INTO t (v) VALUES (2)`))
        return yield* sql<{ v: number }>`SELECT v FROM t`
      }).pipe(Effect.scoped, Effect.provide(SqliteClient.layer({ filename: ":memory:" })))
    )
    expect(rows.map((r) => r.v)).toEqual([2])
  })
})

describe("a direct transaction on SQLite", () => {
  const withClient = <A, E>(name: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, E>) =>
    Effect.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.andThen(sql`CREATE TABLE t (v INTEGER)`, f(sql))).pipe(
        Effect.scoped,
        Effect.provide(SqliteClient.layer({ filename: join(dir, name) }))
      )
    )
  const values = (sql: SqlClient.SqlClient) => Effect.map(sql<{ v: number }>`SELECT v FROM t ORDER BY v`, (rows) => rows.map((r) => r.v))

  it("is the transaction the service's SQLite client gives", async () => {
    await withClient("direct.db", (sql) => Effect.sync(() => expect(SqliteClient.directTransaction(sql)).toBeTypeOf("function")))
  })

  it("rolls back every statement when its body fails, and the connection goes on", async () => {
    const seen = await withClient("rollback.db", (sql) =>
      Effect.gen(function*() {
        const failed = yield* Effect.exit(Database.transaction(sql, "relaxed", (exec) =>
          Effect.andThen(exec(sql`INSERT INTO t (v) VALUES (1)`), Effect.fail("refused" as const))))
        const broken = yield* Effect.exit(Database.transaction(sql, "relaxed", (exec) =>
          Effect.andThen(exec(sql`INSERT INTO t (v) VALUES (2)`), exec(sql`INSERT INTO nowhere (v) VALUES (3)`))))
        yield* Database.transaction(sql, "relaxed", (exec) => exec(sql`INSERT INTO t (v) VALUES (4)`))
        return { failed: failed._tag, broken: broken._tag, rows: yield* values(sql) }
      }))
    expect(seen).toEqual({ failed: "Failure", broken: "Failure", rows: [4] })
  })

  it("waits for an effect/sql transaction on the same connection and runs after it", async () => {
    const rows = await withClient("turns.db", (sql) =>
      Effect.gen(function*() {
        const inside = yield* Deferred.make<void>()
        const first = yield* Effect.forkChild(sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO t (v) VALUES (1)`
          yield* Deferred.succeed(inside, undefined)
          yield* Effect.sleep("30 millis")
          yield* sql`INSERT INTO t (v) VALUES (2)`
        })))
        yield* Deferred.await(inside)
        // Its body sees both of the other transaction's rows: it ran after that one committed.
        const seen = yield* Database.transaction(sql, "relaxed", (exec) =>
          Effect.flatMap(exec(sql<{ n: number }>`SELECT COUNT(*) AS n FROM t`), ([r]) => Effect.as(exec(sql`INSERT INTO t (v) VALUES (${10 + r!.n})`), r!.n)))
        yield* Fiber.join(first)
        return { seen, rows: yield* values(sql) }
      }))
    expect(rows).toEqual({ seen: 2, rows: [1, 2, 12] })
  })

  it("refuses a statement its body runs through the client instead of its exec (rather than wait forever)", async () => {
    const seen = await withClient("misuse.db", (sql) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(Database.transaction(sql, "relaxed", (exec) =>
          Effect.andThen(exec(sql`INSERT INTO t (v) VALUES (1)`), sql`INSERT INTO t (v) VALUES (2)`)).pipe(Effect.timeout("2 seconds")))
        return { exit: exit._tag, message: exit._tag === "Failure" ? String(exit.cause) : "", rows: yield* values(sql) }
      }))
    expect(seen.exit).toBe("Failure")
    expect(seen.message).toContain("run it through the transaction's exec")
    expect(seen.rows).toEqual([])
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
