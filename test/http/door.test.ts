/**
 * The door's route table is compiled from the HttpApi value (src/http/Door.ts): every endpoint of
 * the contract must have an implementation, an endpoint behind `Authorization` gets the caller,
 * and the pages served beside the API are routes like the others.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as HttpApi from "effect/http-api/HttpApi"
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import { createServer } from "node:http"
import { type AddressInfo, connect } from "node:net"
import { describe, expect, it } from "vitest"
import type { Principal } from "../../src/auth/Accounts.ts"
import { Authorization } from "../../src/http/ApiContract.ts"
import { bearerCredential, compileRoutes, writeAnswer } from "../../src/http/Door.ts"
import type { RequestInfo } from "../../src/http/RequestContext.ts"

const api = HttpApi.make("t")
  .add(HttpApiGroup.make("open").add(HttpApiEndpoint.get("ping", "/ping", { success: Schema.String })))
  .add(HttpApiGroup.make("closed").add(HttpApiEndpoint.post("work", "/work", { success: Schema.String })).middleware(Authorization))

const principal = { tokenId: "tok_1" } as unknown as Principal
const seen: Array<string> = []
const authorize = (credential: string) => Effect.sync(() => (seen.push(credential), principal))
const text = (s: string) => Effect.succeed(HttpServerResponse.text(s))
const request = (authorization?: string) => ({ headers: authorization === undefined ? {} : { authorization } }) as never
const info: RequestInfo = { requestId: "r", principal: undefined }

describe("the door's route table", () => {
  it("stops the start when an endpoint of the contract has no implementation", () => {
    expect(() => compileRoutes(api, { "open.ping": () => text("pong") }, [], authorize as never)).toThrow(/closed\.work/)
  })

  it("runs the authorization an endpoint's group declares, and only there; pages are GET routes", async () => {
    const routes = compileRoutes(api, {
      "open.ping": (_r, _i, p) => text(`pong ${String(p)}`),
      "closed.work": (_r, _i, p) => text(`work for ${p.tokenId}`)
    }, [["/docs", text("page")]], authorize as never)
    expect([...routes.keys()].sort()).toEqual(["/docs", "/ping", "/work"])
    const body = async (path: string, method: string, authorization?: string) => {
      const res = await Effect.runPromise(routes.get(path)!.get(method)!(request(authorization), info) as Effect.Effect<HttpServerResponse.HttpServerResponse>)
      return res.body._tag === "Uint8Array" ? new TextDecoder().decode(res.body.body) : ""
    }
    expect(await body("/ping", "GET", "Bearer x")).toBe("pong undefined")
    expect(seen).toEqual([])
    expect(await body("/work", "POST", "bearer   hcc_abc")).toBe("work for tok_1")
    expect(seen).toEqual(["hcc_abc"])
    expect(await body("/docs", "GET")).toBe("page")
  })

  it("reads a bearer credential as RFC 9110 and RFC 6750 write it", () => {
    expect(bearerCredential("Bearer abc")).toBe("abc")
    expect(bearerCredential("BEARER  abc")).toBe("abc")
    expect(bearerCredential("Basic abc")).toBe("")
    expect(bearerCredential("Bearerabc")).toBe("")
    expect(bearerCredential(undefined)).toBe("")
  })
})

describe("the door's writer", () => {
  it("a refusal before the body is read reaches a `Connection: close` client that goes on sending its body", async () => {
    const server = createServer((req, res) =>
      writeAnswer(req, res, HttpServerResponse.text("{\"code\":\"payload_too_large\"}", { status: 413, contentType: "application/json" }), "req-2"))
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    try {
      const length = 1_100_000
      const socket = connect((server.address() as AddressInfo).port, "127.0.0.1")
      let received = ""
      const answered = new Promise<void>((resolve) => socket.on("data", (d) => (received += d.toString("latin1")).includes("payload_too_large") && resolve()))
      const outcome = new Promise<string>((resolve) => {
        socket.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"))
        socket.on("close", () => resolve("closed"))
      })
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`)
      socket.write(Buffer.alloc(65_536, 120))
      // The answer arrives while most of the body is still to be sent; then the rest goes.
      await answered
      await new Promise((r) => setImmediate(r))
      const sent = new Promise<void>((resolve, reject) => socket.write(Buffer.alloc(length - 65_536, 120), (e) => (e ? reject(e) : resolve())))
      await sent
      socket.end()
      expect(await outcome).toBe("closed")
      expect(received).toMatch(/^HTTP\/1\.1 413 /)
    } finally {
      server.close()
    }
  })


  it("answers a 500 problem, not a hung request, when Node refuses a header of the answer", async () => {
    const server = createServer((req, res) =>
      writeAnswer(req, res, HttpServerResponse.text("{}", { contentType: "application/json", headers: { "hcc-dataset-as-of": "2026\nx" } }), "req-1"))
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`)
      expect(res.status).toBe(500)
      expect(res.headers.get("x-request-id")).toBe("req-1")
      expect(res.headers.get("content-type")).toBe("application/problem+json")
      expect(await res.json()).toMatchObject({ type: "/docs/errors#internal_error", code: "internal_error", request_id: "req-1", hcc_cost: 0 })
    } finally {
      server.close()
    }
  })
})
