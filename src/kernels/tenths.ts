/**
 * The compact storage of axis scores: a score recorded to 0.1 point on 0–10 held as one byte, the
 * score × 10 (0–100), and {@link MISSING_TENTH} where it is missing — a quarter of the 32-bit float
 * the wide storage holds. A byte decodes to exactly that float: the score's f64 value (byte / 10,
 * correctly rounded) rounded once to f32, the same two steps by which the wide storage stores it.
 * A panel is kept in tenths when every score in it decodes so; otherwise it stays wide.
 *
 * Twin: assembly/kernels/panel.ts (scoreAt, load2).
 */
import type { Panel } from "./types.ts"

/** The byte of a missing score. */
export const MISSING_TENTH = 255

/** Byte → score as the wide storage holds it (an f32 value, as a number; NaN for every byte above 100). */
export const TENTH_SCORES: Float64Array = Float64Array.from({ length: 256 }, (_, c) => (c <= 100 ? Math.fround(c / 10) : Number.NaN))

/**
 * The byte that decodes to exactly the f32 the wide storage would hold for `x` (NaN → MISSING_TENTH),
 * or −1 when there is none (a score off the 0.1 grid, or outside 0–10).
 */
export const tenthOf = (x: number): number => {
  if (Number.isNaN(x)) return MISSING_TENTH
  const c = Math.round(x * 10)
  return c >= 0 && c <= 100 && TENTH_SCORES[c] === Math.fround(x) ? c : -1
}

/** The panel's scores in tenths, or undefined when one of them is not on the 0.1 grid of 0–10. */
export const toTenths = (wide: Float32Array): Uint8Array | undefined => {
  const out = new Uint8Array(wide.length)
  for (let i = 0; i < wide.length; i++) {
    const c = tenthOf(wide[i]!)
    if (c < 0) return undefined
    out[i] = c
  }
  return out
}

/** Element i of a panel's data as the score it holds (NaN when missing), whichever the storage. */
export const scoreReader = (data: Panel["data"]): (i: number) => number =>
  data instanceof Uint8Array ? (i) => TENTH_SCORES[data[i]!]! : (i) => data[i]!
