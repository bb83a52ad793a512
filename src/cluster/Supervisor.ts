/**
 * `--workers N`: the primary process forks N copies of the server (node:cluster), which share the
 * listening port; the primary serves nothing itself. Each worker is a whole server — its own
 * dataset copy, its own connection to the database — and the limits stay exact across them because
 * they are decided in the database (docs/api.md, "Limits across processes").
 *
 * The primary replaces a worker that dies while serving (after {@link RESTART_DELAY_MS}), stops
 * everything if a worker dies before it ever listened (a start-up failure would only repeat), and
 * on SIGTERM/SIGINT passes SIGTERM on to every worker and exits once they have drained.
 */
import * as Effect from "effect/Effect"
import cluster, { type Worker } from "node:cluster"
import { missingServerFlags } from "../nodeFlags.ts"

/** Pause before a dead worker is replaced, so a crash loop cannot spin. */
export const RESTART_DELAY_MS = 1000

/** Whether this process is a worker forked by the supervisor. */
export const isWorker = (): boolean => cluster.isWorker

/** Why the cluster stopped on its own. */
export class ClusterFailed extends Error {}

/**
 * Forks `workers` servers and keeps them running until interrupted; then stops them (SIGTERM) and
 * waits up to `graceSeconds` + 5 s for them to exit, killing the rest.
 */
export const supervise = (workers: number, graceSeconds: number): Effect.Effect<void, ClusterFailed> =>
  Effect.gen(function*() {
    const listened = new WeakSet<Worker>()
    let stopping = false
    // Every worker runs with the server's node flags, whether or not this process was started with them.
    cluster.setupPrimary({ execArgv: [...process.execArgv, ...missingServerFlags()] })
    const fork = () => cluster.fork()
    const runFork = Effect.runForkWith(yield* Effect.context<never>())
    yield* Effect.logInfo("starting workers").pipe(Effect.annotateLogs({ workers }))

    const run = Effect.callback<void, ClusterFailed>((resume) => {
      const onListening = (worker: Worker) => void listened.add(worker)
      const onExit = (worker: Worker, code: number | null, signal: string | null) => {
        if (stopping) return
        if (!listened.has(worker)) {
          resume(Effect.fail(new ClusterFailed(`worker ${worker.process.pid} exited (${signal ?? code}) before it listened; stopping`)))
          return
        }
        runFork(Effect.logWarning("worker exited; starting another").pipe(
          Effect.annotateLogs({ pid: worker.process.pid, code, signal })
        ))
        setTimeout(() => stopping || fork(), RESTART_DELAY_MS)
      }
      cluster.on("listening", onListening)
      cluster.on("exit", onExit)
      for (let i = 0; i < workers; i++) fork()
      return Effect.sync(() => {
        cluster.off("listening", onListening)
        cluster.off("exit", onExit)
      })
    })

    const stopAll = Effect.callback<void>((resume) => {
      stopping = true
      const alive = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead())
      const check = () => {
        if (alive().length === 0) {
          clearTimeout(deadline)
          cluster.off("exit", check)
          resume(Effect.void)
        }
      }
      const deadline = setTimeout(() => {
        for (const w of alive()) w.process.kill("SIGKILL")
      }, (graceSeconds + 5) * 1000)
      cluster.on("exit", check)
      for (const w of alive()) w.process.kill("SIGTERM")
      check()
    })

    yield* run.pipe(Effect.ensuring(stopAll))
  })
