/**
 * The docs page's assets (its Swagger UI CSS and JavaScript) come from one module of effect's
 * http-api, named by its file (src/http/Server.ts, `DOCS_ASSETS_URL`): compiled before the server
 * listens and read by the page. Should a later effect move or change that module, this fails
 * before a user sees an empty page.
 */
import { describe, expect, it } from "vitest"
import { DOCS_ASSETS_URL } from "../../src/http/Server.ts"

describe("the docs page's assets", () => {
  it("are a module of effect's http-api that holds the Swagger UI", async () => {
    expect(DOCS_ASSETS_URL.endsWith("/effect/dist/http-api/internal/httpApiSwagger.js")).toBe(true)
    const assets = (await import(DOCS_ASSETS_URL)) as { readonly javascript?: unknown; readonly css?: unknown }
    expect(typeof assets.javascript).toBe("string")
    expect(assets.javascript).toContain("SwaggerUIBundle")
    expect(typeof assets.css).toBe("string")
  })
})
