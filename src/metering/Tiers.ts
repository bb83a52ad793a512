/** Account tiers and their limits (README.md and docs/api.md, "Limits and headers"). */

/** Tier identifiers as stored and accepted by the CLI. */
export const TIERS = ["starter", "professional", "enterprise", "unlimited"] as const
/** One tier identifier. */
export type Tier = (typeof TIERS)[number]

/** Limits of a tier: `daily` undefined = no daily cap. */
export interface TierLimits {
  readonly title: string
  readonly daily: number | undefined
  readonly burst: number
}

/** The published limits; Unlimited's burst is the default of a per-account setting. */
export const TIER_LIMITS: Readonly<Record<Tier, TierLimits>> = {
  starter: { title: "Starter", daily: 100, burst: 10 },
  professional: { title: "Professional", daily: 1_000, burst: 50 },
  enterprise: { title: "Enterprise", daily: 10_000, burst: 200 },
  unlimited: { title: "Unlimited", daily: undefined, burst: 1_000 }
}

/** Length of the rolling burst window, in milliseconds. */
export const BURST_WINDOW_MS = 60_000

/** The limits that bind an account: its overrides where set, else its tier's. */
export const effectiveLimits = (
  tier: Tier,
  overrides: { readonly dailyLimit: number | null; readonly burstLimit: number | null }
): { readonly daily: number | undefined; readonly burst: number } => ({
  daily: overrides.dailyLimit ?? TIER_LIMITS[tier].daily,
  burst: overrides.burstLimit ?? TIER_LIMITS[tier].burst
})
