#!/usr/bin/env node
/**
 * The `hcc` command line (the spec's "account portal"): serve, manage accounts and tokens, and the
 * health dataset. Run as `npx hcc <command>` or `npm run hcc -- <command>`; `--help` on any command
 * explains it, with examples.
 *
 * Conventions (gh and stripe-cli as the bar; docs/cli.md): `--json` on every command prints the
 * result as JSON on stdout (field and tier names as the HTTP API writes them) and any error as a
 * problem-shaped JSON object on stderr; exit 0 on success, 1 when the command failed, 2 when it was
 * called wrongly (one line and a hint, not the whole help); `--log-level` sets the level of the log
 * lines (on stderr, except `serve`, whose log is its output).
 */
// Module by module: the package's index also loads its Redis client, which no command uses.
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Console, Effect, Exit, Layer, Option } from "effect"
import { Argument, CliError, CliOutput, Command, Flag, GlobalFlag } from "effect/cli"
import { type Account, AccountNotFound, type AccountChanges, Accounts, DuplicateAccountName, type TokenInfo, TokenNotFound } from "./auth/Accounts.ts"
import { AppConfig, type AppSettings, parseThreads, parseWorkers } from "./config/AppConfig.ts"
import { availableParallelism } from "node:os"
import { ImportRejected, importChunks, readFolder, writeFolder } from "./health/csv.ts"
import * as Database from "./db/Database.ts"
import { replaceDataset } from "./health/DatasetWriter.ts"
import { removeSnapshot } from "./health/snapshot.ts"
import { generatedChunks, MAX_PATIENTS, MAX_SEED } from "./health/generator.ts"
import { progressBar } from "./health/progress.ts"
import { exportFhir } from "./import/fhir/exportFhir.ts"
import { formatSummary } from "./import/importCommon.ts"
import { importFhir } from "./import/importFhir.ts"
import { importOmop } from "./import/importOmop.ts"
import * as JsonLogger from "./log/JsonLogger.ts"
import { logToStderr } from "./log/LogSink.ts"
import { serveWith } from "./main.ts"
import { effectiveLimits, type Tier, TIER_LIMITS, TIERS } from "./metering/Tiers.ts"
import { PLUGIN_NAME, scaffoldProblem, writeScaffold } from "./plugin/scaffold.ts"
import { SERVICE_VERSION } from "./version.ts"
import { resolve } from "node:path"

/** `--json` on every command: results as JSON on stdout, errors as problem JSON on stderr. */
export const Json = GlobalFlag.Setting("json")({
  flag: Flag.Boolean("json").pipe(
    Flag.withDescription("Print the result as JSON on stdout, and any error as problem JSON on stderr"),
    Flag.withDefault(false)
  )
})

/** A command called wrongly (a bad flag value): exit 2, like a parse error. */
export class UsageError extends Error {}

/** Accounts over the configured, migrated database. */
const AccountsLive = Accounts.layer.pipe(Layer.provide(Database.layer), Layer.provide(AppConfig.layer))

/** Left-aligned columns, header first. */
const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")
}

/** Prints the result: JSON when `--json`, else the human text. */
const emit = (value: unknown, human: () => string) =>
  Effect.flatMap(Json, (json) => Console.log(json ? JSON.stringify(value) : human()))

/** An account as the HTTP API names things (the catalog's tier names and limit fields). */
export const accountJson = (a: Account) => {
  const limits = effectiveLimits(a.tier, a)
  return {
    id: a.id,
    name: a.name,
    tier: TIER_LIMITS[a.tier].title,
    daily_limit: limits.daily ?? null,
    burst_per_minute: limits.burst,
    overrides: { daily_limit: a.dailyLimit, burst_per_minute: a.burstLimit },
    created_at: a.createdAt,
    disabled_at: a.disabledAt
  }
}

/** A token's metadata as JSON (never the token, except once from `tokens issue`). */
export const tokenJson = (t: TokenInfo) => ({
  id: t.id,
  account_id: t.accountId,
  label: t.label,
  created_at: t.createdAt,
  expires_at: t.expiresAt,
  revoked_at: t.revokedAt,
  last_used_at: t.lastUsedAt
})

/** `--tier`: the stored id or the title the API shows, in any case. */
const tierFlag = (name: string) =>
  Flag.Literals(name, [...TIERS, ...TIERS.map((t) => TIER_LIMITS[t].title)]).pipe(
    Flag.map((t) => t.toLowerCase() as Tier),
    Flag.withDescription("Tier: starter, professional, enterprise or unlimited")
  )

/** A limit override: a whole number from `min`, or `tier` to go back to the tier's. */
const limitValue = (flag: string, text: string, min: number): Effect.Effect<number | null, UsageError> => {
  if (text === "tier") return Effect.succeed(null)
  if (!/^\d{1,16}$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) {
    return Effect.fail(new UsageError(`--${flag} must be a whole number from ${min} (or "tier" for the tier's own)`))
  }
  return Effect.succeed(Number(text))
}

const serveCommand = Command.make(
  "serve",
  {
    workers: Flag.String("workers").pipe(
      Flag.withDescription("Server processes sharing the port: a number, or auto for one per core (default HCC_WORKERS, 1)"),
      Flag.optional
    ),
    threads: Flag.String("threads").pipe(
      Flag.withDescription("Compute threads per process answering the analytic endpoints: a number, auto for one per core, 0 for none (default HCC_THREADS, 0)"),
      Flag.optional
    )
  },
  ({ threads, workers }) =>
    Effect.gen(function*() {
      const level = yield* GlobalFlag.LogLevel
      const logLevel: AppSettings["logLevel"] | undefined = Option.isNone(level) ? undefined : level.value === "All" ? "Trace" : level.value
      const n = Option.isNone(workers) ? undefined : parseWorkers(workers.value, availableParallelism())
      if (n === undefined && Option.isSome(workers)) return yield* Effect.fail(new UsageError("--workers must be auto or a whole number from 1 to 999"))
      const t = Option.isNone(threads) ? undefined : parseThreads(threads.value, availableParallelism())
      if (t === undefined && Option.isSome(threads)) return yield* Effect.fail(new UsageError("--threads must be auto or a whole number from 0 to 99"))
      return yield* serveWith({ workers: n, threads: t, logLevel })
    })
).pipe(
  Command.withDescription("Serve the API on PORT (default 8080); see README for every environment variable. The log (JSON lines on stdout) is the output, with or without --json"),
  Command.withExamples([
    { command: "hcc serve", description: "One server process on PORT" },
    { command: "hcc serve --threads auto", description: "Cold analytic questions on one compute thread per core, off the HTTP thread" },
    { command: "hcc serve --workers auto --log-level debug", description: "One process per core, probes logged too" }
  ])
)

const accountsCreate = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(Flag.withDescription("Display name of the account (unique, whatever its case)")),
    tier: tierFlag("tier"),
    dailyLimit: Flag.Int("daily-limit").pipe(Flag.withDescription("Override the tier's daily limit (0 or more)"), Flag.optional),
    burstLimit: Flag.Int("burst-limit").pipe(Flag.withDescription("Override the tier's burst limit per rolling minute (1 or more)"), Flag.optional)
  },
  ({ burstLimit, dailyLimit, name, tier }) =>
    Effect.gen(function*() {
      if (Option.isSome(dailyLimit) && dailyLimit.value < 0) return yield* Effect.fail(new UsageError("--daily-limit must be ≥ 0"))
      if (Option.isSome(burstLimit) && burstLimit.value < 1) return yield* Effect.fail(new UsageError("--burst-limit must be ≥ 1"))
      const account = yield* (yield* Accounts).create({
        name,
        tier,
        dailyLimit: Option.getOrUndefined(dailyLimit),
        burstLimit: Option.getOrUndefined(burstLimit)
      })
      yield* emit(accountJson(account), () => `created account ${account.id} (${TIER_LIMITS[tier].title})`)
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("Create an account"),
  Command.withExamples([
    { command: "hcc accounts create --name acme --tier professional", description: "An account on the Professional tier" },
    { command: "hcc accounts create --name lab --tier starter --burst-limit 20 --json", description: "With its own burst limit, printed as JSON" }
  ])
)

const accountRow = (a: Account) => {
  const j = accountJson(a)
  return [a.id, a.name, j.tier, String(j.daily_limit ?? "none"), String(j.burst_per_minute), a.disabledAt === null ? "active" : "disabled", a.createdAt]
}
const ACCOUNT_HEADER = ["ID", "NAME", "TIER", "DAILY", "BURST", "STATUS", "CREATED"]

const accountsList = Command.make("list", {}, () =>
  Effect.gen(function*() {
    const list = yield* (yield* Accounts).list
    yield* emit(list.map(accountJson), () => table(ACCOUNT_HEADER, list.map(accountRow)))
  }).pipe(Effect.provide(AccountsLive))).pipe(
    Command.withDescription("List accounts with the limits that bind them (overrides or their tier's)"),
    Command.withExamples([{ command: "hcc accounts list --json", description: "Every account as JSON" }])
  )

const accountId = Argument.String("account-id").pipe(Argument.withDescription("Account id, e.g. acc_… (see `hcc accounts list`)"))

const accountsUpdate = Command.make(
  "update",
  {
    id: accountId,
    name: Flag.String("name").pipe(Flag.withDescription("New display name (unique, whatever its case)"), Flag.optional),
    tier: tierFlag("tier").pipe(Flag.optional),
    dailyLimit: Flag.String("daily-limit").pipe(Flag.withDescription("Daily limit override (0 or more), or `tier` for the tier's own"), Flag.optional),
    burstLimit: Flag.String("burst-limit").pipe(Flag.withDescription("Burst limit override per minute (1 or more), or `tier` for the tier's own"), Flag.optional)
  },
  ({ burstLimit, dailyLimit, id, name, tier }) =>
    Effect.gen(function*() {
      if ([name, tier, dailyLimit, burstLimit].every(Option.isNone)) {
        return yield* Effect.fail(new UsageError("nothing to change: give --name, --tier, --daily-limit or --burst-limit"))
      }
      const changes: AccountChanges = {
        name: Option.getOrUndefined(name),
        tier: Option.getOrUndefined(tier),
        dailyLimit: Option.isSome(dailyLimit) ? yield* limitValue("daily-limit", dailyLimit.value, 0) : undefined,
        burstLimit: Option.isSome(burstLimit) ? yield* limitValue("burst-limit", burstLimit.value, 1) : undefined
      }
      const account = yield* (yield* Accounts).update(id, changes)
      yield* emit(accountJson(account), () => `updated account ${account.id}: ${table(ACCOUNT_HEADER, [accountRow(account)]).split("\n")[1]}`)
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("Change an account's name, tier or limits; running servers apply it within HCC_AUTH_CACHE_MS"),
  Command.withExamples([
    { command: "hcc accounts update acc_123 --tier enterprise", description: "Move an account to Enterprise" },
    { command: "hcc accounts update acc_123 --burst-limit tier --daily-limit 5000", description: "Back to the tier's burst limit, a daily limit of its own" }
  ])
)

const setDisabled = (disabled: boolean) => ({ id }: { readonly id: string }) =>
  Effect.gen(function*() {
    const account = yield* (yield* Accounts).setDisabled(id, disabled)
    yield* emit(accountJson(account), () => `${disabled ? "disabled" : "enabled"} account ${account.id}${disabled ? `; its tokens are refused from now on` : ""}`)
  }).pipe(Effect.provide(AccountsLive))

const accountsDisable = Command.make("disable", { id: accountId }, setDisabled(true)).pipe(
  Command.withDescription("Disable an account: every request with its tokens gets 401 (within HCC_AUTH_CACHE_MS); its data and ledger stay"),
  Command.withExamples([{ command: "hcc accounts disable acc_123", description: "Stop an account's tokens working" }])
)
const accountsEnable = Command.make("enable", { id: accountId }, setDisabled(false)).pipe(
  Command.withDescription("Enable a disabled account again (its unrevoked, unexpired tokens work again)"),
  Command.withExamples([{ command: "hcc accounts enable acc_123", description: "Undo `hcc accounts disable`" }])
)

const when = (iso: string | null, none: string) => (iso === null ? none : iso.slice(0, 16).replace("T", " "))
const tokenRow = (t: TokenInfo) => [t.id, t.accountId, t.label, t.createdAt, t.expiresAt ?? "never", t.revokedAt ?? "", when(t.lastUsedAt, "never")]
const TOKEN_HEADER = ["ID", "ACCOUNT", "LABEL", "CREATED", "EXPIRES", "REVOKED", "LAST USED"]

const tokensIssue = Command.make(
  "issue",
  {
    account: Flag.String("account").pipe(Flag.withDescription("Account id (see `hcc accounts list`)")),
    label: Flag.String("label").pipe(Flag.withDescription("What the token is for"), Flag.withDefault("default")),
    expiresInDays: Flag.Int("expires-in-days").pipe(Flag.withDescription("Expire the token after this many days (1 or more)"), Flag.optional)
  },
  ({ account, expiresInDays, label }) =>
    Effect.gen(function*() {
      if (Option.isSome(expiresInDays) && expiresInDays.value < 1) return yield* Effect.fail(new UsageError("--expires-in-days must be ≥ 1"))
      const now = new Date(yield* Effect.clockWith((c) => c.currentTimeMillis))
      const expiresAt = Option.isSome(expiresInDays) ? new Date(now.getTime() + expiresInDays.value * 86_400_000) : undefined
      const { info, token } = yield* (yield* Accounts).issueToken({ accountId: account, label, expiresAt })
      yield* emit(
        { ...tokenJson(info), token },
        () => `${token}\n\ntoken ${info.id} for ${info.accountId}; expires ${info.expiresAt ?? "never"}.\nThis is the only time the token is shown: store it now.`
      )
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("Issue a token (printed once; only its hash is stored)"),
  Command.withExamples([
    { command: "hcc tokens issue --account acc_123 --label ci --expires-in-days 90", description: "A token for CI that expires in 90 days" }
  ])
)

const tokensList = Command.make(
  "list",
  { account: Flag.String("account").pipe(Flag.withDescription("Only this account's tokens"), Flag.optional) },
  ({ account }) =>
    Effect.gen(function*() {
      const list = yield* (yield* Accounts).listTokens(Option.getOrUndefined(account))
      yield* emit(list.map(tokenJson), () => table(TOKEN_HEADER, list.map(tokenRow)))
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("List tokens (ids, dates and when each was last used — to the minute — never the tokens)"),
  Command.withExamples([{ command: "hcc tokens list --account acc_123", description: "One account's tokens" }])
)

const tokensRevoke = Command.make(
  "revoke",
  { id: Argument.String("token-id").pipe(Argument.withDescription("Token id, e.g. tok_…")) },
  ({ id }) =>
    Effect.gen(function*() {
      const info = yield* (yield* Accounts).revokeToken(id)
      yield* emit(tokenJson(info), () => `revoked ${info.id} at ${info.revokedAt}`)
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("Revoke a token; requests with it get 401 from then on"),
  Command.withExamples([{ command: "hcc tokens revoke tok_123", description: "Revoke one token" }])
)

/** The migrated database of the configured data folder. */
const DatabaseLive = Database.layer.pipe(Layer.provideMerge(AppConfig.layer))

const SWITCH_NOTE = "A running server switches to it on its own within HCC_DATASET_POLL_SECONDS (10 s by default), answering from the old one meanwhile."

const dataGenerate = Command.make(
  "generate",
  {
    patients: Flag.Int("patients").pipe(Flag.withDescription(`Patients to generate, 1 to ${MAX_PATIENTS} (default HCC_POPULATION, 50000)`), Flag.optional),
    seed: Flag.Int("seed").pipe(Flag.withDescription("Generator seed (default HCC_SEED); the same seed gives the same data"), Flag.optional)
  },
  (flags) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      const patients = Option.getOrElse(flags.patients, () => config.population)
      const seed = Option.getOrElse(flags.seed, () => config.seed)
      if (patients < 1 || patients > MAX_PATIENTS) return yield* Effect.fail(new UsageError(`--patients must be between 1 and ${MAX_PATIENTS}`))
      if (seed < 0 || seed > MAX_SEED) return yield* Effect.fail(new UsageError(`--seed must be between 0 and ${MAX_SEED}`))
      const started = performance.now()
      yield* replaceDataset(generatedChunks({ patients, seed }), { onProgress: progressBar(`generating ${patients} patients`) })
      yield* removeSnapshot(config.dataDir)
      const seconds = Number(((performance.now() - started) / 1000).toFixed(1))
      yield* emit({ patients, seed, seconds }, () => `generated ${patients} patients with seed ${seed} in ${seconds} s. ${SWITCH_NOTE}`)
    }).pipe(Effect.provide(DatabaseLive))
).pipe(
  Command.withDescription("Replace the health dataset with a generated synthetic population (planted truths: docs/data.md)"),
  Command.withExamples([{ command: "hcc data generate --patients 200000 --seed 7", description: "200,000 patients from seed 7 (progress on stderr)" }])
)

const folder = Argument.String("folder").pipe(Argument.withDescription("Folder to write to (created when missing)"))
const sources = Argument.String("paths").pipe(
  Argument.atLeast(1),
  Argument.withDescription("csv: one folder of <table>.csv files; fhir: folders of Bulk Data files (*.ndjson, *.ndjson.gz) or the files; omop: one folder of OMOP CDM tables (CSV or TSV)")
)

const dataImport = Command.make(
  "import",
  {
    paths: sources,
    format: Flag.Literals("format", ["csv", "fhir", "omop"]).pipe(Flag.withDefault("csv" as const), Flag.withDescription("csv (the service's own tables, default), fhir (FHIR R4 Bulk Data) or omop (OMOP CDM 5.4)")),
    asOf: Flag.String("as-of").pipe(Flag.withDescription("fhir, omop: the dataset's as_of date, YYYY-MM-DD (default the latest date in the data)"), Flag.optional),
    axisModel: Flag.String("axis-model").pipe(Flag.withDescription("fhir, omop: an axis model file to use instead of the shipped one (layout: docs/data.md)"), Flag.optional),
    regionMap: Flag.String("region-map").pipe(Flag.withDescription("fhir, omop: a region map file to use instead of the shipped one (layout: docs/data.md)"), Flag.optional)
  },
  (flags) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      if (flags.format === "csv") {
        if (flags.paths.length !== 1) return yield* Effect.fail(new UsageError("--format csv imports one folder"))
        const folder = flags.paths[0]!
        const rows = yield* readFolder(folder)
        yield* replaceDataset(importChunks(rows), { onProgress: progressBar("importing") })
        yield* removeSnapshot(config.dataDir)
        const patients = rows.patients?.length ?? 0
        return yield* emit({ format: "csv", folder, patients }, () => `imported ${patients} patients from ${folder}. ${SWITCH_NOTE}`)
      }
      const options = {
        paths: flags.paths,
        asOf: Option.getOrUndefined(flags.asOf),
        axisModelFile: Option.getOrUndefined(flags.axisModel),
        regionMapFile: Option.getOrUndefined(flags.regionMap),
        stagingDir: config.dataDir,
        onProgress: progressBar(`importing ${flags.format.toUpperCase()}`)
      }
      if (flags.format === "omop" && flags.paths.length !== 1) return yield* Effect.fail(new UsageError("--format omop imports one folder"))
      const summary = flags.format === "omop" ? yield* importOmop({ ...options, folder: flags.paths[0]! }) : yield* importFhir(options)
      yield* removeSnapshot(config.dataDir)
      yield* emit(summary, () => `${formatSummary(summary)}\n${SWITCH_NOTE}`)
    }).pipe(Effect.provide(DatabaseLive))
).pipe(
  Command.withDescription("Replace the health dataset with an import; everything is checked first and nothing is written if anything is wrong (docs/data.md)"),
  Command.withExamples([
    { command: "hcc data import ./my-data", description: "Import ./my-data/patients.csv and the other tables" },
    { command: "hcc data import --format fhir ./bulk-export", description: "Import a FHIR R4 Bulk Data export (Patient.ndjson, Observation.1.ndjson.gz, …)" },
    { command: "hcc data import --format omop ./cdm --json", description: "Import OMOP CDM 5.4 tables; the summary as JSON" }
  ])
)

const dataExport = Command.make(
  "export",
  {
    folder,
    format: Flag.Literals("format", ["csv", "fhir"]).pipe(Flag.withDefault("csv" as const), Flag.withDescription("csv (the service's own tables, default) or fhir (FHIR R4 Bulk Data NDJSON)")),
    gzip: Flag.Boolean("gzip").pipe(Flag.withDefault(false), Flag.withDescription("fhir: write .ndjson.gz files"))
  },
  ({ folder, format, gzip }) =>
    Effect.gen(function*() {
      if (format === "csv") {
        yield* writeFolder(folder, progressBar("exporting"))
        return yield* emit({ format, folder }, () => `exported the health dataset to ${folder}`)
      }
      const written = yield* exportFhir({ folder, gzip, onProgress: progressBar("exporting FHIR") })
      yield* emit({ format, folder, resources: written }, () =>
        `exported the health dataset to ${folder} as FHIR R4 Bulk Data: ${Object.entries(written).map(([t, n]) => `${n} ${t}`).join(", ")}`)
    }).pipe(Effect.provide(DatabaseLive))
).pipe(
  Command.withDescription("Write the health dataset as CSV files in the layout import reads, or as FHIR R4 Bulk Data files that import back to the same dataset"),
  Command.withExamples([
    { command: "hcc data export ./backup", description: "One CSV file per table in ./backup" },
    { command: "hcc data export --format fhir --gzip ./bulk", description: "Patient.ndjson.gz, Observation.ndjson.gz, … in ./bulk" }
  ])
)

const pluginNew = Command.make(
  "new",
  {
    name: Argument.String("name").pipe(Argument.withDescription("The plugin's name, kebab-case: it answers POST /v1/<name>")),
    dir: Flag.String("dir").pipe(Flag.withDescription("Folder to create (default ./hcc-plugin-<name>); must not exist or be empty"), Flag.optional)
  },
  ({ dir, name }) =>
    Effect.gen(function*() {
      const target = resolve(Option.getOrElse(dir, () => `hcc-plugin-${name}`))
      const problem = scaffoldProblem(name, target)
      if (problem !== undefined) return yield* Effect.fail(PLUGIN_NAME.test(name) ? new Error(problem) : new UsageError(problem))
      const files = writeScaffold(name, target, SERVICE_VERSION)
      yield* emit({ name, dir: target, files }, () =>
        [`created the plugin ${name} in ${target}:`, ...files.map((f) => `  ${f}`), "", `next: cd ${target} && npm install && npm test`].join("\n"))
    })
).pipe(
  Command.withDescription("Create a plugin package: schemas, handler, an example and a conformance test (docs/plugins.md)"),
  Command.withExamples([
    { command: "hcc plugin new wait-times", description: "A package in ./hcc-plugin-wait-times answering POST /v1/wait-times" },
    { command: "hcc plugin new wait-times --dir ../plugins/wait-times", description: "Somewhere else" }
  ])
)

/** The root command. */
export const hcc = Command.make("hcc").pipe(
  Command.withDescription("HCC medical-intelligence query service"),
  Command.withExamples([
    { command: "hcc serve", description: "Serve the API" },
    { command: "hcc accounts create --name acme --tier professional --json", description: "Create an account, print it as JSON" }
  ]),
  Command.withSubcommands([
    serveCommand,
    Command.make("accounts").pipe(
      Command.withDescription("Manage accounts"),
      Command.withSubcommands([accountsCreate, accountsList, accountsUpdate, accountsDisable, accountsEnable])
    ),
    Command.make("tokens").pipe(
      Command.withDescription("Manage API tokens"),
      Command.withSubcommands([tokensIssue, tokensList, tokensRevoke])
    ),
    Command.make("data").pipe(
      Command.withDescription("Generate, import and export the health dataset"),
      Command.withSubcommands([dataGenerate, dataImport, dataExport])
    ),
    Command.make("plugin").pipe(
      Command.withDescription("Write plugins"),
      Command.withSubcommands([pluginNew])
    )
  ]),
  Command.withGlobalFlags([Json])
)

// ---------------------------------------------------------------------------------------------
// Errors and exit codes.

/** A failure as a problem object (RFC 9457's members, as the HTTP API's errors) plus the exit code. */
export interface CliProblem {
  readonly type: "about:blank"
  readonly title: string
  readonly code: string
  readonly detail: string
  readonly exit_code: 1 | 2
  readonly hint?: string
  readonly errors?: ReadonlyArray<string>
  /** How many more errors there were than `errors` lists. */
  readonly errors_omitted?: number
}

const usage = (detail: string, commandPath: ReadonlyArray<string>): CliProblem => ({
  type: "about:blank",
  title: "Usage error",
  code: "usage_error",
  detail,
  exit_code: 2,
  hint: `Run '${[...commandPath, "--help"].join(" ")}' for usage.`
})

/** The problem for any failure of a command. */
export const problemOf = (e: unknown): CliProblem | undefined => {
  const fail = (title: string, code: string, detail: string, extra: Partial<CliProblem> = {}): CliProblem => ({ type: "about:blank", title, code, detail, exit_code: 1, ...extra })
  if (CliError.isCliError(e)) {
    if (e._tag !== "ShowHelp") return usage(e.message, ["hcc"])
    const first = e.errors[0]
    return first === undefined ? undefined : usage(first.message, e.commandPath)
  }
  if (e instanceof UsageError) return usage(e.message, commandPathOf(process.argv.slice(2)))
  if (e instanceof AccountNotFound) return fail("Not Found", "account_not_found", e.message)
  if (e instanceof TokenNotFound) return fail("Not Found", "token_not_found", e.message)
  if (e instanceof DuplicateAccountName) return fail("Conflict", "duplicate_account_name", e.message)
  if (e instanceof ImportRejected) return fail("Import rejected", "import_rejected", `nothing was imported: ${e.total} problem${e.total === 1 ? "" : "s"}`, {
    errors: e.problems,
    ...(e.total > e.problems.length ? { errors_omitted: e.total - e.problems.length } : {})
  })
  if (typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "SqlError") {
    // The operation ("execute") and the engine's own words ("no such table: x").
    const { message, reason } = e as { readonly message?: string; readonly reason?: { readonly cause?: { readonly message?: unknown } } }
    const cause = typeof reason?.cause?.message === "string" ? `: ${reason.cause.message}` : ""
    return fail("Database error", "database_error", `the database failed: ${message ?? "unknown error"}${cause}`)
  }
  return fail("Failed", "failed", e instanceof Error ? e.message : String(e))
}

/** The words of the command line that name a command (up to the first flag or argument). */
const COMMANDS = new Set(["serve", "accounts", "tokens", "data", "plugin", "new", "create", "list", "update", "disable", "enable", "issue", "revoke", "generate", "import", "export"])
const commandPathOf = (args: ReadonlyArray<string>): Array<string> => {
  const path = ["hcc"]
  for (const a of args) {
    if (!COMMANDS.has(a)) break
    path.push(a)
  }
  return path
}

const jsonRequested = (): boolean => process.argv.slice(2).includes("--json")

/** Writes a problem: JSON on stderr with `--json`, else one line and the hint. */
const report = (p: CliProblem) =>
  Console.error(jsonRequested() ? JSON.stringify(p) : [`hcc: ${p.detail}`, ...(p.errors ?? []).map((x) => `  ${x}`), ...(p.errors_omitted === undefined ? [] : [`  … and ${p.errors_omitted} more`]), ...(p.hint === undefined ? [] : [p.hint])].join("\n"))

/** Help and version as usual; a wrong invocation as one line and a hint, not the whole help. */
const presenter: CliOutput.Presenter = {
  present: (event) => {
    if (event._tag === "InvalidInvocation") {
      const first = event.errors[0]
      return first === undefined ? Effect.void : report(usage(first.message, event.commandPath))
    }
    if (event._tag === "Version" && jsonRequested()) return Console.log(JSON.stringify({ name: event.name, version: event.version }))
    return CliOutput.defaultPresenter.present(event)
  }
}

/** 0 for success, a clean stop or help asked for; 2 for a wrong invocation; 1 for any other failure. */
export const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return 0
  const error = Cause.squash(exit.cause)
  if (CliError.isCliError(error) && error._tag === "ShowHelp") return error.errors.length === 0 ? 0 : 2
  return problemOf(error)?.exit_code ?? 1
}

/** Runs the command line on process.argv (bin/hcc.js calls it; so does `node src/cli.ts`). */
export const main = (): void => {
  // A command's stdout is its result; the log goes to stderr (serve's log is its output).
  if (process.argv[2] !== "serve") logToStderr()
  hcc.pipe(
    Command.run({ version: SERVICE_VERSION }),
    Effect.tapError((e: unknown) => {
      if (CliError.isCliError(e)) return Effect.void // rendered by the presenter
      const p = problemOf(e)
      return p === undefined ? Effect.void : report(p)
    }),
    Effect.provide(CliOutput.layerPresenter(presenter)),
    Effect.provide(NodeServices.layer),
    Effect.provide(JsonLogger.layer("Warn")),
    (program) => NodeRuntime.runMain(program, { teardown: (exit, onExit) => onExit(exitCodeOf(exit)), disableErrorReporting: true })
  )
}

if (import.meta.main) main()
