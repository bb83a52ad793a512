/**
 * The people of an account and how they prove who they are (docs/portal.md): one-time invites, a
 * password (passwords.ts), sessions and the audit log, in SQL so every process and replica sees
 * the same. Secrets — an invite code, a session id — exist in plain only in the value handed to
 * the person; the database holds their SHA-256.
 *
 * Sessions follow OWASP ASVS v4 §3: a 256-bit random id, a new one at every sign-in (the id a
 * browser held before is ended), an idle timeout of 30 minutes and an absolute one of 12 hours
 * (ASVS 3.3.2, level 2), and "sign out everywhere".
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as SqlClient from "effect/sql/SqlClient"
import type * as SqlError from "effect/sql/SqlError"
import { createHash, randomBytes } from "node:crypto"
import { randomId } from "../auth/Accounts.ts"
import { dummyHash, hashPassword, verifyPassword } from "./passwords.ts"

/** What a person may do: an owner everything, a developer the tokens and usage only. */
export type Role = "owner" | "developer"
export const ROLES: ReadonlyArray<Role> = ["owner", "developer"]

/** How long an invite link works. */
export const INVITE_HOURS = 24
/** A session ends after this long without a request. */
export const IDLE_MINUTES = 30
/** A session ends this long after its sign-in, used or not. */
export const ABSOLUTE_HOURS = 12
/** A session's last request is written at most this often (a request is not a write). */
const SEEN_EVERY_MS = 60_000

/** A person of an account. */
export interface Person {
  readonly id: string
  readonly accountId: string
  readonly email: string
  readonly role: Role
  readonly createdAt: string
}

/** A signed-in person and the session's expiry. */
export interface SignedIn {
  readonly person: Person
  readonly sessionHash: string
  readonly expiresAt: string
}

/** One line of the audit log. */
export interface AuditEntry {
  readonly at: string
  readonly actor: string
  readonly action: string
  readonly detail: Readonly<Record<string, string | number | null>>
  readonly address: string
}

/** A portal action refused: its HTTP status, a code and a sentence for the person. */
export class PortalRefused extends Schema.TaggedError<PortalRefused>()("PortalRefused", {
  status: Schema.Number,
  code: Schema.String,
  detail: Schema.String,
  /** Seconds to wait before trying again (a 429's Retry-After). */
  retryAfter: Schema.optional(Schema.Number)
}) {
  override get message(): string {
    return this.detail
  }
}

/** A new secret (256 bits, base64url) and the hash stored for it. */
export const newSecret = (): { readonly secret: string; readonly hash: string } => {
  const secret = randomBytes(32).toString("base64url")
  return { secret, hash: hashSecret(secret) }
}
/** The stored form of a secret. */
export const hashSecret = (secret: string): string => createHash("sha256").update(secret).digest("hex")

/** An e-mail address as stored and compared: trimmed, lower case. */
export const normalEmail = (email: string): string => email.trim().toLowerCase()
/** A plausible e-mail address (one @, something either side, no spaces; delivery is not this service's to check). */
export const isEmail = (email: string): boolean => /^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email) && email.length <= 254

interface PersonRow {
  readonly id: string
  readonly account_id: string
  readonly email: string
  readonly role: string
  readonly created_at: string
}
const toPerson = (r: PersonRow): Person => ({ id: r.id, accountId: r.account_id, email: r.email, role: r.role === "owner" ? "owner" : "developer", createdAt: r.created_at })

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** Sessions: started (ending the one replaced and those past their end), looked up (and marked seen), ended. */
const sessionsOf = (sql: SqlClient.SqlClient) => {
  const startSession = Effect.fn("People.startSession")(function*(personId: string, replacing: string | undefined) {
    const now = yield* Clock.currentTimeMillis
    const { hash, secret } = newSecret()
    const expiresAt = new Date(now + ABSOLUTE_HOURS * 3_600_000).toISOString()
    yield* sql.withTransaction(Effect.gen(function*() {
      if (replacing !== undefined) yield* sql`DELETE FROM sessions WHERE id_hash = ${hashSecret(replacing)}`
      // Sessions past their end go as new ones start: the table holds live sessions only.
      yield* sql`DELETE FROM sessions WHERE expires_at <= ${new Date(now).toISOString()} OR last_seen_at <= ${new Date(now - IDLE_MINUTES * 60_000).toISOString()}`
      yield* sql`INSERT INTO sessions ${sql.insert({ id_hash: hash, person_id: personId, created_at: new Date(now).toISOString(), last_seen_at: new Date(now).toISOString(), expires_at: expiresAt })}`
    }))
    return { id: secret, expiresAt }
  })

  const session = Effect.fn("People.session")(function*(id: string) {
    const hash = hashSecret(id)
    const rows = yield* sql<PersonRow & { readonly last_seen_at: string; readonly expires_at: string }>`SELECT p.id, p.account_id, p.email, p.role, p.created_at, s.last_seen_at, s.expires_at
      FROM sessions s JOIN people p ON p.id = s.person_id WHERE s.id_hash = ${hash}`
    const row = rows[0]
    if (row === undefined) return undefined
    const now = yield* Clock.currentTimeMillis
    const seen = Date.parse(row.last_seen_at)
    if (Date.parse(row.expires_at) <= now || now - seen >= IDLE_MINUTES * 60_000) {
      yield* sql`DELETE FROM sessions WHERE id_hash = ${hash}`
      return undefined
    }
    if (now - seen >= SEEN_EVERY_MS) yield* sql`UPDATE sessions SET last_seen_at = ${new Date(now).toISOString()} WHERE id_hash = ${hash}`
    return { person: toPerson(row), sessionHash: hash, expiresAt: row.expires_at }
  })

  const endSession = (id: string) => Effect.asVoid(sql`DELETE FROM sessions WHERE id_hash = ${hashSecret(id)}`)
  const endSessions = (personId: string) =>
    Effect.map(sql<{ id_hash: string }>`DELETE FROM sessions WHERE person_id = ${personId} RETURNING id_hash`, (rows) => rows.length)
  return { endSession, endSessions, session, startSession }
}

/** People, invites, sessions and the audit log. */
export interface PeopleService {
  /** An invite for `email` to `accountId` as `role`; the code (for the link) is returned once. */
  readonly invite: (input: { readonly accountId: string; readonly email: string; readonly role: Role; readonly by: string }) => Effect.Effect<{ readonly code: string; readonly expiresAt: string }, SqlError.SqlError | PortalRefused>
  /** What an unused, unexpired invite is for. */
  readonly invitation: (code: string) => Effect.Effect<{ readonly email: string; readonly role: Role; readonly accountId: string }, SqlError.SqlError | PortalRefused>
  /** Uses an invite: the person is created with the password's hash; the invite never works again. */
  readonly acceptInvite: (code: string, password: string) => Effect.Effect<Person, SqlError.SqlError | PortalRefused>
  /** The person whose e-mail and password these are. */
  readonly checkPassword: (email: string, password: string) => Effect.Effect<Person, SqlError.SqlError | PortalRefused>
  /** The person by id. */
  readonly person: (id: string) => Effect.Effect<Person | undefined, SqlError.SqlError>
  /** The person by e-mail address. */
  readonly byEmail: (email: string) => Effect.Effect<Person | undefined, SqlError.SqlError>
  /** Stores a new password's hash for a person. */
  readonly setPassword: (personId: string, password: string) => Effect.Effect<void, SqlError.SqlError>
  /** The people of an account. */
  readonly list: (accountId: string) => Effect.Effect<ReadonlyArray<Person>, SqlError.SqlError>
  /** Removes a person (their sessions and passkeys go with them); the last owner stays. */
  readonly remove: (accountId: string, personId: string) => Effect.Effect<Person, SqlError.SqlError | PortalRefused>
  /** A new session for a person (ending `replacing`, the id the browser held, if any); the id is returned once. */
  readonly startSession: (personId: string, replacing: string | undefined) => Effect.Effect<{ readonly id: string; readonly expiresAt: string }, SqlError.SqlError>
  /** The signed-in person of a session id, if the session is live (and marks it used). */
  readonly session: (id: string) => Effect.Effect<SignedIn | undefined, SqlError.SqlError>
  /** Ends one session. */
  readonly endSession: (id: string) => Effect.Effect<void, SqlError.SqlError>
  /** Ends every session of a person. */
  readonly endSessions: (personId: string) => Effect.Effect<number, SqlError.SqlError>
  /** Appends to an account's audit log. */
  readonly audit: (accountId: string, entry: Omit<AuditEntry, "at">) => Effect.Effect<void, SqlError.SqlError>
  /** An account's audit log, newest first. */
  readonly auditLog: (accountId: string, limit: number) => Effect.Effect<ReadonlyArray<AuditEntry>, SqlError.SqlError>
}

/** People, invites, sessions and the audit log. */
export class People extends Context.Service<People, PeopleService>()("hcc/People") {
  static readonly layer = Layer.effect(
    People,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const refused = (status: number, code: string, detail: string) => new PortalRefused({ status, code, detail })
      const invalidInvite = refused(410, "invite_invalid", "This invite link is not valid: it was used, it expired (after 24 hours) or it was never issued. Ask an owner of the account or the operator for a new one.")

      const person = (id: string) => Effect.map(sql<PersonRow>`SELECT id, account_id, email, role, created_at FROM people WHERE id = ${id}`, (rows) => (rows[0] === undefined ? undefined : toPerson(rows[0])))

      const byEmail = (email: string) =>
        Effect.map(sql<PersonRow>`SELECT id, account_id, email, role, created_at FROM people WHERE email = ${normalEmail(email)}`, (rows) => (rows[0] === undefined ? undefined : toPerson(rows[0])))

      const setPassword = (personId: string, password: string) =>
        Effect.flatMap(hashPassword(password), (hash) => Effect.asVoid(sql`UPDATE people SET password_hash = ${hash} WHERE id = ${personId}`))

      const invite = Effect.fn("People.invite")(function*(input: { readonly accountId: string; readonly email: string; readonly role: Role; readonly by: string }) {
        const email = normalEmail(input.email)
        if (!isEmail(email)) return yield* refused(400, "invalid_email", `'${input.email}' is not an e-mail address`)
        // Only a person of this account is said to exist: whether an address belongs to another
        // account is not this account's to learn (that invite fails at sign-up, to the invitee).
        const taken = yield* sql<{ id: string }>`SELECT id FROM people WHERE email = ${email} AND account_id = ${input.accountId}`
        if (taken.length > 0) return yield* refused(409, "email_taken", `${email} is already a person of this account`)
        const now = yield* Clock.currentTimeMillis
        const { hash, secret } = newSecret()
        const expiresAt = new Date(now + INVITE_HOURS * 3_600_000).toISOString()
        yield* sql`INSERT INTO invites ${sql.insert({ code_hash: hash, account_id: input.accountId, email, role: input.role, invited_by: input.by, created_at: new Date(now).toISOString(), expires_at: expiresAt, used_at: null })}`
        return { code: secret, expiresAt }
      })

      interface InviteRow {
        readonly account_id: string
        readonly email: string
        readonly role: string
        readonly expires_at: string
        readonly used_at: string | null
      }
      const liveInvite = (code: string) =>
        Effect.gen(function*() {
          const rows = yield* sql<InviteRow>`SELECT account_id, email, role, expires_at, used_at FROM invites WHERE code_hash = ${hashSecret(code)}`
          const row = rows[0]
          const now = yield* Clock.currentTimeMillis
          if (row === undefined || row.used_at !== null || Date.parse(row.expires_at) <= now) return yield* invalidInvite
          return { email: row.email, role: (row.role === "owner" ? "owner" : "developer") as Role, accountId: row.account_id }
        })

      const acceptInvite = Effect.fn("People.acceptInvite")(function*(code: string, password: string) {
        const passwordHash = yield* hashPassword(password)
        return yield* sql.withTransaction(Effect.gen(function*() {
          const found = yield* liveInvite(code)
          const now = yield* nowIso
          // Used once: the update that marks it is the one that may create the person.
          const used = yield* sql<{ code_hash: string }>`UPDATE invites SET used_at = ${now} WHERE code_hash = ${hashSecret(code)} AND used_at IS NULL RETURNING code_hash`
          if (used.length === 0) return yield* invalidInvite
          const emailTaken = refused(409, "email_taken", `${found.email} already signs in to this service (an address is one person, of one account); ask for an invite for another address`)
          const taken = yield* sql<{ id: string }>`SELECT id FROM people WHERE email = ${found.email}`
          if (taken.length > 0) return yield* emailTaken
          const row = { id: randomId("per"), account_id: found.accountId, email: found.email, role: found.role, password_hash: passwordHash, created_at: now }
          // Two invites of one address accepted at once: the second insert meets the unique address.
          yield* Effect.catchTag(sql`INSERT INTO people ${sql.insert(row)}`, "SqlError", () => Effect.fail(emailTaken))
          return toPerson(row)
        }))
      })

      const checkPassword = Effect.fn("People.checkPassword")(function*(email: string, password: string) {
        const rows = yield* sql<PersonRow & { readonly password_hash: string | null }>`SELECT id, account_id, email, role, created_at, password_hash FROM people WHERE email = ${normalEmail(email)}`
        const row = rows[0]
        // A hash is computed whether or not the person exists, so the answer's time does not tell.
        const ok = yield* verifyPassword(password, row?.password_hash ?? (yield* dummyHash))
        if (row === undefined || row.password_hash === null || !ok) return yield* refused(401, "sign_in_failed", "That e-mail address and password do not match.")
        return toPerson(row)
      })

      const list = (accountId: string) =>
        Effect.map(sql<PersonRow>`SELECT id, account_id, email, role, created_at FROM people WHERE account_id = ${accountId} ORDER BY created_at, id`, (rows) => rows.map(toPerson))

      const remove = Effect.fn("People.remove")(function*(accountId: string, personId: string) {
        return yield* sql.withTransaction(Effect.gen(function*() {
          // Two owners removing each other at once: PostgreSQL serialises on the account's row (SQLite's
          // write transactions are serial already), so the count below sees the other's removal.
          yield* sql.onDialectOrElse({ pg: () => Effect.asVoid(sql`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`), orElse: () => Effect.void })
          const found = yield* person(personId)
          if (found === undefined || found.accountId !== accountId) return yield* refused(404, "not_found", `no person ${personId} in this account`)
          if (found.role === "owner") {
            const owners = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM people WHERE account_id = ${accountId} AND role = 'owner'`
            if (Number(owners[0]!.n) <= 1) return yield* refused(409, "last_owner", "the account's last owner cannot be removed; invite another owner first")
          }
          yield* sql`DELETE FROM sessions WHERE person_id = ${personId}`
          yield* sql`DELETE FROM passkeys WHERE person_id = ${personId}`
          yield* sql`DELETE FROM people WHERE id = ${personId}`
          return found
        }))
      })

      const { endSession, endSessions, session, startSession } = sessionsOf(sql)

      const audit = (accountId: string, entry: Omit<AuditEntry, "at">) =>
        Effect.flatMap(nowIso, (at) =>
          Effect.asVoid(sql`INSERT INTO audit_log ${sql.insert({ account_id: accountId, actor: entry.actor, action: entry.action, detail: JSON.stringify(entry.detail), address: entry.address, at })}`))

      const auditLog = (accountId: string, limit: number) =>
        Effect.map(
          sql<{ at: string; actor: string; action: string; detail: string; address: string }>`SELECT at, actor, action, detail, address FROM audit_log
            WHERE account_id = ${accountId} ORDER BY id DESC LIMIT ${limit}`,
          (rows) => rows.map((r) => ({ at: r.at, actor: r.actor, action: r.action, detail: JSON.parse(r.detail) as AuditEntry["detail"], address: r.address }))
        )

      return People.of({ invite, invitation: liveInvite, acceptInvite, checkPassword, person, byEmail, setPassword, list, remove, startSession, session, endSession, endSessions, audit, auditLog })
    })
  )
}
