/**
 * An import's DuckDB engine stopped in the middle of a query (a signal lands while DuckDB reads a
 * large file): the query is given up, the engine closes, and the process exits. Closing the
 * connection while DuckDB still ran the query on a worker thread left that thread deadlocked and
 * the process unable to exit.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { ROOT } from "../support/server.ts"

const scratch = mkdtempSync(join(tmpdir(), "hcc-engine-"))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

// Runs a query that takes minutes, waits until DuckDB's threads have spent CPU on it (so it is
// running, not queued), interrupts the fiber, disposes of the engine and exits.
const SCRIPT = `
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import { Engine } from ${JSON.stringify(join(ROOT, "src/pipeline/Engine.ts"))}
const engine = new Engine(${JSON.stringify(join(scratch, "spill"))})
const fiber = Effect.runFork(engine.run("a long sum", "SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b"))
const start = process.cpuUsage().user
while (process.cpuUsage().user - start < 300_000) await new Promise((r) => setImmediate(r))
await Effect.runPromise(Fiber.interrupt(fiber))
engine.dispose()
process.stdout.write("disposed\\n")
process.exit(0)
`

describe("the import's engine", () => {
  it("interrupted while a query runs: gives the query up, closes, and the process exits", () => {
    const run = spawnSync(process.execPath, ["--input-type=module", "-e", SCRIPT], { cwd: ROOT, encoding: "utf8", timeout: 60_000, killSignal: "SIGKILL" })
    expect(run.stderr).toBe("")
    expect(run.stdout).toBe("disposed\n")
    expect(run.status).toBe(0)
  }, 90_000)
})
