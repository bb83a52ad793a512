/**
 * An effect/sql `SqlClient` over Node's built-in `node:sqlite` (no native addon, no extra dependency).
 *
 * Effect 4.1 ships no working SQLite driver (effect4-notes §10), so this is ours: one `DatabaseSync`
 * connection shared behind a semaphore that transactions hold, statements prepared once and cached,
 * `?` placeholders from the SQLite compiler. WAL journal so readers never wait for the writer.
 *
 * The event loop never waits on another writer: SQLite's own busy handler would sleep inside the
 * synchronous call (freezing every request, /healthz included), so it is off (`busy_timeout = 0`)
 * and a statement refused with SQLITE_BUSY is retried from an Effect timer with exponential
 * back-off (1 ms doubling to 64 ms) for up to `busyTimeoutMs`. Every transaction begins with
 * `BEGIN IMMEDIATE`, so it takes the write lock (or is refused, and retried) before its first
 * statement and never fails half-way on a lock upgrade.
 *
 * Nor does it wait on the disk where it need not: a transaction that must be durable before its
 * caller goes on (the ledger's) can commit relaxed and then {@link flushWal}: the write-ahead log
 * flushed by an asynchronous fdatasync on libuv's thread pool — what `synchronous = FULL` does at
 * commit, inside the synchronous call.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import * as Stream from "effect/Stream"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import * as SqlError from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import type * as SqlConnection from "effect/sql/SqlConnection"
import { closeSync, openSync } from "node:fs"
import { type FileHandle, open } from "node:fs/promises"
import { DatabaseSync, type SQLInputValue, type StatementSync } from "node:sqlite"
import { recordWalFlush } from "../observability/Metrics.ts"

/** Wraps a `node:sqlite` failure as an `SqlError`, keeping SQLite's code visible to the classifier. */
const toSqlError = (operation: string) => (cause: unknown): SqlError.SqlError => {
  // node:sqlite reports the SQLite code as `errcode`; effect's classifier reads `errno`.
  if (cause instanceof Error && "errcode" in cause) Object.assign(cause, { errno: cause.errcode })
  return new SqlError.SqlError({ reason: SqlError.classifySqliteError(cause, { message: operation, operation }) })
}

/** Options for opening the database file. */
export interface SqliteOptions {
  /** Path of the database file, or `:memory:`. */
  readonly filename: string
  /** `FULL` fsyncs the WAL on every commit; `NORMAL` survives a process crash but not a power loss. */
  readonly synchronous?: "FULL" | "NORMAL"
  /** How long a statement keeps retrying while another connection holds the write lock (default 5 s). */
  readonly busyTimeoutMs?: number
}

/** SQLITE_BUSY and its extended codes (the primary code is the low byte). */
const isBusy = (cause: unknown): boolean => cause instanceof Error && "errcode" in cause && (Number(cause.errcode) & 0xff) === 5

/** Each client's way of flushing its write-ahead log to the disk (none: nothing to flush, e.g. `:memory:`, or commits that need not be durable). */
const walFlushes = new WeakMap<SqlClient.SqlClient, Effect.Effect<void, SqlError.SqlError>>()

/**
 * Makes every transaction this SQLite client has committed durable, without holding the event loop:
 * fdatasync of its `-wal` file on libuv's thread pool (any descriptor of the file flushes it). Frames
 * moved into the database by a checkpoint are already on disk: SQLite syncs both files around every
 * checkpoint, at every level. Nothing to do for a client whose commits are not meant to be durable,
 * for `:memory:`, or for another engine.
 */
export const flushWal = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError.SqlError> => walFlushes.get(sql) ?? Effect.void

/** Runs one statement of a transaction and gives its rows (see {@link directTransaction}). */
export type Exec = <A extends object>(statement: Statement.Statement<A>) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>

/** A transaction on a client's connection without effect/sql's per-transaction machinery. */
export type DirectTransaction = <A, E, R>(body: (exec: Exec) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError.SqlError, R>

/** Each client's direct transactions. */
const directs = new WeakMap<SqlClient.SqlClient, DirectTransaction>()

/**
 * This client's direct transaction, or undefined for a client not made here. It holds the
 * connection as effect/sql's transactions do (the same semaphore, `BEGIN IMMEDIATE` retried while
 * another connection writes; committed with `synchronous = NORMAL`) and runs `body`'s statements
 * straight on their prepared statements: effect/sql's transaction allocates scopes, context
 * merges and spans costing more than SQLite's own work, and the limiter and the ledger run one or
 * more per charged call. It is traced as one `sql.transaction` span (no span per
 * statement). `body` runs its statements through `exec` only: a statement run through the client
 * inside it would wait for the connection `body` holds (it fails at once instead, naming the
 * mistake). Rolled back if `body` fails or is interrupted; waiting for another connection's write
 * lock (up to `busyTimeoutMs`) is not interruptible, so a transaction is never left open.
 */
export const directTransaction = (sql: SqlClient.SqlClient): DirectTransaction | undefined => directs.get(sql)

/** Longest pause between two attempts on a locked database. */
const MAX_BACKOFF_MS = 64

/** Runs `f`; while the database is locked by another connection, retries it after a timer. */
const unlocked = <A>(busyTimeoutMs: number, f: () => A): Effect.Effect<A, SqlError.SqlError> => {
  const attempt = Effect.try({ try: f, catch: (cause) => cause })
  const loop = (waited: number, delay: number): Effect.Effect<A, SqlError.SqlError> =>
    Effect.catch(attempt, (cause) =>
      isBusy(cause) && waited < busyTimeoutMs
        ? Effect.andThen(Effect.sleep(Duration.millis(delay)), loop(waited + delay, Math.min(delay * 2, MAX_BACKOFF_MS)))
        : Effect.fail(toSqlError("execute")(cause)))
  return loop(0, 1)
}

/**
 * The statements of one connection: prepared once and kept by their text, and run with their rows
 * as objects or as arrays of values.
 */
const statementsOf = (db: DatabaseSync) => {
  // A prepared statement with what we need to know on every call, computed once (`columns()`
  // allocates). Rows are read as arrays and made objects here: node:sqlite gives every row object
  // a hidden class of its own (allocated in the old generation, ~3.4 KB of garbage per row, and
  // every read of a row's field a megamorphic load); objects built here in the same order of the
  // same names share one, and reading a row that way is faster.
  interface Prepared {
    readonly statement: StatementSync
    /** The result columns' names; empty for a statement that returns no rows. */
    readonly names: ReadonlyArray<string>
    /** Rows come as node:sqlite makes them (a column is named `__proto__`). */
    readonly ownRows: boolean
  }
  const statements = new Map<string, Prepared>()
  const prepare = (sql: string): Prepared => {
    const statement = db.prepare(sql)
    const names = statement.columns().map((c) => c.name)
    // A column named __proto__ would set the prototype of an object built by assignment: such a
    // statement keeps node:sqlite's own row objects.
    const ownRows = names.includes("__proto__")
    if (names.length > 0 && !ownRows) statement.setReturnArrays(true)
    return { statement, names, ownRows }
  }
  const prepared = (sql: string): Prepared => {
    let st = statements.get(sql)
    if (st === undefined) {
      st = prepare(sql)
      statements.set(sql, st)
    }
    return st
  }
  /** Array rows as objects keyed by the column names (a later column of the same name wins, as in node:sqlite's). */
  const objectsOf = (rows: ReadonlyArray<ReadonlyArray<unknown>>, names: ReadonlyArray<string>): Array<Record<string, unknown>> => {
    const out: Array<Record<string, unknown>> = []
    for (const row of rows) {
      const o: Record<string, unknown> = {}
      for (let i = 0; i < names.length; i++) o[names[i]!] = row[i]
      out.push(o)
    }
    return out
  }
  /** Runs a statement now; its rows as objects, or as arrays of values. */
  const execute = (st: Prepared, params: ReadonlyArray<unknown>, arrays: boolean): ReadonlyArray<any> => {
    const args = params as Array<SQLInputValue>
    if (st.names.length === 0) {
      st.statement.run(...args)
      return []
    }
    if (st.ownRows) {
      st.statement.setReturnArrays(arrays)
      return st.statement.all(...args)
    }
    const rows = st.statement.all(...args) as unknown as ReadonlyArray<ReadonlyArray<unknown>>
    return arrays ? rows : objectsOf(rows, st.names)
  }
  return { execute, prepare, prepared }
}

/** Flushes the write-ahead log of `filename` to disk (datasync), its descriptor opened once and closed with the scope. */
const walFlush = (filename: string) =>
  Effect.gen(function*() {
    // The log is opened at the first flush (it exists once something was committed) and kept open:
    // SQLite resets it in place and deletes it only when the last connection closes, so this
    // descriptor stays the file SQLite writes — as its own descriptor, which FULL would sync, does.
    let wal: Promise<FileHandle> | undefined
    yield* Effect.addFinalizer(() => Effect.promise(async () => (await wal?.catch(() => undefined))?.close()))
    return Effect.tryPromise({
      try: async () => {
        const started = performance.now()
        wal ??= open(`${filename}-wal`, "r")
        const file = await wal.catch((e: unknown) => {
          wal = undefined // not there (yet): look again next time
          throw e
        })
        await file.datasync()
        recordWalFlush((performance.now() - started) / 1000)
      },
      catch: toSqlError("flush the write-ahead log")
    })
  })

/** The fiber running a direct transaction's body, which must not ask effect/sql for the connection it holds. */
interface DirectOwner {
  fiber: Fiber.Fiber<unknown, unknown> | undefined
}

/** A connection's direct transaction (see {@link directTransaction}). */
const directOf = (
  db: DatabaseSync,
  semaphore: Semaphore.Semaphore,
  busyTimeoutMs: number,
  statements: ReturnType<typeof statementsOf>,
  setSynchronous: (want: "FULL" | "NORMAL") => void,
  owner: DirectOwner
): DirectTransaction => {
  const exec: Exec = <A extends object>(statement: Statement.Statement<A>) =>
    Effect.try({
      try: (): ReadonlyArray<A> => {
        const [text, params] = statement.compile()
        return statements.execute(statements.prepared(text), params, false)
      },
      catch: toSqlError("execute")
    })
  /** Ends a transaction that failed; a ROLLBACK that fails too is tried again by the next BEGIN. */
  const abandon = () => {
    try {
      if (db.isTransaction) db.exec("ROLLBACK")
    } catch {
      // the next direct BEGIN rolls it back; effect/sql's acquirer does the same for its own
    }
  }
  // BEGIN retried while another connection writes; a transaction left open by a failed rollback is ended first.
  const begin = unlocked(busyTimeoutMs, () => {
    abandon()
    setSynchronous("NORMAL")
    statements.prepared("BEGIN IMMEDIATE").statement.run()
  })
  const commit = Effect.try({
    try: () => void statements.prepared("COMMIT").statement.run(),
    catch: (cause) => {
      abandon()
      return toSqlError("commit")(cause)
    }
  })
  // One span per transaction, under the caller's (effect/sql's would add one per statement).
  const spanOptions = { kind: "internal", attributes: { "db.system.name": "sqlite" } } as const
  return (body) =>
    Effect.useSpan("sql.transaction", spanOptions, () => semaphore.withPermit(Effect.uninterruptibleMask((restore) =>
      Effect.andThen(
        begin,
        Effect.withFiber((fiber) => {
          owner.fiber = fiber
          return Effect.matchCauseEffect(restore(body(exec)), {
            onFailure: (cause) => {
              owner.fiber = undefined
              abandon()
              return Effect.failCause(cause)
            },
            onSuccess: (value) => {
              owner.fiber = undefined
              return Effect.as(commit, value)
            }
          })
        })
      )
    )))
}

/** Opens the database (closed when the scope closes) and returns an `SqlClient` over it. */
export const make = (options: SqliteOptions) =>
  Effect.gen(function*() {
    const durable = options.synchronous ?? "FULL"
    // A direct transaction commits with `synchronous = NORMAL` (it survives a crash of the process,
    // not a power loss; the ledger's then flushes the log itself); every other statement runs at the
    // file's level. The level can change only outside a transaction.
    let synchronous: "FULL" | "NORMAL" = durable
    const setSynchronous = (want: "FULL" | "NORMAL") => {
      if (want !== synchronous) {
        db.exec(`PRAGMA synchronous = ${want}`)
        synchronous = want
      }
    }
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          // A new database file is created owner-only (0600) before SQLite opens it; SQLite gives its
          // -wal and -shm files the same mode. An existing file keeps the mode it has.
          if (options.filename !== ":memory:") closeSync(openSync(options.filename, "a", 0o600))
          return new DatabaseSync(options.filename)
        },
        catch: toSqlError("open")
      }),
      (d) => Effect.sync(() => d.isOpen && d.close())
    )
    // Processes opening a new file together race to switch it to WAL: retried like any statement.
    yield* unlocked(busyTimeoutMs, () => {
      db.exec("PRAGMA busy_timeout = 0")
      db.exec("PRAGMA journal_mode = WAL")
      db.exec(`PRAGMA synchronous = ${durable}`)
      db.exec("PRAGMA foreign_keys = ON")
    })
    const statements = statementsOf(db)
    const { execute, prepare, prepared } = statements
    const run = (sql: string, params: ReadonlyArray<unknown>, arrays: boolean, cache: boolean) =>
      unlocked(busyTimeoutMs, (): ReadonlyArray<any> => {
        if (synchronous !== durable && !db.isTransaction) setSynchronous(durable)
        return execute(cache ? prepared(sql) : prepare(sql), params, arrays)
      })
    const rows = (
      sql: string,
      params: ReadonlyArray<unknown>,
      transform: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined,
      cache = true
    ) => transform === undefined ? run(sql, params, false, cache) : Effect.map(run(sql, params, false, cache), transform)
    const connection: SqlConnection.Connection = {
      execute: (sql, params, transform) => rows(sql, params, transform),
      executeUnprepared: (sql, params, transform) => rows(sql, params, transform, false),
      executeRaw: (sql, params) => run(sql, params, false, true),
      executeStream: (sql, params, transform) => Stream.fromIterableEffect(rows(sql, params, transform)),
      executeValues: (sql, params) => run(sql, params, true, true),
      executeValuesUnprepared: (sql, params) => run(sql, params, true, false)
    }
    const semaphore = yield* Semaphore.make(1)
    const owner: DirectOwner = { fiber: undefined }
    const held = <A, E, R>(acquire: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.withFiber((fiber) =>
        fiber === owner.fiber
          ? Effect.die(new Error("a statement was run through the SQL client inside a direct transaction; run it through the transaction's exec"))
          : acquire
      )
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore,
      isTransaction: () => db.isTransaction
    })
    const client = yield* SqlClient.make({
      ...acquirers,
      acquirer: held(acquirers.acquirer),
      transactionAcquirer: held(acquirers.transactionAcquirer),
      borrower: (f) => held(acquirers.borrower(f)),
      compiler: Statement.makeCompilerSqlite(),
      driver: "node-sqlite",
      beginTransaction: "BEGIN IMMEDIATE",
      // SQLite prepares BEGIN/COMMIT/ROLLBACK like any statement; caching them saves a parse per transaction.
      prepareTransactionControls: true,
      spanAttributes: [["db.system.name", "sqlite"]]
    })
    directs.set(client, directOf(db, semaphore, busyTimeoutMs, statements, setSynchronous, owner))
    if (options.filename !== ":memory:" && durable === "FULL") walFlushes.set(client, yield* walFlush(options.filename))
    return client
  })

/** The `SqlClient` layer over one SQLite file. */
export const layer = (options: SqliteOptions): Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.effect(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))
