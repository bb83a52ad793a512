/**
 * `npm run bench:import [-- --patients N] [--gzip] [--parquet] [--formats csv,fhir,omop|none] [--csv <folder>] [--omop <folder>] [--athena] [--baseline=<checkout>]`:
 * import throughput, side by side in one run. A generated dataset (50,000 patients unless given) is
 * exported as CSV, as FHIR R4 Bulk Data (gzip'd with --gzip) and as OMOP CDM 5.4 (Parquet with
 * --parquet), and each export is imported into an empty data folder by the CLI, as an operator runs it: wall
 * time, CPU time (so cores used), peak resident memory of the importing process (sampled from
 * /proc), bytes read, throughput. `--csv` and `--omop` add a folder of your own (with `--formats none`,
 * nothing is generated: at ten million, generating and exporting take longer than the import);
 * `--athena` puts beside each OMOP folder's vocabulary one of Athena's row counts (7 million
 * concepts, 50 million relationships, 80 million ancestors, none of them used by the data: what a
 * full vocabulary download costs an import), made by DuckDB. Beside each import, the floor: DuckDB
 * merely reading the same files (`SELECT count(*)`, every core). `--baseline=<checkout>` imports the
 * same files with that checkout's CLI too, in turn with this one's, and prints both side by side with
 * their ratio. Prints a table; nothing is asserted.
 */
import { DuckDBInstance } from "@duckdb/node-api"
import { spawn, spawnSync } from "node:child_process"
import { closeSync, copyFileSync, createReadStream, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { createGunzip } from "node:zlib"

const ROOT = resolve(import.meta.dirname, "..")
const CLI = join(ROOT, "src/cli.ts")

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`)
  return i < 0 ? undefined : process.argv[i + 1]
}
const patients = Number(arg("patients") ?? 50_000)
const gzip = process.argv.includes("--gzip")
const parquet = process.argv.includes("--parquet")
const formats = (arg("formats") ?? "csv,fhir,omop").split(",")
const omop = arg("omop")
const ownCsv = arg("csv")
const athena = process.argv.includes("--athena")
const baselineArg = process.argv.find((a) => a.startsWith("--baseline="))
const baseline = baselineArg === undefined ? undefined : resolve(baselineArg.slice("--baseline=".length))
if (baseline !== undefined && !existsSync(join(baseline, "src/cli.ts"))) throw new Error(`--baseline=${baseline}: not a checkout of this service (no src/cli.ts)`)

const hcc = (dataDir: string, args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, HCC_DATA_DIR: dataDir }, encoding: "utf8", maxBuffer: 1 << 26 })
  if (r.status !== 0) throw new Error(`hcc ${args.join(" ")}: ${r.stderr}`)
  return r.stdout
}

/** Bytes a gzip'd file holds, counted as it streams through gunzip (never held whole). */
const gunzippedSize = (path: string) =>
  new Promise<number>((resolvePromise, reject) => {
    let n = 0
    createReadStream(path).pipe(createGunzip()).on("data", (chunk: Buffer) => (n += chunk.length)).on("end", () => resolvePromise(n)).on("error", reject)
  })

/** Bytes of a folder's files, as stored and uncompressed. */
const sizeOf = async (folder: string) => {
  let stored = 0
  let raw = 0
  for (const f of readdirSync(folder)) {
    const bytes = statSync(join(folder, f)).size
    stored += bytes
    raw += f.endsWith(".gz") ? await gunzippedSize(join(folder, f)) : bytes
  }
  return { stored, raw }
}

const literal = (s: string) => `'${s.replaceAll("'", "''")}'`

/** Seconds DuckDB (every core) takes to count the rows of every file of a folder: the floor of merely reading them. */
const duckdbFloor = async (folder: string): Promise<number> => {
  const instance = await DuckDBInstance.create(":memory:", { threads: String(availableParallelism()) })
  const c = await instance.connect()
  const started = performance.now()
  for (const f of readdirSync(folder).sort()) {
    const path = literal(join(folder, f))
    if (/\.ndjson(\.gz)?$/.test(f)) await c.run(`SELECT count(*) FROM read_ndjson_objects(${path})`)
    else if (/\.parquet$/.test(f)) await c.run(`SELECT count(*) FROM read_parquet(${path})`)
    else if (/\.(csv|tsv)(\.gz)?$/i.test(f)) {
      const head = Buffer.alloc(4096)
      const fd = openSync(join(folder, f), "r")
      readSync(fd, head, 0, head.length, 0)
      closeSync(fd)
      const tab = head.toString("utf8").split("\n")[0]!.includes("\t")
      await c.run(`SELECT count(*) FROM read_csv(${path}, header = true, all_varchar = true, delim = ${literal(tab ? "\t" : ",")}, quote = ${literal(tab ? "" : '"')}, null_padding = true, strict_mode = false)`)
    }
  }
  const seconds = (performance.now() - started) / 1000
  c.closeSync()
  instance.closeSync()
  return seconds
}

/** A copy of an OMOP folder with a vocabulary of Athena's row counts beside its own (none of it used by the data). */
const withAthenaVocabulary = async (from: string, to: string): Promise<string> => {
  mkdirSync(to, { recursive: true })
  for (const f of readdirSync(from)) if (statSync(join(from, f)).isFile()) copyFileSync(join(from, f), join(to, f))
  const instance = await DuckDBInstance.create(":memory:", { threads: String(availableParallelism()) })
  const c = await instance.connect()
  const tsv = "(DELIMITER '\t', HEADER, QUOTE '')"
  const id = (expr: string) => `10000000000 + (${expr}) % 7000000`
  await c.run(`COPY (SELECT 10000000000 + range AS concept_id, 'Athena-size concept ' || range AS concept_name, 'Condition' AS domain_id,
      CASE WHEN range % 7 = 0 THEN 'RxNorm' ELSE 'SNOMED' END AS vocabulary_id, CASE WHEN range % 7 = 0 THEN 'Ingredient' ELSE 'Clinical Finding' END AS concept_class_id,
      'S' AS standard_concept, (range * 13)::VARCHAR AS concept_code, '19700101' AS valid_start_date, '20991231' AS valid_end_date, NULL AS invalid_reason
      FROM range(0, 7000000)) TO ${literal(join(to, "athena_CONCEPT.csv"))} ${tsv}`)
  await c.run(`COPY (SELECT ${id("range * 7919")} AS concept_id_1, ${id("range * 104729")} AS concept_id_2, CASE WHEN range % 3 = 0 THEN 'Maps to' ELSE 'Subsumes' END AS relationship_id,
      '19700101' AS valid_start_date, '20991231' AS valid_end_date, NULL AS invalid_reason FROM range(0, 50000000)) TO ${literal(join(to, "athena_CONCEPT_RELATIONSHIP.csv"))} ${tsv}`)
  await c.run(`COPY (SELECT ${id("range * 15485863")} AS ancestor_concept_id, ${id("range * 32452843")} AS descendant_concept_id, 1 AS min_levels_of_separation, 2 AS max_levels_of_separation
      FROM range(0, 80000000)) TO ${literal(join(to, "athena_CONCEPT_ANCESTOR.csv"))} ${tsv}`)
  c.closeSync()
  instance.closeSync()
  return to
}

/** Runs an import as a child process; samples its RSS; returns wall and CPU seconds and peak RSS (and how it failed, if it did). */
const timedImport = (args: ReadonlyArray<string>, checkout = ROOT) =>
  new Promise<{ readonly wall: number; readonly cpu: number; readonly peakMiB: number; readonly phases: string; readonly failed?: string }>((resolvePromise) => {
    const dataDir = mkdtempSync(join(tmpdir(), "hcc-bench-import-"))
    const started = performance.now()
    const child = spawn(process.execPath, [join(checkout, "src/cli.ts"), ...args, "--json"], { cwd: checkout, env: { ...process.env, HCC_DATA_DIR: dataDir }, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
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
      // The summary's seconds per phase (`--json`).
      const phases = Object.entries((JSON.parse(out || "{}") as { phases?: Record<string, number> }).phases ?? {}).map(([p, s]) => `${p} ${s}`).join(", ")
      const measured = { wall: (performance.now() - started) / 1000, cpu, peakMiB: Math.round(peak), phases }
      // An import killed for memory (no swap: the kernel's OOM killer) says so in its row.
      if (code !== 0) resolvePromise({ ...measured, failed: signal !== null ? `killed by ${signal}` : (err.trim().split("\n").at(-1) ?? `exit ${code}`) })
      else resolvePromise(measured)
    })
  })

const main = async () => {
  const source = mkdtempSync(join(tmpdir(), "hcc-bench-source-"))
  const csv = join(source, "csv")
  const fhir = join(source, "fhir")
  const cdm = join(source, "cdm")
  // Ctrl-C or SIGTERM: the running import stops with its own handler (same process group); the files made here go.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      rmSync(source, { recursive: true, force: true })
      process.exit(signal === "SIGINT" ? 130 : 143)
    })
  }
  const generating = formats.some((f) => f === "csv" || f === "fhir" || f === "omop")
  console.log(`bench:import — ${generating ? `${patients.toLocaleString("en")} patients generated` : "folders given"}, ${availableParallelism()} cores, Node ${process.version}`)
  let t = performance.now()
  if (generating) {
    hcc(source, ["data", "generate", "--patients", String(patients)])
    console.log(`generated in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  }
  if (formats.includes("csv")) {
    t = performance.now()
    hcc(source, ["data", "export", csv])
    console.log(`CSV export in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  }
  if (formats.includes("fhir")) {
    t = performance.now()
    hcc(source, ["data", "export", "--format", "fhir", ...(gzip ? ["--gzip"] : []), fhir])
    console.log(`FHIR export${gzip ? " (gzip)" : ""} in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  }
  if (formats.includes("omop")) {
    t = performance.now()
    hcc(source, ["data", "export", "--format", "omop", ...(parquet ? ["--parquet"] : []), cdm])
    console.log(`OMOP export${parquet ? " (Parquet)" : ""} in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  }

  type Timed = Awaited<ReturnType<typeof timedImport>>
  const rows: Array<{ readonly name: string; readonly bytes: { readonly stored: number; readonly raw: number }; readonly r: Timed; readonly base?: Timed; readonly floor: number }> = []
  const measure = async (name: string, folder: string, args: ReadonlyArray<string>) => {
    const r = await timedImport(args)
    console.log(`${name}: ${r.failed ?? `${r.wall.toFixed(1)} s`}`)
    const base = baseline === undefined ? undefined : await timedImport(args, baseline)
    if (base !== undefined) console.log(`${name}, baseline: ${base.failed ?? `${base.wall.toFixed(1)} s`}`)
    rows.push({ name, bytes: await sizeOf(folder), r, ...(base === undefined ? {} : { base }), floor: await duckdbFloor(folder) })
  }
  if (formats.includes("csv")) await measure("CSV tables", csv, ["data", "import", csv])
  if (ownCsv !== undefined) await measure("CSV tables (yours)", ownCsv, ["data", "import", ownCsv])
  if (formats.includes("fhir")) await measure(`FHIR Bulk NDJSON${gzip ? " (gzip)" : ""}`, fhir, ["data", "import", "--format", "fhir", fhir])
  const omopFolders = [...(formats.includes("omop") ? [[`OMOP CDM 5.4${parquet ? " Parquet" : " CSV"}`, cdm] as const] : []), ...(omop === undefined ? [] : [["OMOP (yours)", omop] as const])]
  for (const [name, given] of omopFolders) {
    const folder = athena ? await withAthenaVocabulary(given, join(source, `athena-${omopFolders.findIndex(([n]) => n === name)}`)) : given
    await measure(`${name}${athena ? " + Athena-size vocabulary" : ""}`, folder, ["data", "import", "--format", "omop", folder])
    if (athena) rmSync(folder, { recursive: true, force: true })
  }
  rmSync(source, { recursive: true, force: true })

  const mib = (b: number) => b / 1_048_576
  console.log("")
  if (baseline !== undefined) {
    console.log(`Beside the checkout at ${baseline}, the same files, imported in turn: baseline ÷ this, how many times longer the baseline takes.`)
    console.log("")
    console.log("| import | wall s | baseline wall s | baseline ÷ this | CPU s | baseline CPU s | peak RSS MiB | baseline peak RSS MiB |")
    console.log("|---|---|---|---|---|---|---|---|")
    for (const { name, r, base } of rows) {
      console.log(`| ${name} | ${r.failed ?? r.wall.toFixed(1)} | ${base?.failed ?? base!.wall.toFixed(1)} | ${r.failed === undefined && base?.failed === undefined ? (base!.wall / r.wall).toFixed(2) : ""} | ${r.cpu.toFixed(1)} | ${base!.cpu.toFixed(1)} | ${r.peakMiB} | ${base!.peakMiB} |`)
    }
    console.log("")
  }
  console.log("| import | files MiB (stored / uncompressed) | wall s | phases s | CPU s | cores used | MiB/s (uncompressed) | MiB/s per core | peak RSS MiB | DuckDB count(*) s | × DuckDB's |")
  console.log("|---|---|---|---|---|---|---|---|---|---|---|")
  for (const { name, bytes, r, floor } of rows) {
    const cores = r.cpu / r.wall
    if (r.failed !== undefined) {
      console.log(`| ${name} | ${mib(bytes.stored).toFixed(0)} / ${mib(bytes.raw).toFixed(0)} | failed after ${r.wall.toFixed(1)} s: ${r.failed} | | ${r.cpu.toFixed(1)} | | | | ${r.peakMiB} | ${floor.toFixed(1)} | |`)
      continue
    }
    console.log(`| ${name} | ${mib(bytes.stored).toFixed(0)} / ${mib(bytes.raw).toFixed(0)} | ${r.wall.toFixed(1)} | ${r.phases} | ${r.cpu.toFixed(1)} | ${cores.toFixed(2)} | ${(mib(bytes.raw) / r.wall).toFixed(1)} | ${(mib(bytes.raw) / r.cpu).toFixed(1)} | ${r.peakMiB} | ${floor.toFixed(1)} | ${(r.wall / floor).toFixed(1)} |`)
  }
}

await main()
