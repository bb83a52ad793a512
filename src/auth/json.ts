/**
 * Accounts and tokens as JSON, as the HTTP API names things: the account portal answers with these
 * shapes and `hcc accounts … --json` prints them, so a script reads either the same way.
 */
import type { Account, TokenInfo } from "./Accounts.ts"
import { effectiveLimits, TIER_LIMITS } from "../metering/Tiers.ts"

/** An account as the HTTP API names things (the catalog's tier names and limit fields). */
export const accountJson = (a: Account) => {
  const limits = effectiveLimits(a.tier, a)
  return {
    id: a.id,
    name: a.name,
    tier: TIER_LIMITS[a.tier].title,
    daily_limit: limits.daily ?? null,
    burst_per_minute: limits.burst,
    overrides: { daily_limit: a.dailyLimit, burst_per_minute: a.burstLimit },
    created_at: a.createdAt,
    disabled_at: a.disabledAt
  }
}

/** A token's metadata as JSON (never the token, except once from `tokens issue`). */
export const tokenJson = (t: TokenInfo) => ({
  id: t.id,
  account_id: t.accountId,
  label: t.label,
  created_at: t.createdAt,
  expires_at: t.expiresAt,
  revoked_at: t.revokedAt,
  last_used_at: t.lastUsedAt
})
