/**
 * The processes a bench starts: the server and the CLI, each in a temporary data folder removed
 * when the bench exits.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { SERVER_NODE_FLAGS } from "../src/nodeFlags.ts"

const ROOT = resolve(import.meta.dirname, "..")

/** The temporary folders made by benchDir, removed (by one exit listener) when the bench process exits. */
const benchDirs: Array<string> = []

/** A fresh temporary folder for a bench's data, removed when the bench process exits. */
export const benchDir = (prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  if (benchDirs.push(dir) === 1) process.once("exit", () => benchDirs.forEach((d) => rmSync(d, { recursive: true, force: true })))
  return dir
}

/** Starts a server process (with the server's node flags unless told otherwise) and resolves once it logs its port. */
export const startProcess = (args: ReadonlyArray<string>, env: Record<string, string>, nodeArgs: ReadonlyArray<string> = SERVER_NODE_FLAGS, cwd = ROOT): Promise<{ child: ChildProcess; port: number; early: string }> =>
  new Promise((res, rej) => {
    const child = spawn(process.execPath, [...nodeArgs, ...args], { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] })
    let buffered = ""
    const onData = (d: Buffer) => {
      buffered += d.toString()
      for (const line of buffered.split("\n")) {
        if (!line.startsWith("{")) continue
        const parsed = JSON.parse(line) as { msg?: string; port?: number }
        if (parsed.msg === "listening" && parsed.port !== undefined) {
          child.stdout!.off("data", onData)
          child.stdout!.resume() // keep draining the request log so the pipe never blocks the server
          return res({ child, port: parsed.port, early: buffered })
        }
      }
    }
    child.stdout!.on("data", onData)
    child.on("exit", (code) => rej(new Error(`${args.join(" ")} exited with ${String(code)}`)))
  })

/** Runs `hcc <args> --json` and parses its output. */
export const hcc = (dataDir: string, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), ...args], { cwd: ROOT, env: { ...process.env, HCC_DATA_DIR: dataDir }, encoding: "utf8" })
  if (r.status !== 0) throw new Error(r.stderr)
  return JSON.parse(r.stdout) as Record<string, string>
}
