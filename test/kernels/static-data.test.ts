/**
 * The core's memory is shared: every instance made over it (a compute thread starting, a refresh)
 * copies the module's active data segments into it again while other threads run kernels. That is
 * only harmless if the copy writes the bytes already there — if no segment is data the module
 * changes once it runs (a zeroed table its start function fills, say).
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { TENTH_SCORES } from "../../src/kernels/tenths.ts"
import { instantiateCore, WASM_PATH } from "../../src/kernels/WasmModule.ts"

/** An unsigned LEB128 at `at`: its value and the offset after it. */
const leb = (bytes: Uint8Array, at: number): readonly [number, number] => {
  let value = 0
  let shift = 0
  for (;;) {
    const b = bytes[at++]!
    value += (b & 0x7f) * 2 ** shift
    shift += 7
    if ((b & 0x80) === 0) return [value, at]
  }
}

/** The module's active data segments (WebAssembly core spec, 5.5.14: the data section, id 11). */
const activeSegments = (wasm: Uint8Array): ReadonlyArray<{ readonly offset: number; readonly bytes: Uint8Array }> => {
  const segments: Array<{ offset: number; bytes: Uint8Array }> = []
  let at = 8
  while (at < wasm.length) {
    const id = wasm[at++]!
    const [size, body] = leb(wasm, at)
    at = body + size
    if (id !== 11) continue
    let [count, p] = leb(wasm, body)
    for (; count > 0; count--) {
      const [flags, afterFlags] = leb(wasm, p)
      p = afterFlags
      if (flags === 2) p = leb(wasm, p)[1] // an explicit memory index
      let offset = -1
      if (flags !== 1) {
        // The offset: `i32.const n` then `end` (what AssemblyScript emits).
        expect(wasm[p]).toBe(0x41)
        let n = 0
        let shift = 0
        let q = p + 1
        for (;;) {
          const b = wasm[q++]!
          n |= (b & 0x7f) << shift
          shift += 7
          if ((b & 0x80) === 0) break
        }
        expect(wasm[q]).toBe(0x0b)
        offset = n
        p = q + 1
      }
      const [length, data] = leb(wasm, p)
      if (offset >= 0) segments.push({ offset, bytes: wasm.subarray(data, data + length) })
      p = data + length
    }
  }
  return segments
}

describe("the core's static data", () => {
  const segments = activeSegments(new Uint8Array(readFileSync(WASM_PATH)))

  it("is what a running instance holds: a new instance over a live memory rewrites nothing", () => {
    expect(segments.length).toBeGreaterThan(0)
    const core = instantiateCore()
    const memory = new Uint8Array(core.memory.buffer)
    for (const { bytes, offset } of segments) expect(Buffer.compare(memory.subarray(offset, offset + bytes.length), bytes)).toBe(0)
  })

  it("holds the byte → score table of the tenths storage, as the TypeScript twin has it", () => {
    const table = new Uint8Array(TENTH_SCORES.buffer, TENTH_SCORES.byteOffset, TENTH_SCORES.byteLength)
    expect(segments.some(({ bytes }) => bytes.length === table.length && Buffer.compare(bytes, table) === 0)).toBe(true)
  })
})
