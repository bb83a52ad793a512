/**
 * How a score quantity (a score, a mean, a difference or SD of scores, a slope in points per month)
 * is compared with a threshold, everywhere in the service: with a tolerance of 10⁻⁶ points, so a
 * value that equals the threshold in decimal arithmetic counts as equal however binary floating
 * point rounded it. Scores are recorded to 0.1 point and held as 32-bit floats in the panel
 * (representation error < 4.8·10⁻⁷ on 0–10), so distinct recorded values never come within the
 * tolerance of each other, and rounding never carries a value across it. Statistics (r, R², t, p)
 * are compared as computed. docs/analytics.md, "Comparing scores with thresholds".
 *
 * Twin: assembly/kernels/common.ts (SCORE_TOLERANCE, atLeast, atMost, below, above).
 */

/** The tolerance, in points. */
export const SCORE_TOLERANCE = 1e-6

/** x ≥ t. */
export const atLeast = (x: number, t: number): boolean => x >= t - SCORE_TOLERANCE
/** x ≤ t. */
export const atMost = (x: number, t: number): boolean => x <= t + SCORE_TOLERANCE
/** x < t: below t by more than the tolerance. */
export const below = (x: number, t: number): boolean => x < t - SCORE_TOLERANCE
/** x > t: above t by more than the tolerance. */
export const above = (x: number, t: number): boolean => x > t + SCORE_TOLERANCE
