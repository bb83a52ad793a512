/**
 * The typed client (`./client`) is built from the plugins' contracts alone: importing it loads no
 * handler, no kernel and no WASM module — only the contracts (paths, schemas, examples) and the
 * HTTP contract they make.
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/server.ts"

const REPORTER = join(ROOT, "test/fixtures/harness/report-modules.ts")

describe("importing the client", () => {
  it("loads the plugins' contracts, and no handler, kernel or WASM module", () => {
    const r = spawnSync(process.execPath, ["--import", REPORTER, "--input-type=module", "-e", `await import(${JSON.stringify(join(ROOT, "src/client/index.ts"))})`], { cwd: ROOT, encoding: "utf8" })
    expect(r.status, r.stderr).toBe(0)
    const loaded = [...r.stderr.matchAll(/^module loaded: (.+)$/gm)].map((m) => m[1]!)
    expect(loaded).toContain("plugins/population/contract.ts")
    // Of the plugins, only what a contract is made of.
    expect(loaded.filter((m) => m.startsWith("plugins/") && !/\/(contract\.ts|schema\.ts|example-answers\.json)$/.test(m))).toEqual([])
    // Of the compute core, only the service's key and the names of its codes.
    expect(loaded.filter((m) => m.startsWith("src/kernels/") && !["src/kernels/service.ts", "src/kernels/names.ts", "src/kernels/thresholds.ts", "src/kernels/types.ts"].includes(m))).toEqual([])
    expect(loaded.filter((m) => m.startsWith("src/compute/") || m.startsWith("build/") || m.endsWith(".wasm"))).toEqual([])
  })
})
