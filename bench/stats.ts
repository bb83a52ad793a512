/**
 * `npm run bench:stats`: the statistical properties docs/analytics.md states, measured at a size
 * tests cannot afford, printed side by side:
 * - device outcomes: the share of pooled 95 % intervals covering the planted rate on the default
 *   dataset (50,000 patients unless given, every device × rate metric × 12/24/36 months), and under
 *   the generator's own process (50 seeds × registries of 18, 54 and 181 implants per study), and
 *   with heterogeneous studies (logit-normal study rates, τ = 1 and 2; 20 seeds);
 * - one health: the false-alarm rate of correlation_found over the unlinked pairs of 40 seeds of the
 *   generator's surveillance data (5,000 pairs), and the planted leads found at their lag.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import * as SqliteClient from "../src/db/SqliteClient.ts"
import { loadDataset } from "../src/health/loader.ts"
import { Kernels } from "../src/kernels/Kernels.ts"
import * as KernelsLayer from "../src/kernels/Kernels.ts"
import { deviceCoverageHeterogeneous, deviceCoverageOnData, deviceCoverageSimulated, oneHealthUnderGenerator } from "./simulations.ts"

const ROOT = resolve(import.meta.dirname, "..")
const patients = Number(process.argv[2] ?? 50_000)
const pct = (a: number, b: number) => `${(100 * a / b).toFixed(1)} %`
const seeds = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

const dir = mkdtempSync(join(tmpdir(), "hcc-bench-stats-"))
const gen = spawnSync(process.execPath, [join(ROOT, "src/cli.ts"), "data", "generate", "--patients", String(patients)], {
  cwd: ROOT, env: { ...process.env, HCC_DATA_DIR: dir }, encoding: "utf8"
})
if (gen.status !== 0) throw new Error(gen.stderr)

await Effect.runPromise(
  Effect.gen(function*() {
    const kernels = yield* Kernels
    const data = yield* loadDataset(kernels)
    const onData = yield* deviceCoverageOnData(kernels, data, [12, 24, 36])
    const lines = [
      `statistics bench — node ${process.version}`,
      "",
      "device outcomes: pooled 95 % intervals covering the planted rate",
      `  default dataset (${patients.toLocaleString("en-US")} patients, 72 intervals): ${onData.covered} of ${onData.total} (${pct(onData.covered, onData.total)}); pooled / crude rate ${onData.meanRatioToCrude.toFixed(3)}; all inside [0, 1]: ${onData.intervalsInsideUnit}`
    ]
    for (const size of [18, 54, 181]) {
      const r = deviceCoverageSimulated(seeds(50), [size])
      lines.push(`  simulated, ${String(size).padStart(3)} implants per study (50 seeds, ${r.total} intervals): ${pct(r.covered, r.total)}; mean relative error ${(100 * r.meanRelativeError).toFixed(1)} %`)
    }
    for (const tau of [1, 2]) {
      const r = deviceCoverageHeterogeneous(seeds(20), 50, tau)
      lines.push(`  heterogeneous studies, logit-normal rates with τ = ${tau}, 8 studies of about 50 implants (20 seeds, ${r.total} intervals): ${pct(r.covered, r.total)}; mean relative error ${(100 * r.meanRelativeError).toFixed(1)} %`)
    }
    const oh = yield* oneHealthUnderGenerator(kernels, seeds(40))
    lines.push("", "one health: correlation_found under the generator (nominal 5 %)")
    lines.push(`  unlinked pairs (40 seeds): ${oh.alarms} of ${oh.pairs} (${pct(oh.alarms, oh.pairs)}); planted leads at their lag: ${oh.leadsAtLag} of ${oh.leads}`)
    console.log(lines.join("\n"))
  }).pipe(Effect.provide(Layer.mergeAll(KernelsLayer.layerWasm, SqliteClient.layer({ filename: join(dir, "hcc.db") }))))
)
