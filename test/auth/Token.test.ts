/** The token format (docs/api.md, "Authentication"): shape, checksum, and that the checksum catches every single-character change. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Token from "../../src/auth/Token.ts"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

describe("Token", () => {
  it("generates hcc_ + 30 base62 + a 6-character base62 CRC-32", () => {
    for (let i = 0; i < 200; i++) {
      const t = Token.generate()
      expect(t).toMatch(/^hcc_[0-9A-Za-z]{36}$/)
      expect(t.length).toBe(Token.TOKEN_LENGTH)
      expect(Token.isWellFormed(t)).toBe(true)
      expect(t.slice(34)).toBe(Token.checksum(t.slice(4, 34)))
    }
  })
  it("has a known checksum for a fixed body (CRC-32 of the ASCII body, base62, zero-padded)", () => {
    // CRC-32 of thirty ASCII "0" = 0x77E5DB82 = 2,011,552,642 → base62 "2C8GjS" (computed with Python's zlib.crc32)
    expect(Token.checksum("0".repeat(30))).toBe("2C8GjS")
  })
  it("rejects every token with one character changed", () => {
    fc.assert(
      fc.property(fc.integer({ min: 4, max: 39 }), fc.integer({ min: 1, max: 61 }), (pos, shift) => {
        const t = Token.generate()
        const c = ALPHABET[(ALPHABET.indexOf(t[pos]!) + shift) % 62]!
        const changed = t.slice(0, pos) + c + t.slice(pos + 1)
        return !Token.isWellFormed(changed)
      }),
      { numRuns: 2000 }
    )
  })
  it("rejects other shapes", () => {
    const t = Token.generate()
    for (const bad of ["", "hcc_", t.slice(0, -1), t + "0", "HCC_" + t.slice(4), t.replace("hcc_", "hcd_"), t.slice(0, 10) + "-" + t.slice(11)]) {
      expect(Token.isWellFormed(bad)).toBe(false)
    }
  })
  it("hashes with SHA-256 (hex)", () => {
    expect(Token.hash("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  })
  it("draws tokens without repeats", () => {
    const seen = new Set(Array.from({ length: 5000 }, Token.generate))
    expect(seen.size).toBe(5000)
  })
})
