/**
 * Rows read through the SQLite client: the values node:sqlite gives, as plain objects that share
 * one hidden class per statement (node:sqlite's own row objects each get a new one; see
 * src/db/SqliteClient.ts). Checked in a child process: V8's `%HaveSameMap` needs a flag.
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ROOT } from "../support/server.ts"

describe("SQLite rows", () => {
  it("have node:sqlite's values, and one statement's rows share a hidden class", () => {
    const r = spawnSync(process.execPath, ["--allow-natives-syntax", join(ROOT, "test/fixtures/harness/sqlite-rows.ts")], { cwd: ROOT, encoding: "utf8" })
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
    const out = JSON.parse(r.stdout) as Record<string, unknown>
    expect(out.first).toEqual([{ id: 1, name: "a", score: 0.5 }])
    expect(out.second).toEqual([{ id: 2, name: "b", score: 1.5 }])
    expect(out.sameShapeAcrossCalls).toBe(true)
    expect(out.sameShapeWithinResult).toBe(true)
    // As node:sqlite's own objects: the later of two columns of one name wins.
    expect(out.duplicate).toEqual([{ a: 2, b: 3 }])
    // A column named __proto__ stays a column (it does not become the row's prototype).
    expect(out.protoKeys).toEqual(["__proto__", "b"])
    expect(out.protoValue).toBe(1)
    expect(out.protoB).toBe(2)
    expect(out.values).toEqual([[1, "a"], [2, "b"]])
  })
})
