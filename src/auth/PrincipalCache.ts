/**
 * A short-lived cache of successful token look-ups, keyed by the token's SHA-256.
 *
 * Why: the look-up is the most expensive step of an authenticated request (one SQL round trip per
 * request). Cost of the cache: a token revoked (or an account changed) in another process keeps
 * working for at most `ttlMs` more; expiry is still checked on every request. Only successes are
 * cached, so unknown tokens never fill it; it holds at most `maxEntries` (oldest evicted first).
 */
/** TTL cache of principals (`P`: what a successful look-up gives, Accounts.ts's Principal). */
export class PrincipalCache<P> {
  private readonly entries = new Map<string, { readonly principal: P; readonly expiresAtMs: number | null; readonly until: number }>()
  readonly ttlMs: number
  readonly maxEntries: number

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.ttlMs = ttlMs
    this.maxEntries = maxEntries
  }

  /** The cached principal, if fresh and its token has not expired by `now`. */
  get(tokenHash: string, now: number): P | undefined {
    const e = this.entries.get(tokenHash)
    if (e === undefined) return undefined
    if (now >= e.until || (e.expiresAtMs !== null && now >= e.expiresAtMs)) {
      this.entries.delete(tokenHash)
      return undefined
    }
    return e.principal
  }

  /** Forgets every look-up (a token of this process revoked or cut short: it stops working here at once). */
  clear(): void {
    this.entries.clear()
  }

  /** Remembers a successful look-up made at `now`. */
  set(tokenHash: string, principal: P, expiresAt: string | null, now: number): void {
    if (this.ttlMs <= 0) return
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next()
      if (oldest.done !== true) this.entries.delete(oldest.value)
    }
    this.entries.set(tokenHash, { principal, expiresAtMs: expiresAt === null ? null : Date.parse(expiresAt), until: now + this.ttlMs })
  }
}
