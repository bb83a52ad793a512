/**
 * Schema migrations of the platform's state (accounts, tokens, usage). Portable SQL only: the same
 * statements run on SQLite now and PostgreSQL next (TEXT ids, ISO-8601 UTC timestamps as TEXT,
 * no engine-specific functions). Keys are `<id>_<name>`; applied ids live in `effect_sql_migrations`.
 */
import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"

const platform = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    tier TEXT NOT NULL CHECK (tier IN ('starter', 'professional', 'enterprise', 'unlimited')),
    daily_limit INTEGER CHECK (daily_limit IS NULL OR daily_limit >= 0),
    burst_limit INTEGER CHECK (burst_limit IS NULL OR burst_limit >= 1),
    created_at TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    token_hash TEXT NOT NULL UNIQUE,
    label TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    revoked_at TEXT
  )`
  yield* sql`CREATE INDEX tokens_account ON tokens (account_id)`
  yield* sql`CREATE TABLE usage_ledger (
    id INTEGER PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts (id),
    token_id TEXT NOT NULL REFERENCES tokens (id),
    endpoint TEXT NOT NULL,
    hcc_cost REAL NOT NULL,
    status INTEGER NOT NULL,
    request_id TEXT NOT NULL,
    day TEXT NOT NULL,
    at TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX usage_ledger_account_day ON usage_ledger (account_id, day)`
  yield* sql`CREATE TABLE usage_daily (
    account_id TEXT NOT NULL REFERENCES accounts (id),
    day TEXT NOT NULL,
    queries INTEGER NOT NULL,
    hcc_cost REAL NOT NULL,
    PRIMARY KEY (account_id, day)
  )`
})

/** All migrations, in order. */
export const migrations = Migrator.fromRecord({
  "1_platform": platform
})

/** Applies pending migrations; returns the ones it ran. */
export const runMigrations = Migrator.make({})({ loader: migrations })
