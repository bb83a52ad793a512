/**
 * The docs page's assets are compiled before the server listens (src/http/Server.ts,
 * `DocsAssetsPreloaded`): the preload must name the very module effect's HttpApiSwagger imports —
 * otherwise it compiles a copy nobody uses, and the compile the first /readyz probes wait for
 * comes back after the server listens.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { DOCS_ASSETS_URL } from "../../src/http/Server.ts"

describe("the docs page's assets, preloaded", () => {
  it("are the module HttpApiSwagger imports, and it holds the Swagger UI", async () => {
    const swagger = readFileSync(fileURLToPath(import.meta.resolve("effect/http-api/HttpApiSwagger")), "utf8")
    expect(swagger).toContain('import("./internal/httpApiSwagger.js")')
    expect(DOCS_ASSETS_URL.endsWith("/effect/dist/http-api/internal/httpApiSwagger.js")).toBe(true)
    const assets = (await import(DOCS_ASSETS_URL)) as { readonly javascript?: unknown; readonly css?: unknown }
    expect(typeof assets.javascript).toBe("string")
    expect(typeof assets.css).toBe("string")
  })
})
