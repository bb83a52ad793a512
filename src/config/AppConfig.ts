/**
 * Every setting the service reads, from the environment through effect `Config` (README.md, "Configuration").
 * README.md documents each variable; a test keeps that table and this file in step.
 */
import * as Config from "effect/Config"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { availableParallelism } from "node:os"
import { DEFAULT_POPULATION, MAX_PATIENTS, MAX_SEED } from "./limits.ts"
import type { ScoreStorage } from "../health/panelStorage.ts"
import { DEFAULT_DISCLOSURE, type DisclosureSettings } from "../plugin/disclosure.ts"

/** Every environment variable read below; README.md's configuration table lists exactly these (a test checks). */
export const ENV_VARS = [
  "PORT",
  "HOST",
  "HCC_DATA_DIR",
  "HCC_PLUGINS",
  "HCC_LOG_LEVEL",
  "HCC_POPULATION",
  "HCC_SEED",
  "HCC_SHUTDOWN_GRACE_SECONDS",
  "HCC_AUTH_CACHE_MS",
  "HCC_WORKERS",
  "DATABASE_URL",
  "HCC_PG_POOL_SIZE",
  "HCC_HEADERS_TIMEOUT_SECONDS",
  "HCC_REQUEST_TIMEOUT_SECONDS",
  "HCC_KEEP_ALIVE_TIMEOUT_SECONDS",
  "HCC_MAX_CONNECTIONS",
  "HCC_CORS_ORIGINS",
  "HCC_PUBLIC_URL",
  "HCC_METRICS_PORT",
  "HCC_METRICS_HOST",
  "HCC_THREADS",
  "HCC_COMPUTE_PRIORITY",
  "HCC_DATASET_POLL_SECONDS",
  "HCC_MIN_CELL_SIZE",
  "HCC_COUNT_ROUNDING",
  "HCC_SNAPSHOT",
  "HCC_SCORES",
  "HCC_NETWORK"
] as const

/** The settings after parsing and defaults. */
export interface AppSettings {
  /** TCP port the HTTP server listens on. */
  readonly port: number
  /** Interface the HTTP server binds to. */
  readonly host: string
  /** Folder for the database and the demo token. */
  readonly dataDir: string
  /** Third-party plugin module specifiers (paths or package names). */
  readonly plugins: ReadonlyArray<string>
  /** Minimum level of log lines. */
  readonly logLevel: "Trace" | "Debug" | "Info" | "Warn" | "Error" | "Fatal" | "None"
  /** Patients generated for the default dataset. */
  readonly population: number
  /** Seed of the default dataset's generator. */
  readonly seed: number
  /** Seconds in-flight requests get to finish after SIGTERM. */
  readonly shutdownGraceSeconds: number
  /** How long a successful token look-up is reused (0 = every request asks the database). */
  readonly authCacheMs: number
  /** Server processes on this machine (node:cluster workers sharing the port); 1 = no cluster. */
  readonly workers: number
  /** PostgreSQL URL; when set, all state and the dataset live there instead of SQLite. */
  readonly databaseUrl: Option.Option<string>
  /** Most PostgreSQL connections one process opens. */
  readonly pgPoolSize: number
  /** Seconds a client has to send a request's headers. */
  readonly headersTimeoutSeconds: number
  /** Seconds a client has to send a whole request, headers and body. */
  readonly requestTimeoutSeconds: number
  /** Seconds an idle keep-alive connection is kept open. */
  readonly keepAliveTimeoutSeconds: number
  /** Open connections per process; past it the longest-idle connection is closed (or the new one, when none is idle). */
  readonly maxConnections: number
  /** Origins browsers may call from (CORS); empty = none. */
  readonly corsOrigins: ReadonlyArray<string>
  /**
   * The origin people reach the service at (`https://api.example.com`), for the portal: its invite
   * links, the origin its state-changing requests must come from, its passkeys' relying party, and
   * — when https — its `__Host-` Secure session cookie. Undefined: the request's own Host, over http.
   */
  readonly publicUrl: string | undefined
  /** Port of the Prometheus `/metrics` listener (0 = any free port); undefined = no listener. */
  readonly metricsPort: number | undefined
  /** Interface the metrics listener binds to. */
  readonly metricsHost: string
  /** Compute threads per process answering the analytic endpoints; 0 = on the HTTP thread itself. */
  readonly threads: number
  /**
   * How the compute threads yield the CPU to the HTTP thread (Linux): `idle` = the SCHED_IDLE class
   * (set with util-linux's `chrt`; nice +10 where that fails), `nice` = nice +10 only.
   */
  readonly computePriority: "idle" | "nice"
  /** Whether the loaded dataset's columns are kept in `$HCC_DATA_DIR/dataset.snapshot` and read from there on the next start. */
  readonly snapshot: boolean
  /** How the axis scores are held in memory: `compact` (a byte each when every score is on the 0.1 grid) or `wide` (32-bit floats); the answers are the same. */
  readonly scores: ScoreStorage
  /** How often a running server looks for a newly imported or generated dataset, in seconds (0: never; restart to serve a new one). */
  readonly datasetPollSeconds: number
  /** The network file of a coordinator (docs/network.md): its sites are asked under /v1/network/…; undefined = no network endpoints. */
  readonly network: string | undefined
  /** The small-cell rule: HCC_MIN_CELL_SIZE (no figure rests on fewer patients; 1 = off) and HCC_COUNT_ROUNDING (counts rounded to a multiple; 1 = off). */
  readonly disclosure: DisclosureSettings
}

/** `auto` = one compute thread per core; else a count (0 = none: the HTTP thread computes). */
export const parseThreads = (text: string, cores: number): number | undefined => {
  if (text === "auto") return Math.max(1, cores)
  return /^(0|[1-9][0-9]?)$/.test(text) ? Number(text) : undefined
}

/** `auto` = one worker per core; else a count. */
export const parseWorkers = (text: string, cores: number): number | undefined => {
  if (text === "auto") return Math.max(1, cores)
  return /^[1-9][0-9]{0,2}$/.test(text) ? Number(text) : undefined
}

const LogLevels = ["trace", "debug", "info", "warn", "error", "fatal", "none"] as const

/** A PostgreSQL connection URL (the only database URL the service takes). */
const PostgresUrl = Schema.String.check(
  Schema.isPattern(/^postgres(ql)?:\/\/\S+$/u, { message: "expected postgres://user:password@host:port/database" })
)

/** Comma-separated browser origins (scheme://host[:port]), or nothing. */
const CorsOrigins = Schema.String.check(
  Schema.isPattern(/^\s*(https?:\/\/[^\s,/]+(\s*,\s*https?:\/\/[^\s,/]+)*)?\s*$/u, { message: "expected a comma-separated list of origins like https://app.example.com" })
)

const PublicUrl = Schema.String.check(
  Schema.isPattern(/^https?:\/\/[^\s,/]+\/?$/u, { message: "expected an origin like https://api.example.com" })
)

/** The `Config` description of every variable, with its default. */
export const settingsConfig: Config.Config<AppSettings> = Config.all({
  // 0 asks the OS for a free port (tests); the bound port is in the "listening" log line.
  port: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65_535 })), "PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("0.0.0.0")),
  dataDir: Config.String("HCC_DATA_DIR").pipe(Config.withDefault("./data")),
  plugins: Config.String("HCC_PLUGINS").pipe(
    Config.withDefault(""),
    Config.map((s) => s.split(",").map((x) => x.trim()).filter((x) => x.length > 0))
  ),
  logLevel: Config.Literals(LogLevels, "HCC_LOG_LEVEL").pipe(
    Config.withDefault("info" as const),
    Config.map((s) => (s.charAt(0).toUpperCase() + s.slice(1)) as AppSettings["logLevel"])
  ),
  population: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_PATIENTS })), "HCC_POPULATION").pipe(
    Config.withDefault(DEFAULT_POPULATION)
  ),
  seed: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: MAX_SEED })), "HCC_SEED").pipe(Config.withDefault(20_240_601)),
  shutdownGraceSeconds: Config.Int("HCC_SHUTDOWN_GRACE_SECONDS").pipe(Config.withDefault(10)),
  authCacheMs: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 60_000 })), "HCC_AUTH_CACHE_MS").pipe(
    Config.withDefault(1000)
  ),
  workers: Config.schema(Schema.String.check(Schema.isPattern(/^(auto|[1-9][0-9]{0,2})$/u, { message: "expected auto or a whole number from 1 to 999" })), "HCC_WORKERS").pipe(
    Config.withDefault("1"),
    Config.map((text) => parseWorkers(text, availableParallelism()) ?? 1)
  ),
  databaseUrl: Config.option(Config.schema(PostgresUrl, "DATABASE_URL")),
  pgPoolSize: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })), "HCC_PG_POOL_SIZE").pipe(Config.withDefault(10)),
  headersTimeoutSeconds: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 600 })), "HCC_HEADERS_TIMEOUT_SECONDS").pipe(Config.withDefault(10)),
  requestTimeoutSeconds: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3600 })), "HCC_REQUEST_TIMEOUT_SECONDS").pipe(Config.withDefault(30)),
  keepAliveTimeoutSeconds: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3600 })), "HCC_KEEP_ALIVE_TIMEOUT_SECONDS").pipe(Config.withDefault(65)),
  maxConnections: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1_000_000 })), "HCC_MAX_CONNECTIONS").pipe(Config.withDefault(2000)),
  corsOrigins: Config.schema(CorsOrigins, "HCC_CORS_ORIGINS").pipe(
    Config.withDefault(""),
    Config.map((s) => s.split(",").map((x) => x.trim()).filter((x) => x.length > 0))
  ),
  publicUrl: Config.option(Config.schema(PublicUrl, "HCC_PUBLIC_URL")).pipe(Config.map((o) => (o._tag === "Some" ? new URL(o.value).origin : undefined))),
  metricsPort: Config.option(Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 65_535 })), "HCC_METRICS_PORT")).pipe(
    Config.map(Option.getOrUndefined)
  ),
  metricsHost: Config.String("HCC_METRICS_HOST").pipe(Config.withDefault("127.0.0.1")),
  threads: Config.schema(Schema.String.check(Schema.isPattern(/^(auto|0|[1-9][0-9]?)$/u, { message: "expected auto or a whole number from 0 to 99" })), "HCC_THREADS").pipe(
    Config.withDefault("auto"),
    Config.map((text) => parseThreads(text, availableParallelism()) ?? 0)
  ),
  computePriority: Config.Literals(["idle", "nice"], "HCC_COMPUTE_PRIORITY").pipe(Config.withDefault("idle" as const)),
  snapshot: Config.Literals(["on", "off"], "HCC_SNAPSHOT").pipe(Config.withDefault("on" as const), Config.map((s) => s === "on")),
  scores: Config.Literals(["compact", "wide"], "HCC_SCORES").pipe(Config.withDefault("compact" as const)),
  datasetPollSeconds: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 86_400 })), "HCC_DATASET_POLL_SECONDS").pipe(Config.withDefault(10)),
  network: Config.option(Config.String("HCC_NETWORK")).pipe(Config.map((o) => Option.getOrUndefined(Option.filter(o, (s) => s.trim() !== "")))),
  disclosure: Config.all({
    minimum: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })), "HCC_MIN_CELL_SIZE").pipe(Config.withDefault(DEFAULT_DISCLOSURE.minimum)),
    rounding: Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })), "HCC_COUNT_ROUNDING").pipe(Config.withDefault(DEFAULT_DISCLOSURE.rounding))
  })
})

/** The parsed settings as a service, so every layer reads one value. */
export class AppConfig extends Context.Service<AppConfig, AppSettings>()("hcc/AppConfig") {
  /** Reads the environment (or the current ConfigProvider). */
  static readonly layer = Layer.effect(AppConfig, settingsConfig)
  /** Fixed settings, for tests. */
  static readonly layerTest = (settings: Partial<AppSettings> & Pick<AppSettings, "dataDir">) =>
    Layer.succeed(AppConfig, {
      port: 0,
      host: "127.0.0.1",
      plugins: [],
      logLevel: "None",
      population: 1000,
      seed: 1,
      shutdownGraceSeconds: 2,
      authCacheMs: 1000,
      workers: 1,
      databaseUrl: Option.none(),
      pgPoolSize: 10,
      headersTimeoutSeconds: 10,
      requestTimeoutSeconds: 30,
      keepAliveTimeoutSeconds: 65,
      maxConnections: 2000,
      corsOrigins: [],
      publicUrl: undefined,
      metricsPort: undefined,
      metricsHost: "127.0.0.1",
      threads: 0,
      computePriority: "idle",
      snapshot: true,
      scores: "compact",
      datasetPollSeconds: 0,
      network: undefined,
      disclosure: DEFAULT_DISCLOSURE,
      ...settings
    })
}
