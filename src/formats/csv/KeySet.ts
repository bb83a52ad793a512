/**
 * The keys of a table other tables reference, held while an import reads them: whole numbers from
 * 0 up as bits (one bit per number up to the largest seen: ten million patient ids in 1.25 MB), any
 * other key in a Set. So checking that a row's reference exists costs little memory however many
 * patients a dataset has.
 */

/** Above this a number is kept in the Set (a bitmap past it would be mostly empty). */
const MAX_BIT = 2 ** 31

/** A set of keys as text (see the module comment). */
export class KeySet {
  private bits = new Uint8Array(1024)
  private readonly others = new Set<string>()
  private count = 0

  private static bitOf(key: string): number | undefined {
    if (!/^\d{1,10}$/.test(key)) return undefined
    const n = Number(key)
    return n < MAX_BIT && String(n) === key ? n : undefined
  }

  /** Adds a key; false when it was there already. */
  add(key: string): boolean {
    const n = KeySet.bitOf(key)
    if (n === undefined) {
      if (this.others.has(key)) return false
      this.others.add(key)
      this.count++
      return true
    }
    const byte = n >>> 3
    if (byte >= this.bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.bits.length * 2))
      grown.set(this.bits)
      this.bits = grown
    }
    const mask = 1 << (n & 7)
    if ((this.bits[byte]! & mask) !== 0) return false
    this.bits[byte]! |= mask
    this.count++
    return true
  }

  /** Whether a key is in the set. */
  has(key: string): boolean {
    const n = KeySet.bitOf(key)
    if (n === undefined) return this.others.has(key)
    const byte = n >>> 3
    return byte < this.bits.length && (this.bits[byte]! & (1 << (n & 7))) !== 0
  }

  /** How many keys it holds. */
  get size(): number {
    return this.count
  }
}
