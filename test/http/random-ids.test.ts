/** Trace and span ids come from a pool of random bytes refilled in blocks (Guard.ts `randomHex`). */
import { describe, expect, it } from "vitest"
import { randomHex } from "../../src/http/Guard.ts"

describe("randomHex", () => {
  it("gives hex of the asked length, never repeating across many pool refills", () => {
    const ids = Array.from({ length: 5000 }, (_, i) => randomHex(i % 2 === 0 ? 16 : 8))
    for (const [i, id] of ids.entries()) expect(id).toMatch(i % 2 === 0 ? /^[0-9a-f]{32}$/ : /^[0-9a-f]{16}$/)
    expect(new Set(ids).size).toBe(ids.length)
    // 5,000 ids use 60,000 bytes: the 4 KiB pool was refilled ~15 times, and the bytes vary.
    const counts = new Map<string, number>()
    for (const ch of ids.join("")) counts.set(ch, (counts.get(ch) ?? 0) + 1)
    expect(counts.size).toBe(16)
    for (const n of counts.values()) expect(n).toBeGreaterThan(6000)
  })
})
