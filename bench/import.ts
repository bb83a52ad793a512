/**
 * `npm run bench:import [-- --patients N] [--gzip]`: import throughput, side by side in one run.
 * A generated dataset (50,000 patients unless given) is exported as CSV and as FHIR R4 Bulk Data
 * (`hcc data export --format fhir`), and each export is imported into an empty data folder by the
 * CLI, as an operator runs it: wall time, CPU time (so cores used), peak resident memory of the
 * importing process (sampled from /proc), bytes read, throughput, and the FHIR import's ratio to
 * the CSV one. Prints a table; nothing is asserted.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { gunzipSync } from "node:zlib"

const ROOT = resolve(import.meta.dirname, "..")
const CLI = join(ROOT, "src/cli.ts")

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : process.argv[i + 1]
}
const patients = Number(arg("patients") ?? 50_000)
const gzip = process.argv.includes("--gzip")

const hcc = (dataDir: string, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, HCC_DATA_DIR: dataDir }, encoding: "utf8", maxBuffer: 1 << 26 })
  if (r.status !== 0) throw new Error(`hcc ${args.join(" ")}: ${r.stderr}`)
  return r.stdout
}

/** Bytes of a folder's files, as stored and uncompressed. */
const sizeOf = (folder: string) => {
  let stored = 0
  let raw = 0
  for (const f of readdirSync(folder)) {
    const bytes = statSync(join(folder, f)).size
    stored += bytes
    raw += f.endsWith(".gz") ? gunzipSync(readFileSync(join(folder, f))).length : bytes
  }
  return { stored, raw }
}

/** Runs an import as a child process; samples its RSS; returns wall and CPU seconds and peak RSS (and how it failed, if it did). */
const timedImport = (args: ReadonlyArray<string>) =>
  new Promise<{ readonly wall: number; readonly cpu: number; readonly peakMiB: number; readonly failed?: string }>((resolvePromise) => {
    const dataDir = mkdtempSync(join(tmpdir(), "hcc-bench-import-"))
    const started = performance.now()
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, HCC_DATA_DIR: dataDir }, stdio: ["ignore", "ignore", "pipe"] })
    let err = ""
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (err += d))
    let peak = 0
    let cpu = 0
    const ticks = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim() || 100)
    const sample = setInterval(() => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, "utf8")
        peak = Math.max(peak, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024)
        const stat = readFileSync(`/proc/${child.pid}/stat`, "utf8")
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        cpu = (Number(fields[11]) + Number(fields[12])) / ticks
      } catch {
        // The process has just ended.
      }
    }, 100)
    child.on("exit", (code, signal) => {
      clearInterval(sample)
      rmSync(dataDir, { recursive: true, force: true })
      const measured = { wall: (performance.now() - started) / 1000, cpu, peakMiB: Math.round(peak) }
      // An import killed for memory (no swap: the kernel's OOM killer) says so in its row.
      if (code !== 0) resolvePromise({ ...measured, failed: signal !== null ? `killed by ${signal}` : (err.trim().split("\n").at(-1) ?? `exit ${code}`) })
      else resolvePromise(measured)
    })
  })

const main = async () => {
  const source = mkdtempSync(join(tmpdir(), "hcc-bench-source-"))
  const csv = join(source, "csv")
  const fhir = join(source, "fhir")
  console.log(`bench:import — ${patients.toLocaleString("en")} patients, ${availableParallelism()} cores, Node ${process.version}`)
  let t = performance.now()
  hcc(source, ["data", "generate", "--patients", String(patients)])
  console.log(`generated in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  t = performance.now()
  hcc(source, ["data", "export", csv])
  console.log(`CSV export in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  t = performance.now()
  hcc(source, ["data", "export", "--format", "fhir", ...(gzip ? ["--gzip"] : []), fhir])
  console.log(`FHIR export${gzip ? " (gzip)" : ""} in ${((performance.now() - t) / 1000).toFixed(1)} s`)

  const rows: Array<{ readonly name: string; readonly bytes: { readonly stored: number; readonly raw: number }; readonly r: Awaited<ReturnType<typeof timedImport>> }> = []
  rows.push({ name: "CSV tables", bytes: sizeOf(csv), r: await timedImport(["data", "import", csv]) })
  rows.push({ name: `FHIR Bulk NDJSON${gzip ? " (gzip)" : ""}`, bytes: sizeOf(fhir), r: await timedImport(["data", "import", "--format", "fhir", fhir]) })
  rmSync(source, { recursive: true, force: true })

  const mib = (b: number) => b / 1_048_576
  console.log("")
  console.log("| import | files MiB (stored / uncompressed) | wall s | CPU s | cores used | MiB/s (uncompressed) | MiB/s per core | peak RSS MiB | × CSV's wall time |")
  console.log("|---|---|---|---|---|---|---|---|---|")
  const base = rows[0]!.r.failed === undefined ? rows[0]!.r.wall : Number.NaN
  for (const { name, bytes, r } of rows) {
    const cores = r.cpu / r.wall
    if (r.failed !== undefined) {
      console.log(`| ${name} | ${mib(bytes.stored).toFixed(0)} / ${mib(bytes.raw).toFixed(0)} | failed after ${r.wall.toFixed(1)} s: ${r.failed} | ${r.cpu.toFixed(1)} | | | | ${r.peakMiB} | |`)
      continue
    }
    console.log(`| ${name} | ${mib(bytes.stored).toFixed(0)} / ${mib(bytes.raw).toFixed(0)} | ${r.wall.toFixed(1)} | ${r.cpu.toFixed(1)} | ${cores.toFixed(2)} | ${(mib(bytes.raw) / r.wall).toFixed(1)} | ${(mib(bytes.raw) / r.cpu).toFixed(1)} | ${r.peakMiB} | ${Number.isNaN(base) ? "—" : (r.wall / base).toFixed(2)} |`)
  }
}

await main()
