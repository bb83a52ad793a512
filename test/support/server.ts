/**
 * Starts the real service on an ephemeral port, reads the bound port from its "listening" log line,
 * and offers fetch helpers. A server runs on this process's server thread (serverThread.ts: the
 * same `serveWith` as `node src/main.ts`, without a process start each) unless what its test
 * checks is per process; then it is `node src/main.ts` (or `hcc serve`) as a child process. Each
 * server gets its own temporary data folder unless one is passed (to test restarts).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { randomUUID } from "node:crypto"
import { copyFileSync, existsSync, mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { inject } from "vitest"
import type { DbTarget } from "./db.ts"
import { DEFAULT_POPULATION } from "../../src/config/limits.ts"
import { SERVER_NODE_FLAGS } from "../../src/nodeFlags.ts"
import { hccOnThread } from "./cliThread.ts"
import { serveOnThread } from "./serverThread.ts"

export const ROOT = resolve(import.meta.dirname, "../..")

/** The population a test server generates when its test does not choose one. */
export const DEFAULT_PATIENTS = 1000

/** A running service. */
export interface TestServer extends DbTarget {
  readonly url: string
  readonly dataDir: string
  /** The demo token, or "" when another process made the database's demo account. */
  readonly demoToken: string
  /** Everything the process has written to stdout so far. */
  readonly stdout: () => string
  /** Everything the server has written to stderr so far. */
  readonly stderr: () => string
  /** Parsed JSON log lines so far. */
  readonly logLines: () => ReadonlyArray<Record<string, unknown>>
  /** Sends a signal (a server on the thread: SIGTERM or SIGINT) and resolves with the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
  /** The server's process; undefined for a server on this process's server thread (serverThread.ts). */
  readonly child: ChildProcess | undefined
}

/** Waits until the server has logged a line matching `predicate` (log lines are flushed once per event-loop turn). */
export const waitForLog = async (
  server: TestServer,
  predicate: (line: Record<string, unknown>) => boolean,
  timeoutMs = 5000
): Promise<Record<string, unknown>> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = server.logLines().find(predicate)
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error("no matching log line")
    await new Promise((r) => setTimeout(r, 20))
  }
}

/** Waits until /readyz says ready (the health dataset is generated and loaded). */
export const waitReady = async (server: TestServer, timeoutMs = 120_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const res = await fetch(`${server.url}/readyz`)
    await res.arrayBuffer()
    if (res.status === 200) return
    if (Date.now() > deadline) throw new Error("the server did not become ready")
    await new Promise((r) => setTimeout(r, 100))
  }
}

/** Copies a template data folder's database and snapshot (globalSetup.ts) into `dir`. */
const copyTemplate = (template: string, dir: string): string => {
  for (const file of ["hcc.db", "hcc.db-wal", "dataset.snapshot"]) if (existsSync(join(template, file))) copyFileSync(join(template, file), join(dir, file))
  return dir
}

/** A fresh data folder holding a copy of a template folder's dataset and snapshot: the run's 30,000-patient fixture (globalSetup.ts), or a population made once (datasets.ts). */
export const fixtureDataDir = (fixtureDir: string): string => copyTemplate(fixtureDir, tempDataDir())

/** The service's own default population (HCC_POPULATION unset), on which the documented examples are recorded. */
export const SERVICE_DEFAULT_PATIENTS = DEFAULT_POPULATION

/**
 * The run's copy of the dataset a new server generates with `population` patients and the default
 * seed (globalSetup.ts), or undefined when the run has none (or outside a test file).
 */
const defaultTemplate = (population: string | undefined): string | undefined => {
  try {
    if (population === undefined || population === String(DEFAULT_PATIENTS)) return inject("defaultDir")
    return population === String(SERVICE_DEFAULT_PATIENTS) ? inject("serviceDefaultDir") : undefined
  } catch {
    return undefined
  }
}

/** Variables under which a server's first start would make another dataset than a template of the run. */
const OWN_DATASET = ["HCC_SEED", "DATABASE_URL", "HCC_DATA_DIR"]

/** A process's command line, as the kernel has it (Linux). */
export const commandLine = (pid: number): ReadonlyArray<string> => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter((a) => a !== "")

/** Makes a fresh data folder. */
export const tempDataDir = (): string => mkdtempSync(join(tmpdir(), "hcc-test-"))

/** This process's environment, pointed at a target's database (never at a DATABASE_URL it inherited). */
export const dbEnv = (target: DbTarget, extra: Record<string, string> = {}): Record<string, string | undefined> => {
  const env: Record<string, string | undefined> = { ...process.env, ...extra, HCC_DATA_DIR: target.dataDir }
  if (target.databaseUrl === undefined) delete env.DATABASE_URL
  else env.DATABASE_URL = target.databaseUrl
  return env
}

/** Options of a test server. */
export interface ServerOptions {
  /** Environment over the defaults below; undefined removes a variable. */
  readonly env?: Record<string, string | undefined>
  readonly dataDir?: string
  /** Run on this PostgreSQL database instead of SQLite in the data folder. */
  readonly databaseUrl?: string | undefined
  /** Extra arguments: when given, the server runs as `hcc serve <args>` instead of `node src/main.ts`. */
  readonly serveArgs?: ReadonlyArray<string>
  /** Options for node itself (e.g. V8 flags), before the script; by default the server's own (src/nodeFlags.ts), as `npm start` passes them. */
  readonly nodeArgs?: ReadonlyArray<string>
  /**
   * A new data folder starts empty, so the server generates its dataset itself (a test of that
   * first start). Otherwise a new folder gets a copy of the dataset it would generate, with its
   * snapshot (the run makes it once), unless the environment asks for another dataset.
   */
  readonly fresh?: boolean
  /**
   * Run the server as its own process (`node src/main.ts`) even when the server thread would do:
   * for a test of what is per process (its pid, stderr, signals, exit, resources).
   */
  readonly process?: boolean
}

/**
 * Whether a server must be a process of its own rather than run on the server thread
 * (serverThread.ts): asked for; a command line of its own; OpenTelemetry export, compute threads,
 * workers or a metrics listener (per process); or a server on the thread already has its SQLite file.
 */
const needsProcess = (options: ServerOptions, env: Readonly<Record<string, string | undefined>>): boolean =>
  options.process === true ||
  options.serveArgs !== undefined || options.nodeArgs !== undefined ||
  Object.keys(env).some((k) => k.startsWith("OTEL_") && env[k] !== undefined) ||
  env.HCC_THREADS !== "0" || (env.HCC_WORKERS ?? "1") !== "1" || env.HCC_METRICS_PORT !== undefined ||
  (env.DATABASE_URL === undefined && threadDataDirs.has(resolve(env.HCC_DATA_DIR!)))

/** The data folders of the servers running on the thread (SQLite ones). */
const threadDataDirs = new Set<string>()

/** Starts the service with the given environment (on the server thread, or `node src/main.ts`); rejects if it exits before listening. */
export const startServer = (options: ServerOptions = {}): Promise<TestServer> => {
  const template = options.dataDir !== undefined || options.fresh === true || options.databaseUrl !== undefined || OWN_DATASET.some((v) => options.env?.[v] !== undefined)
    ? undefined
    : defaultTemplate(options.env?.HCC_POPULATION)
  const dataDir = options.dataDir ?? (template === undefined ? tempDataDir() : copyTemplate(template, tempDataDir()))
  const target: DbTarget = { dataDir, databaseUrl: options.databaseUrl }
  // A small default population keeps start-up cheap for tests that do not query the data; no
  // compute threads unless a test asks (many servers share this machine's cores during a run),
  // and those at nice, not in the idle class: with both cores busy, idle-class threads run only
  // when a core is free, so a thread's start would wait on the other test files. A test of the
  // default passes HCC_COMPUTE_PRIORITY: undefined.
  const env = { ...dbEnv(target, { PORT: "0", HOST: "127.0.0.1", HCC_LOG_LEVEL: "info", HCC_POPULATION: String(DEFAULT_PATIENTS), HCC_THREADS: "0", HCC_COMPUTE_PRIORITY: "nice" }), ...options.env }
  if (!needsProcess(options, env)) {
    const folder = env.DATABASE_URL === undefined ? resolve(env.HCC_DATA_DIR!) : undefined
    if (folder !== undefined) threadDataDirs.add(folder)
    const server = serveOnThread(env)
    const exited = server.exited.then((code) => {
      if (folder !== undefined) threadDataDirs.delete(folder)
      return code
    })
    return whenListening(target, server.output, () => "", exited, (signal) => {
      if (signal !== "SIGTERM" && signal !== "SIGINT") throw new Error(`a server on the thread stops only as SIGTERM and SIGINT stop a process; start it with process: true for ${signal}`)
      server.stop()
    }, undefined)
  }
  const args = options.serveArgs === undefined ? [join(ROOT, "src/main.ts")] : [join(ROOT, "src/cli.ts"), "serve", ...options.serveArgs]
  const child = spawn(process.execPath, [...(options.nodeArgs ?? SERVER_NODE_FLAGS), ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  let err = ""
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d))
  const exited = new Promise<number | null>((res) => child.on("exit", (code) => res(code)))
  return whenListening(target, () => out, () => err, exited, (signal) => {
    if (child.exitCode === null) child.kill(signal)
  }, child)
}

/** The test's handle on a started server, once its log says it listens; rejects if it ends first. */
const whenListening = (
  target: DbTarget,
  stdout: () => string,
  stderr: () => string,
  exited: Promise<number | null>,
  signal: (signal: NodeJS.Signals) => void,
  child: ChildProcess | undefined
): Promise<TestServer> => {
  const logLines = () =>
    stdout().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>)
  return new Promise((resolvePromise, reject) => {
    const timer = setInterval(() => {
      const listening = logLines().find((l) => l.msg === "listening")
      if (listening !== undefined) {
        clearInterval(timer)
        const demoFile = join(target.dataDir, "demo.token")
        let stopped = false
        void exited.then(() => (stopped = true))
        resolvePromise({
          url: `http://127.0.0.1:${String(listening.port)}`,
          dataDir: target.dataDir,
          databaseUrl: target.databaseUrl,
          demoToken: existsSync(demoFile) ? readFileSync(demoFile, "utf8").trim() : "",
          stdout,
          stderr,
          logLines,
          stop: (sig = "SIGTERM") => {
            if (!stopped) signal(sig)
            return exited
          },
          child
        })
      }
    }, 20)
    void exited.then((code) => {
      clearInterval(timer)
      reject(new Error(`server exited with ${String(code)} before listening:\n${stdout()}\n${stderr()}`))
    })
  })
}

/** Runs the service process to completion (for start-up failures); returns exit code and output. */
export const runServerToExit = (env: Record<string, string>) => {
  const r = spawnSync(process.execPath, [join(ROOT, "src/main.ts")], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", HCC_DATA_DIR: tempDataDir(), HCC_POPULATION: "1000", HCC_THREADS: "0", ...env },
    encoding: "utf8",
    timeout: 30_000
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A data folder (SQLite) or a server or target with its database. */
export type Target = string | DbTarget

const targetOf = (t: Target): DbTarget => (typeof t === "string" ? { dataDir: t } : t)

/**
 * Runs `hcc <args>` against a target's database and returns stdout (throws on a non-zero exit): a
 * test's arrangement, run on this process's command thread (cliThread.ts: the same commands
 * without a process start each). `runHcc` runs the `hcc` process itself.
 */
export const hcc = (target: Target, args: ReadonlyArray<string>): string => {
  const r = tryHcc(target, args)
  if (r.status !== 0) throw new Error(`hcc ${args.join(" ")} exited ${String(r.status)}: ${r.stderr}${r.stdout}`)
  return r.stdout
}

/** `hcc <args>` on this process's command thread (as `hcc`): exit code and output, whatever the outcome. */
export const tryHcc = (target: Target, args: ReadonlyArray<string>) => hccOnThread(args, dbEnv(targetOf(target)))

/** Runs the `hcc <args>` process against a target's database; returns exit code and output whatever the outcome. */
export const runHcc = (target: Target, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), ...args], {
    cwd: ROOT,
    env: dbEnv(targetOf(target)),
    encoding: "utf8",
    timeout: 120_000
  })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** Creates an account through the CLI and issues it a token; returns both ids and the token. */
export const newAccount = (
  target: Target,
  opts: { readonly tier: string; readonly dailyLimit?: number; readonly burstLimit?: number }
): { readonly accountId: string; readonly tokenId: string; readonly token: string } => {
  // Account names are unique: each test account gets its own.
  const args = ["accounts", "create", "--name", `test-${opts.tier}-${randomUUID().slice(0, 8)}`, "--tier", opts.tier, "--token", "test", "--json"]
  if (opts.dailyLimit !== undefined) args.push("--daily-limit", String(opts.dailyLimit))
  if (opts.burstLimit !== undefined) args.push("--burst-limit", String(opts.burstLimit))
  const account = JSON.parse(hcc(target, args)) as { id: string; token: { id: string; token: string } }
  return { accountId: account.id, tokenId: account.token.id, token: account.token.token }
}

/** A fetch with the bearer token and JSON content type. */
export const call = (
  server: TestServer,
  path: string,
  init: {
    readonly method?: string
    readonly token?: string | null
    readonly body?: unknown
    readonly headers?: Record<string, string>
    /** Give up (reject) after this long, as a client with a timeout would. */
    readonly timeoutMs?: number
  } = {}
): Promise<Response> => {
  const headers: Record<string, string> = { ...init.headers }
  const token = init.token === undefined ? server.demoToken : init.token
  if (token !== null) headers.authorization = `Bearer ${token}`
  let body: string | undefined
  if (init.body !== undefined) {
    body = typeof init.body === "string" ? init.body : JSON.stringify(init.body)
    headers["content-type"] ??= "application/json"
  }
  return fetch(server.url + path, {
    method: init.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    ...(body === undefined ? {} : { body }),
    ...(init.timeoutMs === undefined ? {} : { signal: AbortSignal.timeout(init.timeoutMs) })
  })
}

/** Path of a fixture plugin module, as HCC_PLUGINS takes it. */
export const fixturePlugin = (name: string): string => `./test/fixtures/plugins/${name}.ts`
