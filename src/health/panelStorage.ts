/**
 * The axis panel as the loader fills it: in tenths (one byte a score, src/kernels/tenths.ts) while
 * every score allows, wide (f32) from the first score off the 0.1 grid on, or wide throughout when
 * the operator asks (`HCC_SCORES=wide`). Both give the same answers; tenths take a quarter of the
 * memory and of the bytes a scan reads.
 */
import type { Arena } from "../kernels/Arena.ts"
import { MISSING_TENTH, TENTH_SCORES, tenthOf, toTenths } from "../kernels/tenths.ts"

/** How the axis scores are held: `compact` = in tenths when every score allows, `wide` = 32-bit floats. */
export type ScoreStorage = "compact" | "wide"

/** A panel being filled: `clear` a range (all missing), `set` scores, then `data` and `ptr` (in the core's memory, or undefined). */
export interface PanelFill {
  readonly clear: (from: number, to: number) => void
  readonly set: (i: number, score: number) => void
  readonly result: () => { readonly data: Float32Array | Uint8Array; readonly ptr: number | undefined }
}

/** A buffer of `length` elements: resident in the core's memory when there is an arena. */
const buffer = <T extends Float32Array | Uint8Array>(Ctor: { readonly BYTES_PER_ELEMENT: number; new(buffer: ArrayBufferLike, offset: number, length: number): T; new(length: number): T }, length: number, arena: Arena | undefined) =>
  arena === undefined ? { view: new Ctor(length), ptr: undefined } : arena.residentBuffer(Ctor, length)

/** The wide copy of a tenths panel (every element decoded, so ranges not yet filled are simply overwritten later). */
export const widen = (tenths: Uint8Array, arena: Arena | undefined) => {
  const wide = buffer(Float32Array, tenths.length, arena)
  for (let i = 0; i < tenths.length; i++) wide.view[i] = TENTH_SCORES[tenths[i]!]!
  return wide
}

/** A panel of `length` scores to fill, held as `storage` asks (see the module comment). */
export const panelFill = (length: number, storage: ScoreStorage, arena: Arena | undefined): PanelFill => {
  let tenths = storage === "compact" ? buffer(Uint8Array, length, arena) : undefined
  let wide = tenths === undefined ? buffer(Float32Array, length, arena) : undefined
  return {
    clear: (from, to) => {
      if (tenths !== undefined) tenths.view.fill(MISSING_TENTH, from, to)
      else wide!.view.fill(Number.NaN, from, to)
    },
    set: (i, score) => {
      if (tenths !== undefined) {
        const c = tenthOf(score)
        if (c >= 0) {
          tenths.view[i] = c
          return
        }
        // The first score off the grid: the panel is held wide from here on.
        wide = widen(tenths.view, arena)
        tenths = undefined
      }
      wide!.view[i] = score
    },
    result: () => (tenths !== undefined ? { data: tenths.view, ptr: tenths.ptr } : { data: wide!.view, ptr: wide!.ptr })
  }
}

/**
 * A panel as it was kept (a snapshot written under the other setting), held as `storage` asks:
 * widened, or put in tenths when every score allows.
 */
export const heldAs = (data: Float32Array | Uint8Array, storage: ScoreStorage): Float32Array | Uint8Array =>
  data instanceof Uint8Array ? (storage === "wide" ? widen(data, undefined).view : data) : storage === "compact" ? (toTenths(data) ?? data) : data
