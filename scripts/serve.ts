/**
 * Starts `node src/main.ts` for a script (on a fresh data folder unless given one): resolves once it
 * listens, with its base URL, its data folder and a stop function.
 */
import { spawn } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"

export const ROOT = resolve(import.meta.dirname, "..")

export const startService = async (env: Record<string, string>): Promise<{ readonly base: string; readonly dataDir: string; readonly stop: () => void }> => {
  const dataDir = env.HCC_DATA_DIR ?? mkdtempSync(join(tmpdir(), "hcc-script-"))
  const child = spawn(process.execPath, [join(ROOT, "src/main.ts")], {
    cwd: ROOT,
    env: { ...process.env, PORT: "0", HOST: "127.0.0.1", HCC_LOG_LEVEL: "info", ...env, HCC_DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "inherit"]
  })
  let out = ""
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
  const port = await new Promise<number>((ok, fail) => {
    child.once("exit", (code) => fail(new Error(`the server exited (${String(code)}) before listening`)))
    const timer = setInterval(() => {
      const line = out.split("\n").find((l) => l.includes('"msg":"listening"'))
      if (line !== undefined) {
        clearInterval(timer)
        ok(Number(JSON.parse(line).port))
      }
    }, 50)
  })
  return { base: `http://127.0.0.1:${port}`, dataDir, stop: () => child.kill("SIGTERM") }
}
