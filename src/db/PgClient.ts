/**
 * The PostgreSQL `SqlClient` (`@effect/sql-pg`, which speaks the wire protocol itself).
 *
 * Rows come back with the same JavaScript types as from SQLite, so the code above `src/db` never
 * asks which engine it runs on: `int8` (BIGINT columns, COUNT(*), SUM of an INTEGER) decodes to a
 * number instead of a bigint. Every integer this service stores is below 2^53 (limits are capped
 * at Number.MAX_SAFE_INTEGER where they are accepted); a value outside that range fails loudly
 * instead of being rounded. (Never SUM a BIGINT column: PostgreSQL returns `numeric`, a string.)
 */
import { PgClient, PgTypes } from "@effect/sql-pg"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Result from "effect/Result"
import type * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"

const MAX = BigInt(Number.MAX_SAFE_INTEGER)

/** The built-in codecs, with int8 read and written as a JavaScript number. */
const registry = (): PgTypes.Registry => {
  const types = PgTypes.makeRegistry()
  types.register<number | bigint>(PgTypes.OID.int8, {
    encode: (value) => {
      const bytes = new Uint8Array(8)
      new DataView(bytes.buffer).setBigInt64(0, BigInt(value))
      return Result.succeed(bytes)
    },
    decode: (bytes) => {
      const n = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getBigInt64(0)
      return n <= MAX && n >= -MAX
        ? Result.succeed(Number(n))
        : Result.fail(new PgTypes.CodecError({ message: `int8 ${n} is outside the safe integer range` }))
    }
  })
  return types
}

/** Options of the pool. */
export interface PgOptions {
  /** `postgres://user:password@host:port/database` (the password is never logged). */
  readonly url: string
  /** Most connections this process opens. */
  readonly maxConnections: number
  /**
   * `false`: commits return before the WAL reaches the disk (`synchronous_commit = off`): for state
   * that is cheap to lose in a crash of the database server, never for the ledger.
   */
  readonly durable?: boolean
}

/** The pool's options as @effect/sql-pg takes them. */
const poolOptions = (options: PgOptions) => ({
  url: Redacted.make(options.url),
  maxConnections: options.maxConnections,
  applicationName: "hcc",
  types: registry(),
  ...(options.durable === false ? { startupParameters: { synchronous_commit: "off" } } : {})
})

/** A connection pool to `url`, as the service's `SqlClient`. */
export const layer = (options: PgOptions): Layer.Layer<SqlClient.SqlClient | PgClient.PgClient, SqlError.SqlError> =>
  PgClient.layer(poolOptions(options))

/** A pool to `url` as a scoped value (for a second pool beside the service's `SqlClient`). */
export const make = (options: PgOptions) => PgClient.make(poolOptions(options))
