/**
 * `./testing` for plugin authors: checkPlugin starts the service with the plugin on a small
 * generated dataset and runs the conformance checks; a plugin that breaks one is told which.
 */
import { describe, expect, it } from "vitest"
import { checkPlugin, matches, PluginCheckFailed, startService } from "../../src/testing/index.ts"
import { fixturePlugin } from "../support/server.ts"

describe("checkPlugin", () => {
  it("passes a conforming plugin and reports each check", async () => {
    const report = await checkPlugin({ plugin: fixturePlugin("series-stats"), patients: 300 })
    expect(report.plugin).toBe("series-stats")
    expect(report.results.every((r) => r.ok)).toBe(true)
    expect(report.results.map((r) => r.check)).toEqual(expect.arrayContaining([
      "the catalog lists the plugin",
      "an unknown field is a 400 unknown_field naming it",
      "no token is a 401"
    ]))
    expect(report.results.filter((r) => r.check.startsWith("example ")).length).toBeGreaterThanOrEqual(4)
  })

  it("fails a plugin whose example does not answer 200, naming the check", async () => {
    const failed = await checkPlugin({ plugin: fixturePlugin("defect"), patients: 300 }).then(() => undefined, (e: unknown) => e)
    expect(failed).toBeInstanceOf(PluginCheckFailed)
    expect((failed as PluginCheckFailed).message).toMatch(/it documents at least one example/)
  })

  it("startService gives a ready service with the demo token, and removes its temporary folder on stop", async () => {
    const service = await startService({ patients: 200 })
    const res = await fetch(`${service.url}/v1/usage`, { headers: { authorization: `Bearer ${service.token}` } })
    expect(res.status).toBe(200)
    await service.stop()
    const { existsSync } = await import("node:fs")
    expect(existsSync(service.dataDir)).toBe(false)
  })

  it("matches compares the members an example promises", () => {
    expect(matches({ a: 1, b: { c: [1, 2, 3] } }, { b: { c: [1, 2] } })).toBe(true)
    expect(matches({ a: 1 }, { a: 2 })).toBe(false)
    expect(matches({ a: [1] }, { a: [1, 2] })).toBe(false)
  })
})
