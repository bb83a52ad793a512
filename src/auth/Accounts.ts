/**
 * Accounts and their API tokens in SQL: create, list, issue, revoke, and the look-up that
 * authenticates a request. Plaintext tokens exist only in the value `issueToken` returns.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import { randomInt } from "node:crypto"
import { type Tier, TIERS } from "../metering/Tiers.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { transaction } from "../db/Database.ts"
import { PrincipalCache } from "./PrincipalCache.ts"
import * as Token from "./Token.ts"

/** An account as stored. */
export interface Account {
  readonly id: string
  readonly name: string
  readonly tier: Tier
  /** Per-account override of the tier's daily limit (null = the tier's). */
  readonly dailyLimit: number | null
  /** Per-account override of the tier's burst limit (null = the tier's). */
  readonly burstLimit: number | null
  readonly createdAt: string
  /** When the account was disabled (its tokens refused), or null. */
  readonly disabledAt: string | null
}

/** A token's metadata; never its plaintext or hash. */
export interface TokenInfo {
  readonly id: string
  readonly accountId: string
  readonly label: string
  readonly createdAt: string
  readonly expiresAt: string | null
  readonly revokedAt: string | null
  /** When a request last authenticated with it (to the minute: written at most once a minute per process), or null. */
  readonly lastUsedAt: string | null
}

/** Who a valid token belongs to. */
export interface Principal {
  readonly account: Account
  readonly tokenId: string
  /** ISO expiry of the token used, or null. */
  readonly tokenExpiresAt: string | null
}

/** Why a credential was refused; `missing` is told apart because RFC 6750 answers it differently. */
export type AuthFailureReason = "missing" | "malformed" | "unknown" | "revoked" | "expired" | "disabled"

/** A refused credential. */
export class AuthFailure extends Schema.TaggedError<AuthFailure>()("AuthFailure", {
  reason: Schema.Literals(["missing", "malformed", "unknown", "revoked", "expired", "disabled"])
}) {}

/** Account names are unique (compared without regard to case), so people can tell accounts apart. */
export class DuplicateAccountName extends Schema.TaggedError<DuplicateAccountName>()("DuplicateAccountName", {
  name: Schema.String,
  existing: Schema.String
}) {
  override get message(): string {
    return `an account named "${this.name}" already exists (${this.existing}); choose another name`
  }
}

/** A CLI or admin operation named an account that does not exist. */
export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", {
  id: Schema.String
}) {
  override get message(): string {
    return `no account with id ${this.id}`
  }
}

/** A CLI or admin operation named a token that does not exist. */
export class TokenNotFound extends Schema.TaggedError<TokenNotFound>()("TokenNotFound", {
  id: Schema.String
}) {
  override get message(): string {
    return `no token with id ${this.id}`
  }
}

const ID_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
/** A random id such as `acc_3k9x…`: 16 characters of base36 from the CSPRNG. */
export const randomId = (prefix: string): string => {
  let s = prefix + "_"
  for (let i = 0; i < 16; i++) s += ID_ALPHABET[randomInt(ID_ALPHABET.length)]
  return s
}

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

interface AccountRow {
  readonly id: string
  readonly name: string
  readonly tier: string
  readonly daily_limit: number | null
  readonly burst_limit: number | null
  readonly created_at: string
  readonly disabled_at: string | null
}
interface TokenRow {
  readonly id: string
  readonly account_id: string
  readonly label: string
  readonly created_at: string
  readonly expires_at: string | null
  readonly revoked_at: string | null
  readonly last_used_at: string | null
}

const toAccount = (r: AccountRow): Account => ({
  id: r.id,
  name: r.name,
  tier: (TIERS as ReadonlyArray<string>).includes(r.tier) ? (r.tier as Tier) : "starter",
  dailyLimit: r.daily_limit,
  burstLimit: r.burst_limit,
  createdAt: r.created_at,
  disabledAt: r.disabled_at ?? null
})
const toTokenInfo = (r: TokenRow): TokenInfo => ({
  id: r.id,
  accountId: r.account_id,
  label: r.label,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at ?? null
})

/** What `update` may change; a limit of null goes back to the tier's. */
export interface AccountChanges {
  readonly name?: string | undefined
  readonly tier?: Tier | undefined
  readonly dailyLimit?: number | null | undefined
  readonly burstLimit?: number | null | undefined
}

/** How often one process writes a token's last use (a look-up per request must not be a write per request). */
const LAST_USED_EVERY_MS = 60_000
/** How long after a token's use its last-use write is queued (see `touch`). */
const LAST_USED_DELAY_MS = 1000

/**
 * A token's last use, written in the background at most once a minute per token and process,
 * and only a second after the request that used it: the write joins the database queue after
 * that request's own statements, never before them (on SQLite they share one connection). It is
 * relaxed (no wait for the disk): a power cut may forget the last minute of last-use times.
 */
const lastUseWriter = (sql: SqlClient.SqlClient, runFork: (effect: Effect.Effect<unknown, unknown>) => unknown) => {
  const lastWritten = new Map<string, number>()
  const pending = new Map<string, string>()
  const flush = () => {
    const batch = [...pending]
    pending.clear()
    runFork(Effect.ignore(transaction(sql, "relaxed", (exec) => Effect.forEach(batch, ([tokenId, at]) =>
      exec(sql`UPDATE tokens SET last_used_at = ${at} WHERE id = ${tokenId} AND (last_used_at IS NULL OR last_used_at < ${at})`), { discard: true }))))
  }
  const touch = (tokenId: string, now: number): void => {
    const last = lastWritten.get(tokenId)
    if (last !== undefined && now - last < LAST_USED_EVERY_MS) return
    if (lastWritten.size > 100_000) lastWritten.clear()
    lastWritten.set(tokenId, now)
    if (pending.size === 0) setTimeout(flush, LAST_USED_DELAY_MS).unref()
    pending.set(tokenId, new Date(now).toISOString())
  }
  return touch
}

/** A new account: its name, tier and limit overrides. */
export interface NewAccount {
  readonly name: string
  readonly tier: Tier
  readonly dailyLimit?: number | undefined
  readonly burstLimit?: number | undefined
}

/** What a token is issued for. */
export interface TokenRequest {
  readonly accountId: string
  readonly label: string
  readonly expiresAt?: Date | undefined
}

/** Issues a token: stored as its hash only; the plaintext is returned once. */
const issueTokenWith = (sql: SqlClient.SqlClient, input: TokenRequest) =>
  Effect.gen(function*() {
    const found = yield* sql<{ id: string }>`SELECT id FROM accounts WHERE id = ${input.accountId}`
    if (found.length === 0) return yield* new AccountNotFound({ id: input.accountId })
    const token = Token.generate()
    const row = {
      id: randomId("tok"),
      account_id: input.accountId,
      token_hash: Token.hash(token),
      label: input.label,
      created_at: yield* nowIso,
      expires_at: input.expiresAt === undefined ? null : input.expiresAt.toISOString(),
      revoked_at: null,
      last_used_at: null
    }
    yield* sql`INSERT INTO tokens ${sql.insert(row)}`
    return { token, info: toTokenInfo(row) }
  })

/** The tokens' metadata: one account's or everyone's, or one token's. */
const tokenQueries = (sql: SqlClient.SqlClient) => {
  const listTokens = (accountId?: string) =>
    (accountId === undefined
      ? sql<TokenRow>`SELECT id, account_id, label, created_at, expires_at, revoked_at, last_used_at FROM tokens ORDER BY created_at, id`
      : sql<TokenRow>`SELECT id, account_id, label, created_at, expires_at, revoked_at, last_used_at FROM tokens
          WHERE account_id = ${accountId} ORDER BY created_at, id`).pipe(Effect.map((rows) => rows.map(toTokenInfo)))

  const tokenInfo = (tokenId: string) =>
    Effect.flatMap(
      sql<TokenRow>`SELECT id, account_id, label, created_at, expires_at, revoked_at, last_used_at FROM tokens WHERE id = ${tokenId}`,
      (rows) => (rows[0] === undefined ? Effect.fail(new TokenNotFound({ id: tokenId })) : Effect.succeed(toTokenInfo(rows[0])))
    )
  return { listTokens, tokenInfo }
}

/** A token's row joined with its account's. */
type AuthRow = AccountRow & { readonly token_id: string; readonly expires_at: string | null; readonly revoked_at: string | null }

/** The principal a token's hash names, or why it is refused; a principal found is cached. */
const lookupToken = (sql: SqlClient.SqlClient, cache: PrincipalCache<Principal>, tokenHash: string, now: number) =>
  Effect.gen(function*() {
    const rows = yield* sql<AuthRow>`SELECT t.id AS token_id, t.expires_at, t.revoked_at,
        a.id, a.name, a.tier, a.daily_limit, a.burst_limit, a.created_at, a.disabled_at
      FROM tokens t JOIN accounts a ON a.id = t.account_id
      WHERE t.token_hash = ${tokenHash}`
    const row = rows[0]
    if (row === undefined) return yield* new AuthFailure({ reason: "unknown" })
    if (row.revoked_at !== null) return yield* new AuthFailure({ reason: "revoked" })
    if (row.disabled_at !== null) return yield* new AuthFailure({ reason: "disabled" })
    if (row.expires_at !== null && Date.parse(row.expires_at) <= now) {
      return yield* new AuthFailure({ reason: "expired" })
    }
    const principal: Principal = { account: toAccount(row), tokenId: row.token_id, tokenExpiresAt: row.expires_at }
    cache.set(tokenHash, principal, row.expires_at, now)
    return principal
  })

/** Account and token storage. */
export interface AccountsService {
  /** Creates an account. */
  readonly create: (input: NewAccount) => Effect.Effect<Account, SqlError.SqlError | DuplicateAccountName>
  /** Changes an account's name, tier or limit overrides. */
  readonly update: (id: string, changes: AccountChanges) => Effect.Effect<Account, SqlError.SqlError | AccountNotFound | DuplicateAccountName>
  /** Disables an account (its tokens are refused from then on) or enables it again; idempotent. */
  readonly setDisabled: (id: string, disabled: boolean) => Effect.Effect<Account, SqlError.SqlError | AccountNotFound>
  /** All accounts, oldest first. */
  readonly list: Effect.Effect<ReadonlyArray<Account>, SqlError.SqlError>
  /** Issues a token; the returned plaintext is never stored and cannot be shown again. */
  readonly issueToken: (input: TokenRequest) => Effect.Effect<{ readonly token: string; readonly info: TokenInfo }, SqlError.SqlError | AccountNotFound>
  /** Tokens of one account, or of all accounts. */
  readonly listTokens: (accountId?: string) => Effect.Effect<ReadonlyArray<TokenInfo>, SqlError.SqlError>
  /** Revokes a token (idempotent: revoking twice keeps the first time). */
  readonly revokeToken: (tokenId: string) => Effect.Effect<TokenInfo, SqlError.SqlError | TokenNotFound>
  /**
   * Rolls a token: a new one (same account and label, the old one's expiry if it had one) now, and
   * the old one kept for `graceSeconds` more, then expired (at once with 0). Fails for a token
   * revoked or expired already.
   */
  readonly rollToken: (tokenId: string, graceSeconds: number) => Effect.Effect<{ readonly token: string; readonly info: TokenInfo; readonly old: TokenInfo }, SqlError.SqlError | TokenNotFound>
  /** One token's metadata. */
  readonly tokenInfo: (tokenId: string) => Effect.Effect<TokenInfo, SqlError.SqlError | TokenNotFound>
  /** One account. */
  readonly account: (id: string) => Effect.Effect<Account, SqlError.SqlError | AccountNotFound>
  /** Resolves a presented credential to its account, or says why not (cached for `authCacheMs`). */
  readonly authenticate: (credential: string) => Effect.Effect<Principal, AuthFailure | SqlError.SqlError>
}

/** Account and token storage. */
export class Accounts extends Context.Service<Accounts, AccountsService>()("hcc/Accounts") {
  /** The SQL implementation; successful look-ups are cached for HCC_AUTH_CACHE_MS (see PrincipalCache). */
  static readonly layer = Layer.effect(
    Accounts,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cache = new PrincipalCache<Principal>((yield* AppConfig).authCacheMs)
      const services = yield* Effect.context<never>()
      const runFork = Effect.runForkWith(services)

      /** Fails when another account (not `self`) has this name, whatever its case. */
      const nameFree = (name: string, self?: string) =>
        Effect.flatMap(
          sql<{ id: string }>`SELECT id FROM accounts WHERE LOWER(name) = LOWER(${name}) AND id <> ${self ?? ""}`,
          (rows) => (rows[0] === undefined ? Effect.void : Effect.fail(new DuplicateAccountName({ name, existing: rows[0].id })))
        )

      const byId = (id: string) =>
        Effect.flatMap(sql<AccountRow>`SELECT * FROM accounts WHERE id = ${id}`, (rows) =>
          rows[0] === undefined ? Effect.fail(new AccountNotFound({ id })) : Effect.succeed(toAccount(rows[0])))

      const create = Effect.fn("Accounts.create")(function*(input: NewAccount) {
        const row = {
          id: randomId("acc"),
          name: input.name,
          tier: input.tier,
          daily_limit: input.dailyLimit ?? null,
          burst_limit: input.burstLimit ?? null,
          created_at: yield* nowIso,
          disabled_at: null
        }
        yield* sql.withTransaction(Effect.andThen(nameFree(input.name), sql`INSERT INTO accounts ${sql.insert(row)}`))
        return toAccount(row)
      })

      const update = Effect.fn("Accounts.update")(function*(id: string, changes: AccountChanges) {
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* byId(id)
          if (changes.name !== undefined) {
            yield* nameFree(changes.name, id)
            yield* sql`UPDATE accounts SET name = ${changes.name} WHERE id = ${id}`
          }
          if (changes.tier !== undefined) yield* sql`UPDATE accounts SET tier = ${changes.tier} WHERE id = ${id}`
          if (changes.dailyLimit !== undefined) yield* sql`UPDATE accounts SET daily_limit = ${changes.dailyLimit} WHERE id = ${id}`
          if (changes.burstLimit !== undefined) yield* sql`UPDATE accounts SET burst_limit = ${changes.burstLimit} WHERE id = ${id}`
        }))
        return yield* byId(id)
      })

      const setDisabled = Effect.fn("Accounts.setDisabled")(function*(id: string, disabled: boolean) {
        yield* byId(id)
        const now = yield* nowIso
        if (disabled) yield* sql`UPDATE accounts SET disabled_at = ${now} WHERE id = ${id} AND disabled_at IS NULL`
        else yield* sql`UPDATE accounts SET disabled_at = NULL WHERE id = ${id}`
        return yield* byId(id)
      })

      const touch = lastUseWriter(sql, runFork)

      const list = sql<AccountRow>`SELECT * FROM accounts ORDER BY created_at, id`.pipe(
        Effect.map((rows) => rows.map(toAccount))
      )

      const issueToken = Effect.fn("Accounts.issueToken")((input: TokenRequest) => issueTokenWith(sql, input))

      const { listTokens, tokenInfo } = tokenQueries(sql)

      const revokeToken = Effect.fn("Accounts.revokeToken")(function*(tokenId: string) {
        const now = yield* nowIso
        yield* sql`UPDATE tokens SET revoked_at = ${now} WHERE id = ${tokenId} AND revoked_at IS NULL`
        cache.clear()
        return yield* tokenInfo(tokenId)
      })

      // One transaction: the new token exists only if the old one's end is set with it.
      const rollToken = Effect.fn("Accounts.rollToken")(function*(tokenId: string, graceSeconds: number) {
        const rolled = yield* sql.withTransaction(Effect.gen(function*() {
          const old = yield* tokenInfo(tokenId)
          const now = yield* Clock.currentTimeMillis
          if (old.revokedAt !== null || (old.expiresAt !== null && Date.parse(old.expiresAt) <= now)) return yield* new TokenNotFound({ id: tokenId })
          const issued = yield* Effect.catchTag(
            issueToken({ accountId: old.accountId, label: old.label, expiresAt: old.expiresAt === null ? undefined : new Date(old.expiresAt) }),
            "AccountNotFound",
            () => Effect.fail(new TokenNotFound({ id: tokenId }))
          )
          const end = new Date(now + graceSeconds * 1000).toISOString()
          yield* sql`UPDATE tokens SET expires_at = ${end} WHERE id = ${tokenId} AND (expires_at IS NULL OR expires_at > ${end})`
          return { ...issued, old: yield* tokenInfo(tokenId) }
        }))
        cache.clear()
        return rolled
      })

      const lookup = (tokenHash: string, now: number) => lookupToken(sql, cache, tokenHash, now)
      // Cheap checks first: the empty credential, then the checksum (rejects typos and noise
      // without touching the database), then the cache; only a miss goes to SQL.
      const authenticate = (credential: string): Effect.Effect<Principal, AuthFailure | SqlError.SqlError> => {
        if (credential === "") return Effect.fail(new AuthFailure({ reason: "missing" }))
        if (!Token.isWellFormed(credential)) return Effect.fail(new AuthFailure({ reason: "malformed" }))
        const tokenHash = Token.hash(credential)
        return Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const cached = cache.get(tokenHash, now)
          if (cached !== undefined) {
            touch(cached.tokenId, now)
            return Effect.succeed(cached)
          }
          return Effect.map(lookup(tokenHash, now), (p) => {
            touch(p.tokenId, now)
            return p
          })
        })
      }

      return Accounts.of({ create, update, setDisabled, list, issueToken, listTokens, revokeToken, rollToken, tokenInfo, account: byId, authenticate })
    })
  )
}
