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

/** Allocates `bytes` (16-byte aligned), growing memory when needed; returns 0 if it cannot grow or leaves the region. */
export function alloc(bytes: usize): usize {
  const ptr = top
  const end = (ptr + bytes + 15) & ~15
  if (end > limit || end < ptr) return 0
  const have = <usize>memory.size() << 16
  if (end > have) {
    const pages = <i32>((end - have + 0xffff) >> 16)
    // Another thread may have grown the shared memory meanwhile: only fail if it is still short.
    if (memory.grow(pages) < 0 && (<usize>memory.size() << 16) < end) return 0
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
