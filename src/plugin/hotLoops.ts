/**
 * Readying functions whose loops run long (over patients, rows) for V8's optimizer.
 *
 * V8 13 (Node 24) optimizes a loop while it runs (on-stack replacement, OSR) — during the
 * function's first long call, before the code after the loop has ever run. That compiled code has
 * no type feedback for what follows the loop and bails out there ("insufficient type feedback"),
 * yet V8 keeps it and enters it again on every later call, which bails out again at the same
 * place: each call then runs its first thousands of iterations in the interpreter, boxing every
 * floating-point value it computes: one such loop over every patient makes most of a compute
 * thread's garbage.
 *
 * Two ways out, both used by the built-in plugins: end a loop's function with `return` of a local (nothing after the
 * loop needs feedback then), or — for a loop with several results — call the function on a tiny
 * input first, so that every line of it has run by the time its loop gets long: {@link primed}.
 */

/** Calls past V8's threshold for keeping type feedback (8 by default), then some. */
const PRIMING_CALLS = 16

/**
 * `f`, after calling it {@link PRIMING_CALLS} times with `tiny` — arguments of the same types as
 * the real ones (typed arrays of the same element type, numbers), that take every path after the
 * loops (e.g. one member with a value). Its results are discarded; `tiny` may be written.
 */
export const primed = <A extends ReadonlyArray<unknown>, R>(f: (...args: A) => R, ...tiny: NoInfer<A>): ((...args: A) => R) => {
  for (let i = 0; i < PRIMING_CALLS; i++) f(...tiny)
  return f
}
