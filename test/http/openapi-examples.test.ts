/**
 * The 200 examples of the OpenAPI document are real answers: on the default dataset (50,000
 * patients, the default seed), each built-in plugin's example request, sent to a live server, gets
 * exactly the answer the document shows. (`npm run docs:examples` records them after a change that
 * moves a number.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import builtins from "../../plugins/index.ts"
import { call, startServer, type TestServer, waitReady } from "../support/server.ts"

let server: TestServer
let doc: Record<string, any>
beforeAll(async () => {
  server = await startServer({ env: { HCC_POPULATION: "50000" } })
  await waitReady(server)
  doc = await (await call(server, "/v1/openapi.json", { token: null })).json()
}, 180_000)
afterAll(async () => {
  await server.stop()
})

describe.each(builtins.map((p) => [p.name, p] as const))("%s", (_, plugin) => {
  it("every example's documented answer is what the server answers on the default dataset", async () => {
    const shown = doc.paths[plugin.path].post.responses["200"].content["application/json"].examples as Record<string, { value: unknown }>
    const requests = doc.paths[plugin.path].post.requestBody.content["application/json"].examples as Record<string, { value: unknown }>
    expect(Object.keys(shown).sort()).toEqual(Object.keys(requests).sort())
    for (const [name, { value: request }] of Object.entries(requests)) {
      const res = await call(server, plugin.path, { body: request })
      expect(res.status, name).toBe(200)
      expect(await res.json(), `${plugin.path} example ${name}`).toEqual(shown[name]!.value)
    }
  })
})
