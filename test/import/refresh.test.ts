/**
 * A running server notices a newly imported dataset, loads it beside the one it serves and
 * switches over: a client sending requests all the while sees no failed request, and every answer
 * names the dataset it came from — the old one, then the new one.
 */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { generatedDataDir, generatedFhirExport, readmeCalls } from "../support/datasets.ts"
import { call, dbEnv, newAccount, ROOT, startServer, waitForLog, waitReady } from "../support/server.ts"


describe.each([["on the HTTP thread", "0"], ["on two compute threads", "2"]])("refresh without a restart, computing %s", (_, threads) => {
  it("serves the new import with zero failed requests while a client keeps asking", async () => {
    // A FHIR export of another population, to import while the server runs.
    const bulk = generatedFhirExport(2500, 29)
    const dataDir = generatedDataDir(2000, 5)
    // An account whose limits the client's stream of requests does not reach.
    const { token } = newAccount(dataDir, { tier: "unlimited", burstLimit: 100_000 })
    const server = await startServer({ dataDir, env: { HCC_DATASET_POLL_SECONDS: "1", HCC_THREADS: threads } })
    try {
      await waitReady(server)
      const before = ((await (await call(server, "/v1/catalog", { token })).json()) as { dataset: { id: string; patients: number } }).dataset
      expect(before.patients).toBe(2000)

      // A client asks the README's questions in turn until told to stop.
      const calls = readmeCalls().filter(([path]) => path !== "/v1/drug-outcomes")
      const seen: Array<{ readonly status: number; readonly dataset: string | null; readonly code?: string }> = []
      let stop = false
      const client = (async () => {
        for (let i = 0; !stop; i++) {
          const [path, body] = calls[i % calls.length]!
          const r = await call(server, path, { body, token })
          const text = await r.text()
          seen.push({ status: r.status, dataset: r.headers.get("hcc-dataset-id"), ...(r.status === 200 ? {} : { code: `${path} ${r.status} ${(JSON.parse(text) as { code: string }).code}` }) })
        }
      })()

      const importer = spawn(process.execPath, [join(ROOT, "src/cli.ts"), "data", "import", "--format", "fhir", bulk], { cwd: ROOT, env: dbEnv({ dataDir }), stdio: "ignore" })
      const imported = await new Promise<number | null>((resolve) => importer.on("exit", resolve))
      expect(imported).toBe(0)
      const refreshed = await waitForLog(server, (l) => l.msg === "dataset refreshed", 120_000)
      // Keep asking a little while on the new dataset.
      const after = seen.length
      while (seen.length < after + calls.length) await new Promise((r) => setTimeout(r, 20))
      stop = true
      await client

      const now = ((await (await call(server, "/v1/catalog", { token })).json()) as { dataset: { id: string; patients: number; source: string } }).dataset
      expect(now).toMatchObject({ id: refreshed.dataset_id, patients: 2500, source: "imported" })
      expect(now.id).not.toBe(before.id)
      // A failure is counted per endpoint and code, beside the server's own account of it (its first error lines).
      const failed: Record<string, number> = {}
      for (const s of seen) if (s.code !== undefined) failed[s.code] = (failed[s.code] ?? 0) + 1
      const errors = server.logLines().filter((l) => l["level"] === "error").slice(0, 3)
      expect(failed, JSON.stringify(errors, null, 1)).toEqual({})
      // Every answer names its dataset: the old one, then (from the switch on) only the new one.
      const ids = seen.map((s) => s.dataset)
      const switched = ids.indexOf(now.id)
      expect(switched).toBeGreaterThan(0)
      expect(ids.slice(0, switched).every((id) => id === before.id)).toBe(true)
      expect(ids.slice(switched).every((id) => id === now.id)).toBe(true)
    } finally {
      await server.stop()
    }
  }, 240_000)
})
