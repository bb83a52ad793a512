/**
 * Memory ownership of the WASM core. Two kinds of allocation over the core's bump allocator:
 * - resident: long-lived buffers (columns loaded at start-up), made between batches;
 * - scoped: everything a batch needs, released all at once by `batch` when it returns or throws.
 * Kernel calls are synchronous and JavaScript is single-threaded, so batches never interleave.
 * Views over `memory.buffer` are made after allocating, because growing memory detaches old views.
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
    const ptr = this.core.alloc(Math.max(16, bytes))
    if (ptr === 0) throw new Error(`WASM memory could not grow by ${bytes} bytes`)
    return ptr
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

  /** Runs `f` with a scope whose allocations are all freed when it returns (or throws). */
  batch<A>(f: (scope: BatchScope) => A): A {
    const mark = this.core.mark()
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
    return this.core.mark()
  }
}
