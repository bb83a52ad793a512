/**
 * Portal passwords as NIST SP 800-63B (§5.1.1.2, memorized secrets) asks: at least 12 characters
 * (Unicode code points, after NFKC normalisation), up to 256, no composition rules, refused when on a
 * list of commonly used passwords (zxcvbn-ts's common list, shipped as a dependency) or made of the
 * service's or the person's own words or of one repeated or running sequence. Stored only as an
 * scrypt hash (RFC 7914) at OWASP's Password Storage parameters: N = 2^17, r = 8, p = 1 (128 MiB
 * and a few hundred milliseconds per hash, on libuv's pool, off the event loop), a 16-byte random
 * salt and a 32-byte key, written `scrypt$17$8$1$<salt>$<key>` (base64url), so the parameters can
 * rise later without breaking stored hashes.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"

/** The shortest password accepted (NIST SP 800-63B-4 asks 15 for a single factor, 8 at least; we take 12 with a blocklist). */
export const MIN_PASSWORD = 12
/** The longest (a bound on the hash's input, as NIST allows: at least 64). */
export const MAX_PASSWORD = 256

const LOG_N = 17
const R = 8
const P = 1
const KEY_BYTES = 32
/** scrypt needs 128 · N · r bytes; Node's default cap (32 MiB) is below that at N = 2^17. */
const MAXMEM = 256 * 1024 * 1024

let common: ReadonlySet<string> | undefined
/** The common-password list, loaded at first use. */
const commonPasswords = Effect.promise(async () => {
  if (common !== undefined) return common
  const { dictionary } = await import("@zxcvbn-ts/language-common")
  return (common = new Set(dictionary["passwords-common"].map((p) => p.toLowerCase())))
})

/** Code points of a string (a password's length as a person counts it). */
const codePoints = (s: string): number => [...s].length

/** Whether every character is the one before it, or one more or one less (aaaa…, 1234…, dcba…). */
const oneRun = (s: string): boolean => {
  const cs = [...s].map((c) => c.codePointAt(0)!)
  const step = cs[1]! - cs[0]!
  return Math.abs(step) <= 1 && cs.every((c, i) => i === 0 || c - cs[i - 1]! === step)
}

/**
 * Why a new password is refused, or undefined when it is accepted. `own` are words of the context
 * (the person's e-mail address and its parts, the service's name) the password may not merely be.
 */
export const passwordProblem = (password: string, own: ReadonlyArray<string>): Effect.Effect<string | undefined> =>
  Effect.map(commonPasswords, (list) => {
    const normal = password.normalize("NFKC")
    const length = codePoints(normal)
    if (length < MIN_PASSWORD) return `is shorter than ${MIN_PASSWORD} characters`
    if (length > MAX_PASSWORD) return `is longer than ${MAX_PASSWORD} characters`
    const lower = normal.toLowerCase()
    if (list.has(lower)) return "is on a list of commonly used passwords; choose another"
    if (oneRun(lower)) return "is one repeated or running sequence of characters; choose another"
    const bare = lower.replace(/[^\p{L}\p{N}]/gu, "")
    for (const word of own) {
      const w = word.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "")
      if (w.length >= 4 && bare.replace(/\d+$/, "") === w) return "is your e-mail address or the service's name; choose another"
    }
    return undefined
  })

const b64 = (b: Buffer) => b.toString("base64url")

const derive = (password: string, salt: Buffer, logN: number, r: number, p: number, bytes: number) =>
  Effect.callback<Buffer>((resume) => {
    scrypt(password.normalize("NFKC"), salt, bytes, { N: 2 ** logN, r, p, maxmem: MAXMEM }, (error, key) => {
      // Only a bad parameter fails scrypt; the stored ones are ours.
      if (error !== null) resume(Effect.die(error))
      else resume(Effect.succeed(key))
    })
  })

/**
 * The cost exponent of new hashes (N = 2^it): OWASP's 17. There is no setting for it: a served
 * process always hashes at 17. Only a program that runs the service inside its own process can
 * provide a lower one — the test suite's server thread does, for its many sign-ups and sign-ins
 * (hashPassword's own test holds the default to 17).
 */
export const PasswordWork = Context.Reference<number>("hcc/PasswordWork", { defaultValue: () => LOG_N })

/** The stored form of a password (module comment). */
export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const logN = yield* PasswordWork
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, logN, R, P, KEY_BYTES)
    return `scrypt$${logN}$${R}$${P}$${b64(salt)}$${b64(key)}`
  })

/** A hash to compare against when there is no person (at the cost of new hashes), so a wrong e-mail costs as long as a wrong password. */
export const dummyHash: Effect.Effect<string> = Effect.gen(function*() {
  const logN = yield* PasswordWork
  return `scrypt$${logN}$${R}$${P}$${b64(Buffer.alloc(16))}$${b64(Buffer.alloc(KEY_BYTES))}`
})

/** Whether `password` matches a stored hash (constant-time comparison of the keys). */
export const verifyPassword = (password: string, stored: string): Effect.Effect<boolean> => {
  const parts = stored.split("$")
  if (parts.length !== 6 || parts[0] !== "scrypt") return Effect.succeed(false)
  const [logN, r, p] = parts.slice(1, 4).map(Number) as [number, number, number]
  const salt = Buffer.from(parts[4]!, "base64url")
  const expected = Buffer.from(parts[5]!, "base64url")
  if (codePoints(password) > MAX_PASSWORD) return Effect.succeed(false)
  return Effect.map(derive(password, salt, logN, r, p, expected.length), (key) => timingSafeEqual(key, expected))
}
