#!/usr/bin/env node
/**
 * The `hcc` command line (the spec's "account portal"): serve, manage accounts and tokens.
 * Run as `npx hcc <command>` or `npm run hcc -- <command>`; `--help` on any command explains it.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer, Option } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import { Accounts, type TokenInfo } from "./auth/Accounts.ts"
import { AppConfig, parseWorkers } from "./config/AppConfig.ts"
import { availableParallelism } from "node:os"
import { importChunks, readFolder, writeFolder } from "./health/csv.ts"
import * as Database from "./db/Database.ts"
import { replaceDataset } from "./health/DatasetWriter.ts"
import { generatedChunks, MAX_PATIENTS, MAX_SEED } from "./health/generator.ts"
import { progressBar } from "./health/progress.ts"
import * as JsonLogger from "./log/JsonLogger.ts"
import { serveWith, teardown } from "./main.ts"
import { TIER_LIMITS, TIERS } from "./metering/Tiers.ts"
import { SERVICE_VERSION } from "./version.ts"

/** Accounts over the configured, migrated database. */
const AccountsLive = Accounts.layer.pipe(Layer.provide(Database.layer), Layer.provide(AppConfig.layer))

const json = Flag.Boolean("json").pipe(Flag.withDescription("Print JSON instead of a table"), Flag.withDefault(false))

/** Left-aligned columns, header first. */
const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

const serveCommand = Command.make(
  "serve",
  {
    workers: Flag.String("workers").pipe(
      Flag.withDescription("Server processes sharing the port: a number, or auto for one per core (default HCC_WORKERS, 1)"),
      Flag.optional
    )
  },
  ({ workers }) =>
    Effect.gen(function*() {
      if (Option.isNone(workers)) return yield* serveWith()
      const n = parseWorkers(workers.value, availableParallelism())
      if (n === undefined) return yield* Effect.fail(new Error("--workers must be auto or a whole number from 1 to 999"))
      return yield* serveWith({ workers: n })
    })
).pipe(Command.withDescription("Serve the API on PORT (default 8080); see README for every environment variable"))

const accountsCreate = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(Flag.withDescription("Display name of the account")),
    tier: Flag.Literals("tier", TIERS).pipe(Flag.withDescription("Tier: starter, professional, enterprise or unlimited")),
    dailyLimit: Flag.Int("daily-limit").pipe(Flag.withDescription("Override the tier's daily limit"), Flag.optional),
    burstLimit: Flag.Int("burst-limit").pipe(Flag.withDescription("Override the tier's burst limit (per rolling minute)"), Flag.optional),
    json
  },
  ({ burstLimit, dailyLimit, json, name, tier }) =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      if (Option.isSome(dailyLimit) && dailyLimit.value < 0) return yield* Effect.fail(new Error("--daily-limit must be ≥ 0"))
      if (Option.isSome(burstLimit) && burstLimit.value < 1) return yield* Effect.fail(new Error("--burst-limit must be ≥ 1"))
      const account = yield* accounts.create({
        name,
        tier,
        dailyLimit: Option.getOrUndefined(dailyLimit),
        burstLimit: Option.getOrUndefined(burstLimit)
      })
      yield* Console.log(json ? JSON.stringify(account) : `created account ${account.id} (${TIER_LIMITS[tier].title})`)
    }).pipe(Effect.provide(AccountsLive))
).pipe(Command.withDescription("Create an account"))

const accountsList = Command.make("list", { json }, ({ json }) =>
  Effect.gen(function*() {
    const list = yield* (yield* Accounts).list
    yield* Console.log(
      json ? JSON.stringify(list) : table(
        ["ID", "NAME", "TIER", "DAILY", "BURST", "CREATED"],
        list.map((a) => [
          a.id,
          a.name,
          TIER_LIMITS[a.tier].title,
          String(a.dailyLimit ?? TIER_LIMITS[a.tier].daily ?? "none"),
          String(a.burstLimit ?? TIER_LIMITS[a.tier].burst),
          a.createdAt
        ])
      )
    )
  }).pipe(Effect.provide(AccountsLive))).pipe(Command.withDescription("List accounts"))

const tokenRow = (t: TokenInfo) => [t.id, t.accountId, t.label, t.createdAt, t.expiresAt ?? "never", t.revokedAt ?? ""]
const TOKEN_HEADER = ["ID", "ACCOUNT", "LABEL", "CREATED", "EXPIRES", "REVOKED"]

const tokensIssue = Command.make(
  "issue",
  {
    account: Flag.String("account").pipe(Flag.withDescription("Account id (see `hcc accounts list`)")),
    label: Flag.String("label").pipe(Flag.withDescription("What the token is for"), Flag.withDefault("default")),
    expiresInDays: Flag.Int("expires-in-days").pipe(Flag.withDescription("Expire the token after this many days"), Flag.optional),
    json
  },
  ({ account, expiresInDays, json, label }) =>
    Effect.gen(function*() {
      const accounts = yield* Accounts
      if (Option.isSome(expiresInDays) && expiresInDays.value < 1) return yield* Effect.fail(new Error("--expires-in-days must be ≥ 1"))
      const now = new Date(yield* Effect.clockWith((c) => c.currentTimeMillis))
      const expiresAt = Option.isSome(expiresInDays) ? new Date(now.getTime() + expiresInDays.value * 86_400_000) : undefined
      const { info, token } = yield* accounts.issueToken({ accountId: account, label, expiresAt })
      yield* Console.log(
        json
          ? JSON.stringify({ ...info, token })
          : `${token}\n\ntoken ${info.id} for ${info.accountId}; expires ${info.expiresAt ?? "never"}.\nThis is the only time the token is shown: store it now.`
      )
    }).pipe(Effect.provide(AccountsLive))
).pipe(Command.withDescription("Issue a token (printed once; only its hash is stored)"))

const tokensList = Command.make(
  "list",
  { account: Flag.String("account").pipe(Flag.withDescription("Only this account's tokens"), Flag.optional), json },
  ({ account, json }) =>
    Effect.gen(function*() {
      const list = yield* (yield* Accounts).listTokens(Option.getOrUndefined(account))
      yield* Console.log(json ? JSON.stringify(list) : table(TOKEN_HEADER, list.map(tokenRow)))
    }).pipe(Effect.provide(AccountsLive))
).pipe(Command.withDescription("List tokens (ids and dates, never the tokens)"))

const tokensRevoke = Command.make(
  "revoke",
  { id: Argument.String("token-id").pipe(Argument.withDescription("Token id, e.g. tok_…")), json },
  ({ id, json }) =>
    Effect.gen(function*() {
      const info = yield* (yield* Accounts).revokeToken(id)
      yield* Console.log(json ? JSON.stringify(info) : `revoked ${info.id} at ${info.revokedAt}`)
    }).pipe(Effect.provide(AccountsLive))
).pipe(Command.withDescription("Revoke a token; requests with it get 401 from then on"))

/** The migrated database of the configured data folder. */
const DatabaseLive = Database.layer.pipe(Layer.provideMerge(AppConfig.layer))

const RESTART_NOTE = "A running server keeps serving the dataset it loaded; restart it to serve this one."

const dataGenerate = Command.make(
  "generate",
  {
    patients: Flag.Int("patients").pipe(Flag.withDescription("Patients to generate (default HCC_POPULATION, 50000)"), Flag.optional),
    seed: Flag.Int("seed").pipe(Flag.withDescription("Generator seed (default HCC_SEED); the same seed gives the same data"), Flag.optional)
  },
  (flags) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      const patients = Option.getOrElse(flags.patients, () => config.population)
      const seed = Option.getOrElse(flags.seed, () => config.seed)
      if (patients < 1 || patients > MAX_PATIENTS) return yield* Effect.fail(new Error(`--patients must be between 1 and ${MAX_PATIENTS}`))
      if (seed < 0 || seed > MAX_SEED) return yield* Effect.fail(new Error(`--seed must be between 0 and ${MAX_SEED}`))
      const started = performance.now()
      yield* replaceDataset(generatedChunks({ patients, seed }), { atomic: false, onProgress: progressBar(`generating ${patients} patients`) })
      yield* Console.log(`generated ${patients} patients with seed ${seed} in ${((performance.now() - started) / 1000).toFixed(1)} s. ${RESTART_NOTE}`)
    }).pipe(Effect.provide(DatabaseLive))
).pipe(Command.withDescription("Replace the health dataset with a generated synthetic population (planted truths: docs/data.md)"))

const folder = Argument.String("folder").pipe(Argument.withDescription("Folder of <table>.csv files (layout: docs/data.md)"))

const dataImport = Command.make("import", { folder }, ({ folder }) =>
  Effect.gen(function*() {
    const rows = yield* readFolder(folder)
    yield* replaceDataset(importChunks(rows), { atomic: true, onProgress: progressBar("importing") })
    yield* Console.log(`imported ${rows.patients?.length ?? 0} patients from ${folder}. ${RESTART_NOTE}`)
  }).pipe(Effect.provide(DatabaseLive))).pipe(
    Command.withDescription("Replace the health dataset with CSV files; every row is checked first and nothing is written if any is wrong")
  )

const dataExport = Command.make("export", { folder }, ({ folder }) =>
  Effect.gen(function*() {
    yield* writeFolder(folder, progressBar("exporting"))
    yield* Console.log(`exported the health dataset to ${folder}`)
  }).pipe(Effect.provide(DatabaseLive))).pipe(Command.withDescription("Write the health dataset as CSV files in the layout import reads"))

/** The root command. */
export const hcc = Command.make("hcc").pipe(
  Command.withDescription("HCC medical-intelligence query service"),
  Command.withSubcommands([
    serveCommand,
    Command.make("accounts").pipe(
      Command.withDescription("Manage accounts"),
      Command.withSubcommands([accountsCreate, accountsList])
    ),
    Command.make("tokens").pipe(
      Command.withDescription("Manage API tokens"),
      Command.withSubcommands([tokensIssue, tokensList, tokensRevoke])
    ),
    Command.make("data").pipe(
      Command.withDescription("Generate, import and export the health dataset"),
      Command.withSubcommands([dataGenerate, dataImport, dataExport])
    )
  ])
)

if (import.meta.main) {
  hcc.pipe(
    Command.run({ version: SERVICE_VERSION }),
    Effect.tapError((e: unknown) =>
      CliError.isCliError(e)
        ? Effect.void // already rendered with the usage
        : Console.error(`hcc: ${e instanceof Error ? e.message : String(e)}`)),
    Effect.provide(NodeServices.layer),
    Effect.provide(JsonLogger.layer("Warn")),
    (program) => NodeRuntime.runMain(program, { teardown, disableErrorReporting: true })
  )
}
