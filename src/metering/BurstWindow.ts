/**
 * An exact rolling-window counter: at most `limit` admissions in any `windowMs` span.
 * Keeps the admission times still inside the window in a circular buffer of capacity `limit`;
 * every operation is amortised O(1). Times are milliseconds from the caller's Clock.
 */

/** Outcome of one admission attempt. */
export interface BurstDecision {
  readonly admitted: boolean
  /** Admissions left in the window after this decision. */
  readonly remaining: number
  /** Seconds until the oldest admission in the window leaves it (the window is full until then). */
  readonly resetSeconds: number
}

/** Per-account rolling window. */
export class BurstWindow {
  private times: Float64Array
  private head = 0
  private size = 0
  readonly windowMs: number

  constructor(limit: number, windowMs: number) {
    this.times = new Float64Array(Math.max(1, limit))
    this.windowMs = windowMs
  }

  /** Current capacity (the limit it enforces). */
  get limit(): number {
    return this.times.length
  }

  private evict(now: number): void {
    const cap = this.times.length
    while (this.size > 0 && this.times[this.head]! <= now - this.windowMs) {
      this.head = (this.head + 1) % cap
      this.size--
    }
  }

  private reset(now: number): number {
    return this.size === 0 ? Math.ceil(this.windowMs / 1000) : Math.max(1, Math.ceil((this.times[this.head]! + this.windowMs - now) / 1000))
  }

  /** Changes the limit, keeping the newest admissions that still fit. */
  resize(limit: number): void {
    const cap = Math.max(1, limit)
    if (cap === this.times.length) return
    const next = new Float64Array(cap)
    const keep = Math.min(this.size, cap)
    for (let i = 0; i < keep; i++) {
      next[i] = this.times[(this.head + this.size - keep + i) % this.times.length]!
    }
    this.times = next
    this.head = 0
    this.size = keep
  }

  /** Admits one request at `now` if the window has room. */
  tryAcquire(now: number): BurstDecision {
    this.evict(now)
    const cap = this.times.length
    if (this.size >= cap) return { admitted: false, remaining: 0, resetSeconds: this.reset(now) }
    this.times[(this.head + this.size) % cap] = now
    this.size++
    return { admitted: true, remaining: cap - this.size, resetSeconds: this.reset(now) }
  }

  /** The state at `now` without admitting anything. */
  peek(now: number): { readonly used: number; readonly remaining: number; readonly resetSeconds: number } {
    this.evict(now)
    return { used: this.size, remaining: this.times.length - this.size, resetSeconds: this.reset(now) }
  }
}
