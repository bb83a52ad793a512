/**
 * The server and the CLI load only the parts of @effect/platform-node they use: its index also
 * loads the Redis client (for a service that never talks to Redis).
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { SERVER_NODE_FLAGS } from "../../src/nodeFlags.ts"
import { ROOT, startServer } from "../support/server.ts"

const REPORTER = join(ROOT, "test/fixtures/harness/report-packages.ts")
const loaded = (stderr: string) => [...stderr.matchAll(/^package loaded: (.+)$/gm)].map((m) => m[1]!)

describe("packages loaded at start", () => {
  it("`hcc` loads @effect/platform-node but not the Redis client", () => {
    const r = spawnSync(process.execPath, ["--import", REPORTER, join(ROOT, "src/cli.ts"), "--help"], { cwd: ROOT, encoding: "utf8" })
    expect(r.status).toBe(0)
    expect(loaded(r.stderr)).toContain("@effect/platform-node")
    expect(loaded(r.stderr).filter((p) => p.includes("redis"))).toEqual([])
  })

  it("the server loads @effect/platform-node but not the Redis client", async () => {
    const server = await startServer({ nodeArgs: [...SERVER_NODE_FLAGS, "--import", REPORTER] })
    try {
      const packages = loaded(server.stderr())
      expect(packages).toContain("@effect/platform-node")
      expect(packages.filter((p) => p.includes("redis"))).toEqual([])
    } finally {
      await server.stop()
    }
  })
})
