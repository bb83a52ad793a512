/** Random axis panels for the panel kernels' property tests (test/kernels/panel.test.ts, tenths.test.ts). */
import fc from "fast-check"

/**
 * A panel of nAxes × nPatients × nMonths one-decimal scores with ~15 % gaps, a mask (a share
 * `selected(seed)` of the patients), a month range and month groups; `rand` goes on with the same
 * stream for whatever else a test draws.
 */
export const panelCase = (maxPatients: number, selected: (seed: number) => number = () => 0.7) =>
  fc.record({
    nPatients: fc.integer({ min: 1, max: maxPatients }),
    nAxes: fc.integer({ min: 1, max: 8 }),
    nMonths: fc.integer({ min: 1, max: 40 }),
    seed: fc.integer({ min: 1, max: 2 ** 30 })
  }).map(({ nAxes, nMonths, nPatients, seed }) => {
    let s = seed
    const rand = () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
    const data = Float32Array.from({ length: nAxes * nPatients * nMonths }, () => (rand() < 0.15 ? Number.NaN : Math.round(rand() * 100) / 10))
    const share = selected(seed)
    const mask = Uint8Array.from({ length: nPatients }, () => (rand() < share ? 1 : 0))
    const from = Math.floor(rand() * nMonths)
    const to = from + Math.floor(rand() * (nMonths - from + 1))
    const nGroups = 1 + Math.floor(rand() * 5)
    const monthGroup = Int32Array.from({ length: nMonths }, () => Math.floor(rand() * (nGroups + 1)) - 1)
    return { data, nAxes, nMonths, nPatients, mask, from, to, nGroups, monthGroup, rand }
  })
