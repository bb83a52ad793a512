/**
 * The core's allocator (assembly/index.ts `alloc`) over its shared memory, at the memory's limits:
 * at the maximum of 65,536 pages (4 GiB, reserved and made accessible, none of it touched) it
 * still hands out what the memory covers, and refuses only what lies past the region or the memory;
 * a memory another instance grew meanwhile is not grown again. The arena's error says which of
 * the two refused.
 */
import { describe, expect, it } from "vitest"
import { Arena } from "../../src/kernels/Arena.ts"
import { instantiateCore, MAX_PAGES, newCoreMemory, WASM_PATH } from "../../src/kernels/WasmModule.ts"

const PAGE = 65_536
const pages = (memory: WebAssembly.Memory) => memory.buffer.byteLength / PAGE

describe("the core's allocator", () => {
  it("at the memory's maximum, allocates what the memory covers and refuses only what is past it", () => {
    const memory = newCoreMemory()
    const core = instantiateCore(WASM_PATH, memory)
    memory.grow(MAX_PAGES - pages(memory))
    expect(pages(memory)).toBe(MAX_PAGES)
    core.setArena(core.heapBase(), 0)
    const low = core.alloc(1024) >>> 0
    expect(low).toBe(core.heapBase())
    // The last 16-byte block below 4 GiB, then nothing more.
    const last = 2 ** 32 - 1024
    core.setArena(last, 0)
    expect(core.alloc(1024 - 16) >>> 0).toBe(last)
    expect(core.alloc(16)).toBe(0)
    expect(pages(memory)).toBe(MAX_PAGES)
  })

  it("an allocation the memory already covers, grown by another instance over it, does not grow it", () => {
    const memory = newCoreMemory()
    const [a, b] = [instantiateCore(WASM_PATH, memory), instantiateCore(WASM_PATH, memory)]
    const regionB = 64 * PAGE
    b.setArena(regionB, 0)
    expect(b.alloc(PAGE) >>> 0).toBe(regionB)
    const grown = pages(memory)
    expect(grown).toBe(65)
    a.setArena(a.heapBase(), regionB)
    expect(a.alloc(32 * PAGE) >>> 0).toBe(a.heapBase())
    expect(pages(memory)).toBe(grown)
    // Past its region: refused, the memory as it was.
    expect(a.alloc(40 * PAGE)).toBe(0)
    expect(pages(memory)).toBe(grown)
  })

  it("a refused allocation says whether the arena's region or the memory ran out", () => {
    const memory = newCoreMemory()
    const core = instantiateCore(WASM_PATH, memory)
    const arena = new Arena(core)
    core.setArena(core.heapBase(), core.heapBase() + PAGE)
    memory.grow(4)
    expect(() => arena.batch((s) => s.alloc(2 * PAGE))).toThrow(/^WASM arena full: 131072 bytes do not fit in its region \(it is at byte \d+ of 1310720; its region ends before\)$/)
    // Past the memory's 4 GiB: no region limit, and the memory cannot grow that far.
    core.setArena(2 ** 32 - 2 * PAGE, 0)
    expect(() => arena.batch((s) => s.alloc(4 * PAGE))).toThrow(/^WASM memory could not grow by 262144 bytes \(the arena is at byte 4294836224; the memory holds 1310720\)$/)
  })
})
