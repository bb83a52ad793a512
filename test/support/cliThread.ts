/**
 * A thread of the test file's process that runs `hcc` commands (src/cli.ts's `runCli`): the same
 * commands as the `hcc` process, without a process start for each (each start loads the command
 * line's module graph anew, the larger part of a short command's time). `hccOnThread` sends it a
 * command and blocks until the command has ended, as spawnSync does for a process, so a test's
 * arrangement reads the same either way.
 *
 * The thread starts on the first command and ends with the test file's process (it is unref'd).
 */
import { MessageChannel, type MessagePort, parentPort, receiveMessageOnPort, Worker, workerData } from "node:worker_threads"

/** A command for the thread: its arguments and environment, the flag it sets when done, the port it answers on. */
interface Request {
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly done: Int32Array
  readonly reply: MessagePort
}

/** A command's end, as a finished process's: exit code and everything written on stdout and stderr. */
export interface CommandResult {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/** Marks the command thread (workerData): a test file's own threads, if any, are not it. */
const COMMAND_THREAD = "hcc-command-thread"

if (workerData === COMMAND_THREAD && parentPort !== null) {
  const { runCli } = await import("../../src/cli.ts")
  // One command at a time: the caller is blocked until its command has answered.
  let queue = Promise.resolve()
  parentPort.on("message", (request: Request) => {
    queue = queue.then(async () => {
      let stdout = ""
      let stderr = ""
      let status: number
      try {
        status = await runCli(request.args, { env: request.env, out: (t) => (stdout += t), err: (t) => (stderr += t) })
      } catch (e) {
        status = 1
        stderr += e instanceof Error ? e.stack ?? e.message : String(e)
      }
      request.reply.postMessage({ status, stdout, stderr } satisfies CommandResult)
      request.reply.close()
      Atomics.store(request.done, 0, 1)
      Atomics.notify(request.done, 0)
    })
  })
}

let thread: Worker | undefined

/**
 * Runs `hcc <args>` with the environment `env` on this process's command thread and returns how it
 * ended; throws when it has not ended within `timeoutMs` (the thread is then ended, and the next
 * command starts another).
 */
export const hccOnThread = (args: ReadonlyArray<string>, env: Readonly<Record<string, string | undefined>>, timeoutMs = 120_000): CommandResult => {
  if (thread === undefined) {
    thread = new Worker(new URL(import.meta.url), { workerData: COMMAND_THREAD })
    thread.unref()
  }
  const done = new Int32Array(new SharedArrayBuffer(4))
  const { port1, port2 } = new MessageChannel()
  thread.postMessage({ args, env, done, reply: port2 } satisfies Request, [port2])
  if (Atomics.wait(done, 0, 0, timeoutMs) === "timed-out") {
    void thread.terminate()
    thread = undefined
    throw new Error(`hcc ${args.join(" ")} did not end within ${timeoutMs / 1000} s`)
  }
  const answer = receiveMessageOnPort(port1)
  port1.close()
  if (answer === undefined) throw new Error(`hcc ${args.join(" ")} ended without an answer`)
  return answer.message as CommandResult
}
