/**
 * `npm run bench:load -- <patients…>`: for each population size, generates the dataset (timed, by
 * the CLI) and then starts the service on it, measuring how it starts: time from
 * start to ready, the slowest `/readyz` answer while it loads (polled every 10 ms — how long the
 * event loop was held), and the resident memory once ready. Defaults: 50,000 and 200,000 patients.
 *
 * `runLoadBench` is exported for harnesses; this file is also the CLI.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { SERVER_NODE_FLAGS } from "../src/nodeFlags.ts"

const ROOT = resolve(import.meta.dirname, "..")

/** One population size, measured. */
export interface LoadBenchRow {
  readonly patients: number
  readonly generateSeconds: number
  readonly readySeconds: number
  readonly worstReadyzMs: number
  readonly rssMiB: number
}

const rssMiB = (pid: number): number => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN) / 1024)
}

/** Generates, then starts and watches the service, for one population size. */
export const measureLoad = async (patients: number): Promise<LoadBenchRow> => {
  const dataDir = mkdtempSync(join(tmpdir(), "hcc-load-"))
  try {
    const g0 = performance.now()
    const gen = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), "data", "generate", "--patients", String(patients)], {
      env: { ...process.env, HCC_DATA_DIR: dataDir },
      encoding: "utf8"
    })
    if (gen.status !== 0) throw new Error(gen.stderr)
    const generateSeconds = (performance.now() - g0) / 1000
    const t0 = performance.now()
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(ROOT, "src/main.ts")], {
      env: { ...process.env, HCC_DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1", HCC_LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "inherit"]
    })
    let out = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
    try {
      let port: unknown
      while (port === undefined) {
        await new Promise((r) => setTimeout(r, 5))
        port = out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "listening")?.port
      }
      let worst = 0
      for (;;) {
        const a = performance.now()
        const res = await fetch(`http://127.0.0.1:${String(port)}/readyz`)
        await res.arrayBuffer()
        worst = Math.max(worst, performance.now() - a)
        if (res.status === 200) break
        await new Promise((r) => setTimeout(r, 10))
      }
      return { patients, generateSeconds, readySeconds: (performance.now() - t0) / 1000, worstReadyzMs: worst, rssMiB: rssMiB(child.pid!) }
    } finally {
      child.kill("SIGTERM")
      await new Promise((r) => child.on("exit", r))
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
  }
}

export const runLoadBench = async (sizes: ReadonlyArray<number>): Promise<ReadonlyArray<LoadBenchRow>> => {
  const rows: Array<LoadBenchRow> = []
  for (const n of sizes) rows.push(await measureLoad(n))
  return rows
}

export const formatLoadBench = (rows: ReadonlyArray<LoadBenchRow>): string =>
  [
    "| patients | generate s | start to ready s | worst /readyz while loading ms | RSS ready MiB |",
    "|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.patients.toLocaleString("en-US")} | ${r.generateSeconds.toFixed(1)} | ${r.readySeconds.toFixed(2)} | ${r.worstReadyzMs.toFixed(0)} | ${r.rssMiB} |`)
  ].join("\n")

if (import.meta.main) {
  const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
  const rows = await runLoadBench(sizes.length > 0 ? sizes : [50_000, 200_000])
  console.log(`node ${process.version}\n`)
  console.log(formatLoadBench(rows))
}
