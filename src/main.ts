#!/usr/bin/env node
/**
 * Server entry and composition root: configuration, state database, accounts, metering, plugins,
 * HTTP. `npm start` and `hcc serve` both run {@link serve}.
 */
// First: compile Schema decoders/encoders to specialised JS before any schema is built (≈10–20 %
// less CPU per decoded request, measured with bench:http; effect4-notes §13).
import "effect/schema/SchemaJITCompiler/enable"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Cause, Duration, Effect, Exit, Layer } from "effect"
import { HttpServer } from "effect/http"
import { NetAddress } from "effect/net"
import { createServer } from "node:http"
import builtins from "../plugins/index.ts"
import { Accounts } from "./auth/Accounts.ts"
import { ensureDemoAccount } from "./auth/demoAccount.ts"
import { AppConfig } from "./config/AppConfig.ts"
import * as Database from "./db/Database.ts"
import { DatasetPreparations } from "./health/HealthData.ts"
import * as HealthDataLive from "./health/HealthDataLive.ts"
import { Readiness } from "./http/Readiness.ts"
import { Kernels } from "./kernels/Kernels.ts"
import { httpLayer } from "./http/Server.ts"
import * as JsonLogger from "./log/JsonLogger.ts"
import { Ledger } from "./metering/Ledger.ts"
import { Metering } from "./metering/Metering.ts"
import { PluginRegistry } from "./plugin/PluginRegistry.ts"
import { SERVICE_VERSION } from "./version.ts"

/** Accounts, ledger, metering, readiness, compute core and health data over the migrated state database. */
export const StateLive = HealthDataLive.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(Accounts.layer, Metering.layer, Readiness.layer, Kernels.layerWasm)),
  Layer.provideMerge(Ledger.layer),
  Layer.provideMerge(Database.layer)
)

/** First start on an empty database: the demo account and its token file. */
const DemoAccountLive = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    yield* ensureDemoAccount(config.dataDir)
  })
)

/** The Node HTTP server on PORT/HOST, with a bounded graceful shutdown. */
const NodeServerLive = Layer.unwrap(
  Effect.gen(function*() {
    const config = yield* AppConfig
    return NodeHttpServer.layer(() => {
      // Keep idle connections longer than common proxies and clients do (60 s), so a client never
      // reuses a socket the server is closing at that moment.
      const server = createServer()
      server.keepAliveTimeout = 65_000
      server.headersTimeout = 66_000
      // server.close() drops the connections idle at that moment; one serving an in-flight request
      // turns idle later and would hold shutdown for the whole grace period (or keepAliveTimeout).
      // While closing, drop each connection as soon as it is idle.
      const close = server.close.bind(server)
      server.close = (callback?: (err?: Error) => void) => {
        const sweep = setInterval(() => server.closeIdleConnections(), 50)
        close((err?: Error) => {
          clearInterval(sweep)
          callback?.(err)
        })
        return server
      }
      return server
    }, {
      port: config.port,
      host: config.host,
      gracefulShutdownTimeout: Duration.seconds(config.shutdownGraceSeconds)
    })
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
    yield* Effect.logInfo("listening").pipe(Effect.annotateLogs({ ...where, version: SERVICE_VERSION }))
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
  Layer.mergeAll(httpLayer, ListeningLog).pipe(
    Layer.provide(NodeServerLive),
    Layer.provide(DemoAccountLive),
    Layer.provideMerge(StateLive),
    Layer.provideMerge(PreparationsLive),
    Layer.provideMerge(PluginRegistry.layer(builtins)),
    Layer.provideMerge(config)
  )

/** Runs the service until interrupted (SIGTERM/SIGINT), with the JSON logger at HCC_LOG_LEVEL. */
export const serve = Effect.gen(function*() {
  const config = yield* AppConfig
  return yield* Layer.launch(ServiceLive(Layer.succeed(AppConfig, config))).pipe(
    Effect.provide(JsonLogger.layer(config.logLevel))
  )
}).pipe(
  Effect.provide(AppConfig.layer),
  Effect.onExit((exit) => {
    if (Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause)) return Effect.logInfo("stopped")
    const error = Cause.squash(exit.cause)
    return Effect.logError("start-up failed", exit.cause).pipe(
      Effect.annotateLogs({ error: error instanceof Error ? error.message : String(error) })
    )
  }),
  Effect.provide(JsonLogger.layer("Info"))
)

/** Exit code 0 for a clean stop (including SIGTERM), 1 for any failure. */
export const teardown = (exit: Exit.Exit<unknown, unknown>, onExit: (code: number) => void): void =>
  onExit(Exit.isSuccess(exit) || Cause.hasInterruptsOnly(exit.cause) ? 0 : 1)

if (import.meta.main) NodeRuntime.runMain(serve, { teardown, disableErrorReporting: true })
