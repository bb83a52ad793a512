// The WASM core's export list (STYLE.md): ABI version, the arena allocator and the kernel batch
// entry points. Only numbers and pointers cross the boundary.
export { correlationMatrix, laggedXcorr } from "./kernels/correlation"
export { fitTrajectories } from "./kernels/trajectory"
export { evaluateRules } from "./kernels/decay-rules"
export { groupStats, maskCount, maskFlag, maskInSet, maskRange, quantiles } from "./kernels/cohort"
export { fitGlm, linearPredictor } from "./kernels/glm"
export {
  panelHistogramsTenths, panelMeanMask, panelMeanMaskTenths, panelSums, panelSumsTenths, panelTrend, panelTrendTenths, panelWindows, panelWindowsOf, panelWindowsOfTenths,
  panelWindowsTenths
} from "./kernels/panel"
export { panelPeriods, panelPeriodsTenths } from "./kernels/panel-periods"

/** Bumped whenever an export's signature or memory layout changes; the TS loader checks it. */
export const ABI_VERSION: i32 = 11

// Arena: a bump allocator over linear memory after the static data. The TypeScript side takes a
// mark before a batch and resets to it afterwards, so nothing outlives one call. The memory is
// imported and shared: several instances (one per compute thread) may run over it, each bumping
// inside its own region [top, limit) that the host assigns with `setArena` (src/kernels/SharedCore.ts).
let top: usize = (__heap_base + 15) & ~15
let limit: usize = <usize>-1

/** The memory's size in bytes, as a u64: at the maximum of 65,536 pages it is 2^32, which a 32-bit usize would read as 0. */
function memoryBytes(): u64 {
  return <u64>memory.size() << 16
}

/**
 * Allocates `bytes` (16-byte aligned), growing memory when needed; returns 0 if it cannot grow or
 * leaves the region. `memory.grow` adds pages to whatever size the memory has when it runs, and
 * other threads grow the shared memory too: a request sized from a size read before theirs can
 * reach past the maximum and fail although the memory could still cover `end`. So a failed grow
 * is asked again from the size now, until the memory covers `end` or cannot.
 */
export function alloc(bytes: usize): usize {
  const ptr = top
  const end = (ptr + bytes + 15) & ~15
  if (end > limit || end < ptr) return 0
  for (let attempt = 0; <u64>end > memoryBytes(); attempt++) {
    const have = memoryBytes()
    if (memory.grow(<i32>((<u64>end - have + 0xffff) >> 16)) >= 0) break
    // No other thread grew it since: the maximum is reached, or the host refused.
    if (memoryBytes() == have || attempt == 8) return 0
  }
  top = end
  return ptr
}

/** The current arena position (a mark to reset to). */
export function mark(): usize {
  return top
}

/** Frees everything allocated since `m` was taken. */
export function reset(m: usize): void {
  top = m
}

/** Where this instance's arena starts; the arena never passes `end` (0 = up to the memory's maximum). */
export function setArena(start: usize, end: usize): void {
  top = (start + 15) & ~15
  limit = end == 0 ? <usize>-1 : end
}

/** The first byte after the static data (where an arena may start). */
export function heapBase(): usize {
  return (__heap_base + 15) & ~15
}
