/**
 * A thread of the test file's process that runs test servers: `serveWith` (src/main.ts), each on its
 * own settings (an environment record read through its own ConfigProvider) and with its own log,
 * each in its own fiber. A server process loads the whole module graph and warms up anew at every
 * start; here the graph is loaded once, and each later start costs only the server's own start-up.
 *
 * One thing differs from a served process: passwords are hashed at a lower cost (TEST_PASSWORD_WORK).
 *
 * What stays per process, and so makes a test start a process instead (server.ts decides): node
 * flags, signals other than SIGTERM and SIGINT, `--workers`, compute threads, the metrics registry
 * and its listener, OpenTelemetry export (read from the process's environment), and two servers on
 * one SQLite file at once (a write waiting for the other's lock would block the thread both run on).
 *
 * The thread starts with the first server and ends with the test file's process (it is unref'd).
 */
import { parentPort, Worker, workerData } from "node:worker_threads"

/** A message to the thread. */
type Command =
  | { readonly type: "start"; readonly id: number; readonly env: Readonly<Record<string, string>> }
  | { readonly type: "stop"; readonly id: number }

/** A message from the thread: log text of a server, or how it ended (the exit code its process would have had). */
type Report =
  | { readonly type: "out"; readonly id: number; readonly text: string }
  | { readonly type: "exit"; readonly id: number; readonly code: number }

/** Marks the server thread (workerData). */
const SERVER_THREAD = "hcc-server-thread"

/**
 * scrypt's cost exponent for the passwords these servers hash: 2^12 (4 MiB, 1/32 of the work)
 * instead of OWASP's 2^17 (128 MiB), the portal's tests signing up and in dozens of times. A hash
 * carries its parameters, so nothing else changes; a server process hashes at 2^17
 * (processes.test), and clock.test holds hashPassword's default to it.
 */
const TEST_PASSWORD_WORK = 12

if (workerData === SERVER_THREAD && parentPort !== null) {
  const port = parentPort
  const [{ serveWith, teardown }, { PasswordWork }, ConfigProvider, Effect, Fiber] = await Promise.all([
    import("../../src/main.ts"),
    import("../../src/portal/passwords.ts"),
    import("effect/ConfigProvider"),
    import("effect/Effect"),
    import("effect/Fiber")
  ])
  const running = new Map<number, { readonly interrupt: () => void }>()
  port.on("message", (command: Command) => {
    if (command.type === "stop") {
      running.get(command.id)?.interrupt()
      return
    }
    const { id, env } = command
    // Lines written in one event-loop turn go as one message, as the process's log sink writes them.
    let pending = ""
    const flush = () => {
      if (pending === "") return
      port.postMessage({ type: "out", id, text: pending } satisfies Report)
      pending = ""
    }
    const write = (line: string) => {
      if (pending === "") setImmediate(flush)
      pending += line + "\n"
    }
    const fiber = Effect.runFork(serveWith({ write }).pipe(
      Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })),
      Effect.provideService(PasswordWork, TEST_PASSWORD_WORK)
    ))
    running.set(id, { interrupt: () => void Effect.runFork(Fiber.interrupt(fiber)) })
    fiber.addObserver((exit) => {
      running.delete(id)
      // After the last lines, as a process's exit follows its output.
      setImmediate(() => {
        flush()
        teardown(exit, (code) => port.postMessage({ type: "exit", id, code } satisfies Report))
      })
    })
  })
}

/** A server on the thread, as the test sees it. */
export interface ThreadServer {
  /** Everything it has logged so far. */
  readonly output: () => string
  /** Resolves with its exit code once it has stopped (by `stop` or by failing). */
  readonly exited: Promise<number>
  /** Stops it as SIGTERM would stop its process. */
  readonly stop: () => void
}

let thread: Worker | undefined
let nextId = 0
const servers = new Map<number, { append: (text: string) => void; exit: (code: number) => void }>()

/** Starts a server on this process's server thread with the environment `env`. */
export const serveOnThread = (env: Readonly<Record<string, string | undefined>>): ThreadServer => {
  if (thread === undefined) {
    thread = new Worker(new URL(import.meta.url), { workerData: SERVER_THREAD })
    thread.unref()
    thread.on("message", (report: Report) => {
      const server = servers.get(report.id)
      if (report.type === "out") server?.append(report.text)
      else {
        servers.delete(report.id)
        server?.exit(report.code)
      }
    })
    // A thread that dies (an uncaught error) takes its servers with it, as a process would: each
    // ends with exit code 1, and the next server starts another thread.
    thread.on("exit", () => {
      thread = undefined
      for (const [id, server] of servers) {
        servers.delete(id)
        server.exit(1)
      }
    })
  }
  const id = nextId++
  let out = ""
  let exit!: (code: number) => void
  const exited = new Promise<number>((resolve) => (exit = resolve))
  servers.set(id, { append: (text) => (out += text), exit })
  const defined = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))
  thread.postMessage({ type: "start", id, env: defined } satisfies Command)
  const worker = thread
  return { output: () => out, exited, stop: () => worker.postMessage({ type: "stop", id } satisfies Command) }
}
