/**
 * Schema migrations: the platform's state (accounts, tokens, usage) and the health dataset. Portable SQL only: the same
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

/**
 * The health dataset (docs/data.md; column rules in healthTables.ts, which a test compares with
 * these tables). Read-only for the service: written by the generator and `hcc data import`.
 */
const healthData = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE vocabulary (
    kind TEXT NOT NULL,
    code TEXT NOT NULL,
    label TEXT NOT NULL,
    PRIMARY KEY (kind, code)
  )`
  yield* sql`CREATE TABLE dataset_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)`
  yield* sql`CREATE TABLE patients (
    id INTEGER PRIMARY KEY,
    birth_year INTEGER NOT NULL,
    sex TEXT NOT NULL CHECK (sex IN ('female', 'male')),
    region TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE patient_conditions (
    patient_id INTEGER NOT NULL REFERENCES patients (id),
    condition TEXT NOT NULL,
    PRIMARY KEY (patient_id, condition)
  )`
  yield* sql`CREATE TABLE axis_scores (
    patient_id INTEGER NOT NULL REFERENCES patients (id),
    month TEXT NOT NULL,
    po REAL, nm REAL, er REAL, sc REAL, rs REAL, es REAL, ta REAL, pv REAL,
    PRIMARY KEY (patient_id, month)
  )`
  yield* sql`CREATE TABLE encounters (
    id INTEGER PRIMARY KEY,
    patient_id INTEGER NOT NULL REFERENCES patients (id),
    kind TEXT NOT NULL CHECK (kind IN ('outpatient', 'emergency', 'inpatient')),
    start_date TEXT NOT NULL,
    end_date TEXT NOT NULL
  )`
  yield* sql`CREATE INDEX encounters_patient ON encounters (patient_id)`
  yield* sql`CREATE TABLE drug_exposures (
    id INTEGER PRIMARY KEY,
    patient_id INTEGER NOT NULL REFERENCES patients (id),
    drug TEXT NOT NULL,
    start_date TEXT NOT NULL,
    end_date TEXT,
    adherence REAL NOT NULL CHECK (adherence BETWEEN 0 AND 1)
  )`
  yield* sql`CREATE TABLE adverse_events (
    id INTEGER PRIMARY KEY,
    patient_id INTEGER NOT NULL REFERENCES patients (id),
    drug TEXT NOT NULL,
    event_type TEXT NOT NULL,
    date TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE device_studies (id TEXT PRIMARY KEY, device TEXT NOT NULL, region TEXT NOT NULL)`
  yield* sql`CREATE TABLE device_implants (
    id INTEGER PRIMARY KEY,
    patient_id INTEGER NOT NULL REFERENCES patients (id),
    device TEXT NOT NULL,
    study_id TEXT NOT NULL REFERENCES device_studies (id),
    implant_date TEXT NOT NULL
  )`
  yield* sql`CREATE TABLE device_outcomes (
    implant_id INTEGER NOT NULL REFERENCES device_implants (id),
    metric TEXT NOT NULL,
    value REAL NOT NULL,
    PRIMARY KEY (implant_id, metric)
  )`
  yield* sql`CREATE TABLE animal_surveillance (
    species TEXT NOT NULL,
    condition TEXT NOT NULL,
    region TEXT NOT NULL,
    week TEXT NOT NULL,
    cases INTEGER NOT NULL CHECK (cases >= 0),
    PRIMARY KEY (species, condition, region, week)
  )`
  yield* sql`CREATE TABLE human_surveillance (
    condition TEXT NOT NULL,
    region TEXT NOT NULL,
    week TEXT NOT NULL,
    cases INTEGER NOT NULL CHECK (cases >= 0),
    PRIMARY KEY (condition, region, week)
  )`
})

/** All migrations, in order. */
export const migrations = Migrator.fromRecord({
  "1_platform": platform,
  "2_health_data": healthData
})

/** Applies pending migrations; returns the ones it ran. */
export const runMigrations = Migrator.make({})({ loader: migrations })
