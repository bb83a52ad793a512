/**
 * The plugin contract's public surface — every name the stable entry (`./plugin`), its
 * contract-only part (`./plugin/contract`) and the experimental entry (`./plugin/experimental`)
 * export, with its type — is pinned by a snapshot
 * (test/plugin/plugin-surface.json, written by `npm run plugin:surface`). A change of surface
 * fails here until PLUGIN_API_VERSION moves with it as semver asks and the snapshot is written
 * again; the script refuses to write it otherwise.
 */
import { describe, expect, it } from "vitest"
import { bumpedEnough, bumpNeeded, pluginSurface, readSnapshot, type Surface } from "../../scripts/plugin-surface.ts"
import { PLUGIN_API_VERSION } from "../../src/plugin/Plugin.ts"

describe("the plugin API surface", () => {
  it("is the snapshot's, at the snapshot's PLUGIN_API_VERSION", () => {
    const snapshot = readSnapshot()
    const current = pluginSurface()
    expect(snapshot.version, "PLUGIN_API_VERSION moved: run npm run plugin:surface").toBe(PLUGIN_API_VERSION)
    expect(current, "the plugin API surface changed: raise PLUGIN_API_VERSION (src/plugin/spec.ts) as semver asks, then run npm run plugin:surface").toEqual(snapshot.surface)
  }, 120_000)

  it("keeps raw pointers and caches out of the stable entry", () => {
    const stable = Object.keys(readSnapshot().surface["./plugin"])
    for (const name of ["Dataset", "Kernels", "HealthData", "datasetCache", "preparedPerDataset", "primed", "recordingBases", "replayBases"]) {
      expect(stable).not.toContain(name)
    }
  })

  it("asks for a major version for a removed or changed name, a minor one for an added name", () => {
    const base: Surface = { "./plugin": { a: "value: number", b: "type: string" }, "./plugin/contract": { a: "value: number" }, "./plugin/experimental": { x: "value: X" } }
    const withStable = (stable: Record<string, string>): Surface => ({ ...base, "./plugin": stable })
    expect(bumpNeeded(base, base)).toBe("none")
    expect(bumpNeeded(base, withStable({ a: "value: number" }))).toBe("major")
    expect(bumpNeeded(base, withStable({ a: "value: string", b: "type: string" }))).toBe("major")
    expect(bumpNeeded(base, withStable({ ...base["./plugin"], c: "value: boolean" }))).toBe("minor")
    expect(bumpNeeded(base, { ...base, "./plugin/experimental": {} })).toBe("minor")
    expect(bumpNeeded(base, { ...base, "./plugin/contract": {} })).toBe("major")
    expect(bumpNeeded(base, { ...base, "./plugin/contract": { a: "value: number", c: "value: C" } })).toBe("minor")
    // An interface is listed member by member: an optional member added is a minor change, a
    // required one (every implementation must now supply it) a major one, as is a member changed.
    const spec: Surface = { ...base, "./plugin": { ...base["./plugin"], Spec: "type: interface", "Spec.name": "member: string" } }
    expect(bumpNeeded(spec, { ...spec, "./plugin": { ...spec["./plugin"], "Spec.view": "member?: View" } })).toBe("minor")
    expect(bumpNeeded(spec, { ...spec, "./plugin": { ...spec["./plugin"], "Spec.view": "member: View" } })).toBe("major")
    expect(bumpNeeded(spec, { ...spec, "./plugin": { ...spec["./plugin"], "Spec.name": "member?: string" } })).toBe("major")
    expect(bumpNeeded(spec, { ...spec, "./plugin": { ...spec["./plugin"], View: "type: interface", "View.spec": "member: object" } })).toBe("minor")
    const versioned: Surface = { ...base, "./plugin": { ...base["./plugin"], PLUGIN_API_VERSION: 'value: "1.5.0"' } }
    expect(bumpNeeded(versioned, { ...versioned, "./plugin": { ...versioned["./plugin"], PLUGIN_API_VERSION: 'value: "1.6.0"' }, "./plugin/experimental": {} })).toBe("minor")
    expect(bumpedEnough("1.5.0", "2.0.0", "major")).toBe(true)
    expect(bumpedEnough("1.5.0", "1.6.0", "major")).toBe(false)
    expect(bumpedEnough("1.5.0", "1.6.0", "minor")).toBe(true)
    expect(bumpedEnough("1.5.0", "1.5.1", "minor")).toBe(false)
    expect(bumpedEnough("1.5.0", "1.5.0", "none")).toBe(true)
  })
})
