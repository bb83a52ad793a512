/**
 * `runCli` (the command line run in a process that is not `hcc`'s own: the suite's command thread)
 * answers as the `hcc` process does: the same output, the same problems and exit codes, the
 * settings of the environment it is given (not the process's), progress and log lines on its error
 * writer, never on the process's stderr; and it refuses to serve.
 */
import { describe, expect, it } from "vitest"
import { runCli } from "../../src/cli.ts"
import { hccOnThread } from "../support/cliThread.ts"
import { dbEnv, runHcc, tempDataDir } from "../support/server.ts"

/** `runCli` in this process, its writers collected. */
const inProcess = async (args: ReadonlyArray<string>, env: Record<string, string | undefined>) => {
  let stdout = ""
  let stderr = ""
  const status = await runCli(args, { env, out: (t) => (stdout += t), err: (t) => (stderr += t) })
  return { status, stdout, stderr }
}

describe("runCli", () => {
  it("prints what the process prints, with the same exit codes: a result, a usage error, a failure, help", () => {
    const dir = tempDataDir()
    for (const args of [
      ["--version", "--json"],
      ["accounts", "list", "--json"],
      ["data", "generate", "--patients", "0", "--json"],
      ["data", "generate", "--patients", "0"],
      ["accounts", "disable", "acc_missing", "--json"],
      ["tokens", "frobnicate"],
      ["accounts", "create", "--help"]
    ]) {
      const process = runHcc(dir, args)
      const thread = hccOnThread(args, dbEnv({ dataDir: dir }))
      expect({ args, ...thread }).toEqual({ args, ...process })
    }
  })

  it("reads its settings from the environment it is given, and writes progress and log lines to its error writer", async () => {
    const dir = tempDataDir()
    const written: Array<string> = []
    const write = process.stderr.write
    process.stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof process.stderr.write
    let r: Awaited<ReturnType<typeof inProcess>>
    try {
      r = await inProcess(["data", "generate", "--patients", "20", "--seed", "5", "--json", "--log-level", "debug"], { HCC_DATA_DIR: dir })
    } finally {
      process.stderr.write = write
    }
    expect(r.status).toBe(0)
    expect(JSON.parse(r.stdout)).toMatchObject({ patients: 20, seed: 5 })
    expect(r.stderr).toMatch(/^generating 20 patients: writing 100% /m)
    expect(r.stderr).toMatch(/^\{"time":"[^"]+","level":"debug","msg":"Migrations complete"/m)
    expect(written).toEqual([])
    // The folder of its environment holds the dataset: the process, pointed there, exports it.
    const exported = runHcc(dir, ["data", "export", tempDataDir(), "--json"])
    expect(exported.status).toBe(0)
  })

  it("a failing command's problem goes to the error writer as JSON with --json, and its exit code is the process's", async () => {
    const r = await inProcess(["data", "import", "--format", "omop", tempDataDir(), "--json"], { HCC_DATA_DIR: tempDataDir() })
    expect(r.status).toBe(1)
    expect(r.stdout).toBe("")
    expect(JSON.parse(r.stderr.trim().split("\n").at(-1)!)).toMatchObject({ exit_code: 1, code: expect.any(String) })
  })

  it("does not serve", async () => {
    await expect(inProcess(["serve"], {})).rejects.toThrow(/does not serve/)
  })
})
