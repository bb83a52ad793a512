/**
 * A small seeded random source for the generator: the same (seed, stream, index) always gives the
 * same numbers, on every machine, so each patient, study and surveillance series draws from its
 * own stream and the dataset does not depend on the order things are generated in.
 *
 * Generator: sfc32 (Chris Doty-Humphrey's Small Fast Counting generator, PractRand-clean to 2^40+
 * bytes), seeded through a MurmurHash3-style integer mix. Not for cryptography.
 */

/** Mixes 32-bit words into one well-spread 32-bit word (MurmurHash3 fmix32 finaliser). */
const mix = (h: number, k: number): number => {
  h = Math.imul(h ^ k, 0x85eb_ca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2_ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/** A deterministic stream of pseudo-random numbers. */
export class Rng {
  private a: number
  private b: number
  private c: number
  private d: number
  private spare = Number.NaN

  /** The stream for one seed, stream name (a small integer) and index (e.g. a patient id). */
  constructor(seed: number, stream: number, index: number) {
    const h = mix(mix(mix(0x9e37_79b9, seed), stream), index)
    this.a = h
    this.b = mix(h, 1)
    this.c = mix(h, 2)
    this.d = 1
    for (let i = 0; i < 12; i++) this.next()
  }

  /** Uniform 32-bit unsigned integer. */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** Uniform in [0, 1). */
  uniform(): number {
    return this.next() / 4_294_967_296
  }

  /** Uniform in [lo, hi). */
  between(lo: number, hi: number): number {
    return lo + (hi - lo) * this.uniform()
  }

  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.uniform() * (hi - lo + 1))
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.uniform() < p
  }

  /** Standard normal (Marsaglia's polar method; the second value of each pair is kept). */
  normal(): number {
    if (!Number.isNaN(this.spare)) {
      const s = this.spare
      this.spare = Number.NaN
      return s
    }
    let u = 0
    let v = 0
    let s = 0
    do {
      u = 2 * this.uniform() - 1
      v = 2 * this.uniform() - 1
      s = u * u + v * v
    } while (s >= 1 || s === 0)
    const f = Math.sqrt((-2 * Math.log(s)) / s)
    this.spare = v * f
    return u * f
  }

  /** Poisson count with mean λ (Knuth's product method below 30, a rounded normal above). */
  poisson(lambda: number): number {
    if (lambda <= 0) return 0
    if (lambda > 30) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * this.normal()))
    const limit = Math.exp(-lambda)
    let k = 0
    let p = this.uniform()
    while (p > limit) {
      k++
      p *= this.uniform()
    }
    return k
  }

  /** One item of a list, with the given weights (need not sum to 1). */
  weighted<A>(items: ReadonlyArray<A>, weights: ReadonlyArray<number>): A {
    let total = 0
    for (const w of weights) total += w
    let r = this.uniform() * total
    for (let i = 0; i < items.length; i++) {
      r -= weights[i]!
      if (r < 0) return items[i]!
    }
    return items[items.length - 1]!
  }
}
