/**
 * A service process for the benches that start servers of their own (bench:scale, bench:peer):
 * started from a checkout's `src/main.ts` with the server's Node flags, its log read line by line,
 * resolved once it listens.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, renameSync } from "node:fs"
import { join } from "node:path"
import { SERVER_NODE_FLAGS } from "../src/nodeFlags.ts"

/** A log line's message and its fields. */
export type LogLine = { readonly msg: string } & Record<string, unknown>

/**
 * Starts `root`'s server (PORT 0, HOST 127.0.0.1, info logs, `env` added) and resolves with the
 * child and its port once it logs `listening`; `onLine` hears every log line (JSON) meanwhile and
 * after. Only the lines the caller asks about are parsed; nothing is kept.
 */
export const spawnService = (root: string, env: Record<string, string>, onLine: (line: LogLine) => void = () => {}) => {
  const child: ChildProcess = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(root, "src/main.ts")], {
    cwd: root,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", HCC_LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "inherit"]
  })
  const port = new Promise<number>((resolve, reject) => {
    let pending = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      const lines = (pending + d).split("\n")
      pending = lines.pop()!
      for (const text of lines) {
        if (!text.startsWith("{")) continue
        const line = JSON.parse(text) as LogLine
        if (line.msg === "listening") resolve(Number(line["port"]))
        onLine(line)
      }
    })
    child.on("exit", (code) => reject(new Error(`the service exited (${code}) before listening`)))
  })
  return port.then((p) => ({ child, port: p }))
}

/** Stops a service process (SIGTERM) and waits for it to exit. */
export const stopService = async (child: ChildProcess) => {
  child.kill("SIGTERM")
  await new Promise((r) => child.on("exit", r))
}

/** Which server a row is of: this checkout's, or the `--baseline` one's. */
export type Side = "this" | "baseline"

/**
 * Runs `run` with `side`'s snapshot in place (`dataset.snapshot`), then keeps whatever snapshot it
 * left as `side`'s: the two checkouts' files never meet (each would refuse the other's format).
 */
export const withSnapshotOf = async <A>(dataDir: string, side: Side, run: () => Promise<A>): Promise<A> => {
  const file = join(dataDir, "dataset.snapshot")
  const kept = `${file}.${side}`
  if (existsSync(kept)) renameSync(kept, file)
  try {
    return await run()
  } finally {
    if (existsSync(file)) renameSync(file, kept)
  }
}
