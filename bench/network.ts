/**
 * `npm run bench:network -- [--patients 30000] [--rounds 15]`: what a network coordinator adds to
 * a question (docs/network.md), side by side with what its sites take, in one run.
 *
 * A population of `--patients` is generated, exported and split by patient into three sites, each
 * imported and served on its own (no compute threads: one core each would be more than the
 * machine has); a coordinator asks them. Per question (the README's population and drug-outcomes
 * questions), `--rounds` times in turn after one warm-up: each site asked directly for its partial
 * answer (the slowest of the three), then the coordinator. Sites keep answers per dataset, so
 * after the warm-up their time is the HTTP round trip and the look-up: the coordinator's added
 * time is its fan-out, pooling and own HTTP work.
 *
 * A network of 100 sites is measured in part: the pooling of 100 partial answers (the three real
 * ones repeated) in process. Its answer time is modelled as the coordinator's own work on a call
 * (its replay of an answer it gave under the same Idempotency-Key: the door, the account, the
 * limits and the answer written, no site asked; measured) + the slowest site + pooling 100 + 100 × the per-site cost
 * (sending a request, reading and parsing its answer: the 3-site time less those, over 3).
 *
 * Progress goes to stderr; Ctrl-C or SIGTERM stops the servers and removes the folders.
 */
import * as Effect from "effect/Effect"
import { rmSync } from "node:fs"
import { resolve } from "node:path"
import builtins from "../plugins/index.ts"
import { Disclosure, makeDisclosure } from "../src/plugin/disclosure.ts"
import type { Plugin } from "../src/plugin/spec.ts"
import { PARTIAL_MEDIA_TYPE } from "../src/plugin/viewData.ts"
import { networkFile, splitByPatient } from "../test/support/network.ts"
import { readmeCalls } from "../test/support/datasets.ts"
import { hcc, newAccount, tempDataDir } from "../test/support/server.ts"
import { spawnService, stopService } from "./serviceProcess.ts"

const ROOT = resolve(import.meta.dirname, "..")
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 ? Number(process.argv[i + 1]) : fallback
}
const patients = arg("patients", 30_000)
const rounds = arg("rounds", 15)
const folders: Array<string> = []
const children: Array<Awaited<ReturnType<typeof spawnService>>> = []
const stopAll = async () => {
  await Promise.all(children.map((c) => stopService(c.child)))
  for (const f of folders) rmSync(f, { recursive: true, force: true })
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    void stopAll().finally(() => process.exit(signal === "SIGINT" ? 130 : 143))
  })
}
const step = (what: string) => console.error(`bench:network — ${what}`)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const post = async (port: number, path: string, body: unknown, token: string, accept = "application/json", headers: Record<string, string> = {}) => {
  const t = performance.now()
  const res = await fetch(`http://127.0.0.1:${port}${path}`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept, ...headers }, body: JSON.stringify(body) })
  const json = await res.json() as Record<string, unknown>
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`)
  return { ms: performance.now() - t, json }
}

const main = async () => {
  step(`generating ${patients.toLocaleString("en")} patients, exporting, splitting into 3 sites, importing`)
  const original = tempDataDir()
  folders.push(original)
  hcc(original, ["data", "generate", "--patients", String(patients)])
  const exported = `${tempDataDir()}/export`
  hcc(original, ["data", "export", exported])
  const dirs = splitByPatient(exported, 3).map((part) => {
    const dir = tempDataDir()
    folders.push(dir, part)
    hcc(dir, ["data", "import", part])
    return dir
  })
  step("starting the sites")
  const env = { HCC_THREADS: "0" }
  const sites = await Promise.all(dirs.map((dataDir) => spawnService(ROOT, { ...env, HCC_DATA_DIR: dataDir })))
  children.push(...sites)
  const members = sites.map((s, i) => ({ name: `site-${i + 1}`, url: `http://127.0.0.1:${s.port}`, token: newAccount({ dataDir: dirs[i]! }, { tier: "unlimited" }).token }))
  const coordinatorDir = tempDataDir()
  folders.push(coordinatorDir)
  step("starting the coordinator")
  const coordinator = await spawnService(ROOT, { ...env, HCC_DATA_DIR: coordinatorDir, HCC_NETWORK: networkFile(members) })
  children.push(coordinator)
  const own = newAccount({ dataDir: coordinatorDir }, { tier: "unlimited" }).token
  // Ready: every site's dataset loaded, and the coordinator (which holds none) listening (/readyz polled every 100 ms).
  const ready = async (port: number) => {
    while ((await fetch(`http://127.0.0.1:${port}/readyz`)).status !== 200) await new Promise((r) => setTimeout(r, 100))
  }
  await Promise.all([...sites, coordinator].map((s) => ready(s.port)))

  const rows: Array<string> = []
  for (const path of ["/v1/population", "/v1/drug-outcomes"]) {
    const [, body] = readmeCalls().find(([p]) => p === path)!
    const network = path.replace("/v1/", "/v1/network/")
    const replay = { "idempotency-key": `bench-${network}` }
    await post(coordinator.port, network, body, own, "application/json", replay)
    const slowest: Array<number> = []
    const coordinated: Array<number> = []
    const ownCall: Array<number> = []
    let partials: Array<Record<string, unknown>> = []
    for (let r = 0; r < rounds; r++) {
      step(`${path}: round ${r + 1} of ${rounds}`)
      const direct = await Promise.all(sites.map((s, i) => post(s.port, path, body, members[i]!.token, PARTIAL_MEDIA_TYPE)))
      slowest.push(Math.max(...direct.map((d) => d.ms)))
      partials = direct.map((d) => d.json)
      coordinated.push((await post(coordinator.port, network, body, own)).ms)
      // The coordinator replaying its own answer under the same key: the part of its time that is not the sites'.
      ownCall.push((await post(coordinator.port, network, body, own, "application/json", replay)).ms)
    }
    // Pooling alone, in process: the 3 partials, and 100 (the 3 repeated).
    const plugin = (builtins as ReadonlyArray<Plugin>).find((p) => p.path === path)!
    const request = Effect.runSync(Effect.orDie((await import("effect")).Schema.decodeUnknownEffect(plugin.request as never)(body)))
    const pool = (n: number) => {
      const answers = Array.from({ length: n }, (_, i) => ({ name: `site-${i + 1}`, answer: partials[i % 3]! }))
      const t = performance.now()
      for (let i = 0; i < 20; i++) Effect.runSync(Effect.provideService(plugin.pool!(request, answers) as Effect.Effect<unknown, unknown, Disclosure>, Disclosure, makeDisclosure({ minimum: 11, rounding: 1 })))
      return (performance.now() - t) / 20
    }
    const [pool3, pool100] = [pool(3), pool(100)]
    const s = median(slowest)
    const c = median(coordinated)
    const o = median(ownCall)
    // Per site beyond pooling: sending its request, reading and parsing its answer.
    const perSite = Math.max(0, (c - o - s - pool3) / 3)
    rows.push(`| ${path.slice(4)} | ${s.toFixed(1)} | ${c.toFixed(1)} | ${(c - s).toFixed(1)} | ${o.toFixed(1)} | ${perSite.toFixed(2)} | ${pool3.toFixed(2)} | ${pool100.toFixed(2)} | ${(o + s + pool100 + 100 * perSite).toFixed(0)} |`)
  }
  console.log(`bench:network — ${patients.toLocaleString("en")} patients in 3 sites, ${rounds} rounds, medians (ms)`)
  console.log("| question | slowest site | coordinator | added | own call | per site | pooling 3 | pooling 100 | model: 100 sites |")
  console.log("|---|---|---|---|---|---|---|---|---|")
  for (const row of rows) console.log(row)
}

main().then(stopAll, async (e) => {
  console.error(e)
  await stopAll()
  process.exit(1)
})
