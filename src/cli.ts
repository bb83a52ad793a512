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
import * as Cause from "effect/Cause"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as CliError from "effect/cli/CliError"
import * as CliOutput from "effect/cli/CliOutput"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as GlobalFlag from "effect/cli/GlobalFlag"
import { AccountNotFound, DuplicateAccountName, TokenNotFound } from "./auth/Accounts.ts"
import { type AppSettings, parseThreads, parseWorkers } from "./config/AppConfig.ts"
import { availableParallelism } from "node:os"
import { OnUnfinished, type Unfinished } from "./health/DatasetWriter.ts"
import { ImportRejected } from "./pipeline/Report.ts"
import * as JsonLogger from "./log/JsonLogger.ts"
import { ProgressOut } from "./health/progress.ts"
import { logToStderr } from "./log/LogSink.ts"
import { PLUGIN_NAME, scaffoldProblem, writeScaffold } from "./plugin/scaffold.ts"
import { SERVICE_VERSION } from "./version.ts"
import { resolve } from "node:path"
import { accountsCreate, accountsDisable, accountsEnable, accountsList, accountsUpdate, tokensIssue, tokensList, tokensRevoke } from "./commands/accounts.ts"
import { accountsAudit, accountsInvite, accountsPeople, accountsRemovePerson, tokensRoll } from "./commands/people.ts"
import { dataExport, dataGenerate, dataImport } from "./commands/data.ts"
import { Committed, emit, Json, UsageError } from "./commands/output.ts"

export { accountJson, tokenJson } from "./auth/json.ts"
export { Json, UsageError } from "./commands/output.ts"
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
      // The server loads on demand: the other commands start without its module graph.
      const { serveWith } = yield* Effect.promise(() => import("./main.ts"))
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
      Command.withSubcommands([accountsCreate, accountsList, accountsUpdate, accountsDisable, accountsEnable, accountsInvite, accountsPeople, accountsRemovePerson, accountsAudit])
    ),
    Command.make("tokens").pipe(
      Command.withDescription("Manage API tokens"),
      Command.withSubcommands([tokensIssue, tokensList, tokensRevoke, tokensRoll])
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
  /** 1 failed, 2 called wrongly, 130 / 143 stopped by SIGINT / SIGTERM. */
  readonly exit_code: number
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

/** The problem for any failure of a command; `args`, the command line's words, name the command in a usage error's hint. */
export const problemOf = (e: unknown, args: ReadonlyArray<string> = []): CliProblem | undefined => {
  const fail = (title: string, code: string, detail: string, extra: Partial<CliProblem> = {}): CliProblem => ({ type: "about:blank", title, code, detail, exit_code: 1, ...extra })
  if (CliError.isCliError(e)) {
    if (e._tag !== "ShowHelp") return usage(e.message, ["hcc"])
    const first = e.errors[0]
    return first === undefined ? undefined : usage(first.message, e.commandPath)
  }
  if (e instanceof UsageError) return usage(e.message, commandPathOf(args))
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

/**
 * A command other than serve stopped by a signal, saying what is true afterwards: a `data
 * generate` or `import` never switched to its dataset, emptied the set it had begun (unless that
 * failed: `left`, from the writer), and an import removed its scratch files.
 */
const stopped = (args: ReadonlyArray<string>, signal: string, left: Unfinished | undefined): CliProblem => {
  const [, group, command] = commandPathOf(args)
  const writing = group === "data" && (command === "generate" || command === "import")
  const scratch = command === "import" ? "; the import's scratch files were removed" : ""
  const outcome = !writing
    ? ""
    : left !== undefined && !left.emptied && left.wrote
    ? `: the dataset in use is unchanged; the rows written to the spare set could not be removed (${problemOf(left.error)?.detail ?? String(left.error)}): the next data generate or import removes them first${scratch}`
    : `: nothing was written; the dataset in use is unchanged${left?.wrote === true ? "; the rows written to the spare set were removed" : ""}${scratch}`
  return { type: "about:blank", title: "Stopped", code: "stopped", detail: `stopped by ${signal} before it finished${outcome}`, exit_code: SIGNAL_EXIT[signal] ?? 1 }
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

/** Writes a problem: JSON on stderr with `--json`, else one line and the hint. */
const reporter = (args: ReadonlyArray<string>) => (p: CliProblem) =>
  Console.error(args.includes("--json") ? JSON.stringify(p) : [`hcc: ${p.detail}`, ...(p.errors ?? []).map((x) => `  ${x}`), ...(p.errors_omitted === undefined ? [] : [`  … and ${p.errors_omitted} more`]), ...(p.hint === undefined ? [] : [p.hint])].join("\n"))

/** Help and version as usual; a wrong invocation as one line and a hint, not the whole help. */
const presenterFor = (args: ReadonlyArray<string>): CliOutput.Presenter => ({
  present: (event) => {
    if (event._tag === "InvalidInvocation") {
      const first = event.errors[0]
      return first === undefined ? Effect.void : reporter(args)(usage(first.message, event.commandPath))
    }
    if (event._tag === "Version" && args.includes("--json")) return Console.log(JSON.stringify({ name: event.name, version: event.version }))
    return CliOutput.defaultPresenter.present(event)
  }
})

/** The exit code of a command stopped by a signal before it finished: 128 + the signal's number, as shells report it (130 for SIGINT, 143 for SIGTERM). */
const SIGNAL_EXIT: Readonly<Record<string, number>> = { SIGINT: 130, SIGTERM: 143 }

/**
 * 0 for success, help asked for, or `serve` stopped by a signal (its normal end); 130 or 143 for
 * any other command a signal stopped before it finished; 2 for a wrong invocation; 1 for any other
 * failure.
 */
export const exitCodeOf = (exit: Exit.Exit<unknown, unknown>, stoppedBy?: string): number => {
  if (Exit.isSuccess(exit)) return 0
  if (Cause.hasInterruptsOnly(exit.cause)) return stoppedBy === undefined ? 0 : SIGNAL_EXIT[stoppedBy] ?? 1
  const error = Cause.squash(exit.cause)
  if (CliError.isCliError(error) && error._tag === "ShowHelp") return error.errors.length === 0 ? 0 : 2
  return problemOf(error)?.exit_code ?? 1
}

/**
 * The command line `args` as one effect: errors reported as problems (on the Console's error
 * side), a stop reported with what is true afterwards. `stoppedBy` says which signal, if any, is
 * stopping it; `committed` records a dataset switch a signal can no longer undo.
 */
const commandLine = (args: ReadonlyArray<string>, stoppedBy: () => NodeJS.Signals | undefined, committed: { done: boolean }) => {
  const report = reporter(args)
  // What a dataset write that a signal stopped left behind, for the message (the writer tells it once it has cleaned up).
  let unfinished: Unfinished | undefined
  return Command.runWith(hcc, { version: SERVICE_VERSION })(args).pipe(
    Effect.onInterrupt(() => {
      const signal = stoppedBy()
      return signal === undefined || committed.done ? Effect.void : report(stopped(args, signal, unfinished))
    }),
    Effect.provideService(Committed, committed),
    Effect.provideService(OnUnfinished, (left) => Effect.sync(() => (unfinished = left))),
    Effect.tapError((e: unknown) => {
      if (CliError.isCliError(e)) return Effect.void // rendered by the presenter
      const p = problemOf(e, args)
      return p === undefined ? Effect.void : report(p)
    }),
    Effect.provide(CliOutput.layerPresenter(presenterFor(args))),
    Effect.provide(NodeServices.layer)
  )
}

/** Runs the command line on process.argv (bin/hcc.js calls it; so does `node src/cli.ts`). */
export const main = (): void => {
  const args = process.argv.slice(2)
  // A command's stdout is its result; the log goes to stderr (serve's log is its output).
  const serving = args[0] === "serve"
  if (!serving) logToStderr()
  // NodeRuntime.runMain interrupts the command on SIGINT and SIGTERM; this only remembers which,
  // for the exit code and the message (a command other than serve that a signal stops has failed).
  let stoppedBy: NodeJS.Signals | undefined
  const remember = (signal: NodeJS.Signals) => (stoppedBy ??= signal)
  if (!serving) for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, remember)
  const committed = { done: false }
  commandLine(args, () => stoppedBy, committed).pipe(
    Effect.provide(JsonLogger.layer("Warn")),
    (program) => NodeRuntime.runMain(program, { teardown: (exit, onExit) => onExit(exitCodeOf(exit, committed.done ? undefined : stoppedBy)), disableErrorReporting: true })
  )
}

/** The variables that are set (an environment record may hold undefined for one removed). */
const definedOnly = (env: Readonly<Record<string, string | undefined>>): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))

/** Where a command line run by `runCli` reads its settings and writes. */
export interface CliIo {
  /** The environment its settings are read from (HCC_DATA_DIR, DATABASE_URL, …), in place of the process's. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Its result: what the command prints on stdout. */
  readonly out: (text: string) => void
  /** Its errors, progress and log lines: what it prints on stderr. */
  readonly err: (text: string) => void
}

/**
 * Runs the command line `args` (not `serve`) in this process, for a program that drives `hcc`
 * many times (the test suite): the same commands, with their settings read from `io.env` and
 * their output given to `io`'s writers. Resolves with the exit code the process would have had.
 * Signals stay the process's: nothing here stops a run but its own end.
 */
export const runCli = (args: ReadonlyArray<string>, io: CliIo): Promise<number> => {
  if (args[0] === "serve") return Promise.reject(new Error("runCli does not serve: start the server as a process"))
  const lines = (write: (text: string) => void) => (...parts: ReadonlyArray<unknown>) => write(parts.map(String).join(" ") + "\n")
  // As Node's console: log, info and debug on stdout; error, warn and trace on stderr.
  const console: Console.Console = { ...globalThis.console, log: lines(io.out), info: lines(io.out), debug: lines(io.out), error: lines(io.err), warn: lines(io.err), trace: lines(io.err) }
  return commandLine(args, () => undefined, { done: false }).pipe(
    Effect.provideService(Console.Console, console),
    Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: definedOnly(io.env) })),
    Effect.provideService(ProgressOut, { isTTY: false, write: io.err }),
    Effect.provide(JsonLogger.layer("Warn", (line) => io.err(line + "\n"))),
    Effect.runPromiseExit
  ).then((exit) => exitCodeOf(exit))
}

if (import.meta.main) main()
