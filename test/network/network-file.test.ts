/** The network file (src/network/NetworkFile.ts): read as documented, and refused with each problem's path and reason. */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { NetworkFileError, readNetworkFile } from "../../src/network/NetworkFile.ts"
import { tempDataDir } from "../support/server.ts"

const fileWith = (text: string) => {
  const file = join(tempDataDir(), "network.json")
  writeFileSync(file, text)
  return file
}
const problems = (text: string) => {
  try {
    readNetworkFile(fileWith(text))
  } catch (e) {
    expect(e).toBeInstanceOf(NetworkFileError)
    return (e as NetworkFileError).message
  }
  throw new Error("the file was accepted")
}

describe("the network file", () => {
  it("gives the sites, their URLs without a trailing slash, and the deadline (30 s by default)", () => {
    const net = readNetworkFile(fileWith(JSON.stringify({ members: [{ name: "site-north", url: "https://hcc.north.example/", token: "t" }] })))
    expect(net).toEqual({ members: [{ name: "site-north", url: "https://hcc.north.example", token: "t" }], deadlineMs: 30_000 })
    expect(readNetworkFile(fileWith(JSON.stringify({ members: [{ name: "a", url: "http://127.0.0.1:1", token: "t" }], deadline_seconds: 2.5 }))).deadlineMs).toBe(2500)
  })

  it("refuses a file that is not JSON, a bad name or URL, no sites, an unknown field and a name used twice, saying where", () => {
    expect(problems("{")).toMatch(/not JSON/)
    expect(problems(JSON.stringify({ members: [] }))).toMatch(/members/)
    expect(problems(JSON.stringify({ members: [{ name: "North Site", url: "https://x.example", token: "t" }] }))).toMatch(/kebab-case[\s\S]*\["members"\]\[0\]\["name"\]/)
    expect(problems(JSON.stringify({ members: [{ name: "a", url: "ftp://x", token: "t" }] }))).toMatch(/http\(s\) base URL/)
    expect(problems(JSON.stringify({ members: [{ name: "a", url: "https://x.example", token: "t" }], deadline: 3 }))).toMatch(/deadline/)
    expect(problems(JSON.stringify({ members: [{ name: "a", url: "https://x.example", token: "t" }, { name: "a", url: "https://y.example", token: "u" }] }))).toMatch(/the name a is used twice/)
  })

  it("never puts a token in its messages", () => {
    expect(problems(JSON.stringify({ members: [{ name: "a", url: "nope", token: "secret-token-123" }] }))).not.toContain("secret-token-123")
  })
})
