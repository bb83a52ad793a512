#!/usr/bin/env node
/**
 * Server entry and composition root: configuration, state database, accounts, metering, plugins,
 * HTTP. `npm start` and `hcc serve` both run {@link serve}.
 */
// First: compile Schema decoders/encoders to specialised JS before any schema is built (≈10–20 %
// less CPU per decoded request, measured with bench:http; effect4-notes §13).
import "effect/schema/SchemaJITCompiler/enable"
// Module by module: the package's index also loads its Redis client, which the server never uses.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as HttpServer from "effect/http/HttpServer"
import * as NetAddress from "effect/net/NetAddress"
import { makeNodeServer, NodeServer } from "./http/NodeServer.ts"
import builtins from "../plugins/index.ts"
import { Accounts } from "./auth/Accounts.ts"
import { isWorker, supervise } from "./cluster/Supervisor.ts"
import { ensureDemoAccount } from "./auth/demoAccount.ts"
import { AppConfig, type AppSettings } from "./config/AppConfig.ts"
import * as Database from "./db/Database.ts"
import { DatasetPreparations } from "./health/HealthData.ts"
import * as HealthDataLive from "./health/HealthDataLive.ts"
import * as PatientDataLive from "./health/PatientDataLive.ts"
import { Readiness } from "./http/Readiness.ts"
import * as ComputePool from "./compute/ComputePool.ts"
import { DocsAssetsPreloaded, httpLayer } from "./http/Server.ts"
import * as JsonLogger from "./log/JsonLogger.ts"
import * as Leases from "./db/Leases.ts"
import { LimiterStore } from "./db/LimiterStore.ts"
import { Ledger } from "./metering/Ledger.ts"
import { Idempotency } from "./metering/Idempotency.ts"
import { Metering } from "./metering/Metering.ts"
import { People } from "./portal/People.ts"
import * as MetricsServer from "./observability/MetricsServer.ts"
import * as Otel from "./observability/Otel.ts"
import { PluginRegistry } from "./plugin/PluginRegistry.ts"
import { networkEndpoints } from "./network/plugins.ts"
import { SERVICE_VERSION } from "./version.ts"
import { missingServerFlags } from "./nodeFlags.ts"

/** Accounts and the portal's people, ledger, metering, readiness, compute core (and threads) and health data over the migrated state database. */
export const StateLive = PatientDataLive.layer.pipe(
  Layer.provideMerge(HealthDataLive.layer),
  Layer.provideMerge(Layer.mergeAll(Accounts.layer, People.layer, Metering.layer, Idempotency.layer, Readiness.layer, ComputePool.layer)),
  Layer.provideMerge(Layer.mergeAll(Ledger.layer, LimiterStore.layer)),
  Layer.provideMerge(Database.LimiterSql.layer),
  Layer.provideMerge(Database.layer)
)

/** One line saying which database this process keeps its state in (never a password). */
const DatabaseLog = Layer.effectDiscard(
  Effect.gen(function*() {
    const where = Database.describe(yield* AppConfig)
    yield* Effect.logInfo("state database").pipe(Effect.annotateLogs({ engine: where.engine, location: where.location }))
  })
)

/**
 * One line saying which small-cell rule the answers are held to; a warning when it is off
 * (HCC_MIN_CELL_SIZE=1), which only synthetic data should be served with.
 */
const DisclosureLog = Layer.effectDiscard(
  Effect.gen(function*() {
    const { minimum, rounding } = (yield* AppConfig).disclosure
    const fields = { min_cell_size: minimum, count_rounding: rounding }
    yield* (minimum <= 1
      ? Effect.logWarning("small-cell protection is off: counts and statistics of any size are published; serve synthetic data only")
      : Effect.logInfo("small-cell protection")).pipe(Effect.annotateLogs(fields))
  })
)

/** Key of the advisory lock under which one process at a time looks for (and makes) the demo account. */
const DEMO_ACCOUNT_LOCK = 4_242_002

/**
 * First start on an empty database: the demo account and its token file. Exclusive, so processes
 * starting together on one empty database make one demo account, not one each.
 */
const DemoAccountLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* Leases.exclusively(DEMO_ACCOUNT_LOCK, ensureDemoAccount(config.dataDir))
  })
)

/**
 * The Node HTTP server on PORT/HOST: bounded timeouts and connections, and a shutdown that loses
 * nothing (NodeServer.ts).
 */
const NodeServerLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const server = makeNodeServer(config)
    return Layer.merge(
      NodeHttpServer.layer(() => server, {
        port: config.port,
        host: config.host,
        gracefulShutdownTimeout: Duration.seconds(config.shutdownGraceSeconds)
      }),
      Layer.succeed(NodeServer, server)
    )
  })
)

/** Logs the bound address once the server listens (tests read the port from this line). */
const ListeningLog = Layer.effectDiscard(
  Effect.gen(function*() {
    const server = yield* HttpServer.HttpServer
    const address = server.address
    const where = address._tag === "UnixPathAddress"
      ? { path: address.path }
      : { host: NetAddress.formatHost(address), port: address.port }
    yield* Effect.logInfo("listening").pipe(Effect.annotateLogs({ ...where, version: SERVICE_VERSION, pid: process.pid }))
  })
)

/** The loaded plugins' dataset preparations (run by the health data loader before it reports ready). */
const PreparationsLive = Layer.effect(
  DatasetPreparations,
  Effect.gen(function*() {
    const { plugins } = yield* PluginRegistry
    return plugins.flatMap(({ plugin }) => plugin.prepare === undefined ? [] : [{ name: plugin.name, prepare: plugin.prepare }])
  })
)

/** The whole service as one layer, given a configuration layer. */
export const ServiceLive = (config: Layer.Layer<AppConfig, unknown>) =>
  Layer.mergeAll(httpLayer, ListeningLog, MetricsServer.layer).pipe(
    // The docs page's assets are compiled before the server listens (Server.ts).
    Layer.provide(NodeServerLive.pipe(Layer.provide(DocsAssetsPreloaded))),
    Layer.provide(DemoAccountLive),
    Layer.provide(Layer.merge(DatabaseLog, DisclosureLog)),
    Layer.provideMerge(StateLive),
    Layer.provideMerge(PreparationsLive),
    Layer.provideMerge(PluginRegistry.layer(builtins, networkEndpoints)),
    Layer.provideMerge(config),
    // OpenTelemetry export when OTEL_EXPORTER_OTLP_* asks for it (Otel.ts); outermost, so every span and log reaches it.
    Layer.provide(Otel.layer())
  )

/** How `serveWith` runs: `hcc serve`'s options over the settings, and where the log goes. */
export interface ServeOptions {
  readonly workers?: number | undefined
  readonly threads?: number | undefined
  readonly logLevel?: AppSettings["logLevel"] | undefined
  /**
   * Takes each log line (without its newline) in place of the process's stdout: for a program that
   * runs servers in its own process (the test suite), one log per server.
   */
  readonly write?: ((line: string) => void) | undefined
}

/**
 * Runs the service until interrupted (SIGTERM/SIGINT), with the JSON logger at HCC_LOG_LEVEL: one
 * server in this process, or, with more than one worker (HCC_WORKERS or `workers`), a cluster
 * primary supervising that many (src/cluster/Supervisor.ts). Each server process has HCC_THREADS
 * (or `threads`) compute threads (src/compute/ComputePool.ts). The settings are read from the
 * ConfigProvider in context (the process's environment unless one is provided).
 */
export const serveWith = (options: ServeOptions = {}) =>
  Effect.gen(function*() {
    const loaded = yield* AppConfig
    // `hcc serve --log-level` and `--threads` win over HCC_LOG_LEVEL and HCC_THREADS.
    const config = {
      ...loaded,
      ...(options.logLevel === undefined ? {} : { logLevel: options.logLevel }),
      ...(options.threads === undefined ? {} : { threads: options.threads })
    }
    const workers = options.workers ?? config.workers
    // A cluster worker gets the flags from the supervisor; a process started without them says so.
    const missing = isWorker() ? [] : missingServerFlags()
    const flagsNote = missing.length === 0 ? Effect.void : Effect.logWarning("started without the server's node flags").pipe(
      Effect.annotateLogs({ missing: missing.join(" "), start_with: ["node", ...process.execArgv, ...missing, ...process.argv.slice(1)].join(" "), see: "docs/deploy.md" })
    )
    const run = workers > 1 && !isWorker()
      ? Effect.scoped(Effect.andThen(MetricsServer.primary(config), supervise(workers, config.shutdownGraceSeconds)))
      : Layer.launch(ServiceLive(Layer.succeed(AppConfig, config)))
    return yield* Effect.andThen(flagsNote, run).pipe(Effect.provide(JsonLogger.layer(config.logLevel, options.write)))
  }).pipe(
    Effect.provide(AppConfig.layer),
    Effect.onExit((exit) => {
      if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return Effect.logInfo("stopped")
      const error = Cause.squash(exit.cause)
      return Effect.logError("start-up failed", exit.cause).pipe(
        Effect.annotateLogs({ error: error instanceof Error ? error.message : String(error) })
      )
    }),
    Effect.provide(JsonLogger.layer("Info", options.write))
  )

/** `npm start`: the service as configured by the environment. */
export const serve = serveWith()

/** Exit code 0 for a clean stop (including SIGTERM), 1 for any failure. */
export const teardown = (exit: Exit.Exit<unknown, unknown>, onExit: (code: number) => void): void =>
  onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)

if (import.meta.main) NodeRuntime.runMain(serve, { teardown, disableErrorReporting: true })
