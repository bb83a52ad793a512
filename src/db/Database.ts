/**
 * The state database: the data folder, the SqlClient (SQLite in `$HCC_DATA_DIR/hcc.db` by default)
 * and its migrations, as one layer.
 */
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { AppConfig } from "../config/AppConfig.ts"
import { runMigrations } from "./migrations.ts"
import * as SqliteClient from "./SqliteClient.ts"

/** File name of the embedded database inside the data folder. */
export const DATABASE_FILE = "hcc.db"

/** SqlClient for the configured database, migrated. Refuses DATABASE_URL until the PostgreSQL layer lands. */
export const layer: Layer.Layer<SqlClient.SqlClient, unknown, AppConfig> = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) {
      return yield* Effect.fail(
        new Error("DATABASE_URL is set, but PostgreSQL support has not landed yet; unset it to use the embedded database")
      )
    }
    yield* Effect.try(() => mkdirSync(config.dataDir, { recursive: true, mode: 0o700 }))
    const client = SqliteClient.layer({ filename: join(config.dataDir, DATABASE_FILE) })
    return Layer.effectDiscard(runMigrations).pipe(Layer.provideMerge(client))
  })
)
