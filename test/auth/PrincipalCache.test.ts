/** The principal cache honours its TTL, the token's own expiry, and its size bound. */
import { describe, expect, it } from "vitest"
import type { Principal } from "../../src/auth/Accounts.ts"
import { PrincipalCache } from "../../src/auth/PrincipalCache.ts"

const principal = (id: string): Principal => ({
  account: { id, name: id, tier: "starter", dailyLimit: null, burstLimit: null, createdAt: "2026-01-01T00:00:00.000Z", disabledAt: null },
  tokenId: `tok_${id}`,
  tokenExpiresAt: null
})

describe("PrincipalCache", () => {
  it("returns an entry until its TTL runs out", () => {
    const c = new PrincipalCache<Principal>(1000)
    c.set("h", principal("a"), null, 10_000)
    expect(c.get("h", 10_999)?.account.id).toBe("a")
    expect(c.get("h", 11_000)).toBeUndefined()
  })
  it("never outlives the token's expiry", () => {
    const c = new PrincipalCache<Principal>(60_000)
    c.set("h", principal("a"), new Date(10_500).toISOString(), 10_000)
    expect(c.get("h", 10_499)).toBeDefined()
    expect(c.get("h", 10_500)).toBeUndefined()
  })
  it("caches nothing with a TTL of 0 and evicts the oldest past its size", () => {
    const off = new PrincipalCache<Principal>(0)
    off.set("h", principal("a"), null, 0)
    expect(off.get("h", 0)).toBeUndefined()
    const small = new PrincipalCache<Principal>(1000, 2)
    small.set("a", principal("a"), null, 0)
    small.set("b", principal("b"), null, 0)
    small.set("c", principal("c"), null, 0)
    expect(small.get("a", 1)).toBeUndefined()
    expect(small.get("c", 1)?.account.id).toBe("c")
  })
})
