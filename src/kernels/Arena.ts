/**
 * Memory ownership of the WASM core. Two kinds of allocation over the core's bump allocator:
 * - resident: long-lived buffers (columns loaded at start-up), made between batches;
 * - scoped: everything a batch needs, released all at once by `batch` when it returns or throws.
 * Kernel calls are synchronous and JavaScript is single-threaded, so batches never interleave.
 * The memory is shared (WasmModule.ts): growing it never detaches a view, so a resident buffer is
 * handed back as a view over the core's memory and the caller's copy can go (held once).
 */
import type { CoreExports } from "./WasmModule.ts"

/** Typed-array constructors the arena can copy in and out. */
type View = Float64Array | Float32Array | Int32Array | Uint8Array

/** One batch's allocations. */
export interface BatchScope {
  /** Allocates `n` elements of the given width (bytes) and returns the pointer. */
  readonly alloc: (bytes: number) => number
  /** Copies a typed array in; returns its pointer. */
  readonly copyIn: (data: View) => number
  readonly f64: (ptr: number, length: number) => Float64Array
  readonly i32: (ptr: number, length: number) => Int32Array
  readonly u8: (ptr: number, length: number) => Uint8Array
}

/** The arena over one core instance. */
export class Arena {
  readonly core: CoreExports
  private inBatch = false

  constructor(core: CoreExports) {
    this.core = core
  }

  private allocOrThrow(bytes: number): number {
    // Addresses past 2 GiB come back from an i32 as negative numbers: read them unsigned.
    const asked = Math.max(16, bytes)
    const ptr = this.core.alloc(asked) >>> 0
    if (ptr !== 0) return ptr
    // The core returns 0 for two reasons, told apart by the memory's size: the arena's region
    // (setArena) ends before the allocation would, or the memory could not grow to hold it. The
    // allocation ends where the core's would, on a 16-byte boundary.
    const top = this.core.mark() >>> 0
    const size = this.core.memory.buffer.byteLength
    throw new Error(Math.ceil((top + asked) / 16) * 16 <= size
      ? `WASM arena full: ${bytes} bytes do not fit in its region (it is at byte ${top} of ${size}; its region ends before)`
      : `WASM memory could not grow by ${bytes} bytes (the arena is at byte ${top}; the memory holds ${size})`)
  }

  private copy(data: View, ptr: number): void {
    new Uint8Array(this.core.memory.buffer, ptr, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength))
  }

  /** Copies `data` into memory that lives as long as the process (only between batches). */
  resident(data: View): number {
    if (this.inBatch) throw new Error("resident allocation inside a batch")
    const ptr = this.allocOrThrow(data.byteLength)
    this.copy(data, ptr)
    return ptr
  }

  /**
   * A resident buffer of `length` elements the caller fills in place (the loader, a range at a
   * time, so no one copy holds the thread): its values are unspecified until written.
   */
  residentBuffer<T extends View>(Ctor: { readonly BYTES_PER_ELEMENT: number; new(buffer: ArrayBufferLike, offset: number, length: number): T }, length: number): { readonly ptr: number; readonly view: T } {
    if (this.inBatch) throw new Error("resident allocation inside a batch")
    const ptr = this.allocOrThrow(length * Ctor.BYTES_PER_ELEMENT)
    return { ptr, view: new Ctor(this.core.memory.buffer, ptr, length) }
  }

  /** {@link resident}, and a view of the same type over the copy in the core's memory (use it instead of `data`). */
  residentView<T extends View>(data: T): { readonly ptr: number; readonly view: T } {
    const ptr = this.resident(data)
    const Ctor = data.constructor as new(buffer: ArrayBufferLike, offset: number, length: number) => T
    return { ptr, view: new Ctor(this.core.memory.buffer, ptr, data.length) }
  }

  /** Runs `f` with a scope whose allocations are all freed when it returns (or throws). */
  batch<A>(f: (scope: BatchScope) => A): A {
    const mark = this.core.mark() >>> 0
    this.inBatch = true
    try {
      const memory = this.core.memory
      return f({
        alloc: (bytes) => this.allocOrThrow(bytes),
        copyIn: (data) => {
          const ptr = this.allocOrThrow(data.byteLength)
          this.copy(data, ptr)
          return ptr
        },
        f64: (ptr, length) => new Float64Array(memory.buffer, ptr, length).slice(),
        i32: (ptr, length) => new Int32Array(memory.buffer, ptr, length).slice(),
        u8: (ptr, length) => new Uint8Array(memory.buffer, ptr, length).slice()
      })
    } finally {
      this.inBatch = false
      this.core.reset(mark)
    }
  }

  /** Bytes of linear memory in use right now (for leak tests). */
  get used(): number {
    return this.core.mark() >>> 0
  }
}
