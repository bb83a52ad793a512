/**
 * HCC token format (docs/api.md, "Authentication"): `hcc_` + 30 random base62 characters + a 6-character base62
 * CRC-32 of those 30. The checksum lets a secret scanner (or this service) reject noise offline,
 * before any database look-up. Tokens are stored only as their SHA-256 hash.
 */
import { createHash, randomInt } from "node:crypto"
import { crc32 } from "node:zlib"

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const PREFIX = "hcc_"
const BODY_LENGTH = 30
const CHECK_LENGTH = 6
/** Total length of a token: prefix, body and checksum. */
export const TOKEN_LENGTH = PREFIX.length + BODY_LENGTH + CHECK_LENGTH
const SHAPE = /^hcc_[0-9A-Za-z]{36}$/

/** Base62 of a non-negative integer below 62^width, left-padded with '0' to `width` characters. */
const base62 = (value: number, width: number): string => {
  let out = ""
  let v = value
  for (let i = 0; i < width; i++) {
    out = ALPHABET[v % 62]! + out
    v = Math.floor(v / 62)
  }
  return out
}

/** The 6-character checksum of a 30-character body (CRC-32 < 2^32 < 62^6). */
export const checksum = (body: string): string => base62(crc32(body), CHECK_LENGTH)

/** A new random token; `randomInt` draws each character uniformly (no modulo bias) from the CSPRNG. */
export const generate = (): string => {
  let body = ""
  for (let i = 0; i < BODY_LENGTH; i++) body += ALPHABET[randomInt(62)]
  return PREFIX + body + checksum(body)
}

/** True when the string has the token shape and its checksum matches. */
export const isWellFormed = (token: string): boolean =>
  SHAPE.test(token) &&
  checksum(token.slice(PREFIX.length, PREFIX.length + BODY_LENGTH)) === token.slice(PREFIX.length + BODY_LENGTH)

/** Hex SHA-256 of the token: the only form in which a token is stored. */
export const hash = (token: string): string => createHash("sha256").update(token).digest("hex")
