/**
 * `hcc accounts invite`, `hcc accounts people`, `hcc accounts remove-person`, `hcc accounts audit`
 * and `hcc tokens roll`: the account portal's operations for an operator on the server
 * (docs/portal.md, docs/cli.md). No mail server is assumed: `invite` prints the one-time link.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { Accounts } from "../auth/Accounts.ts"
import { AppConfig } from "../config/AppConfig.ts"
import * as Database from "../db/Database.ts"
import { People, type Role } from "../portal/People.ts"
import { inviteLink, MAX_GRACE_SECONDS } from "../portal/links.ts"
import { tokenJson } from "../auth/json.ts"
import { OPERATOR, operatorAudit } from "./operatorAudit.ts"
import { emit, table, UsageError } from "./output.ts"

const PeopleLive = Layer.mergeAll(People.layer, Accounts.layer).pipe(Layer.provide(Database.layer), Layer.provideMerge(AppConfig.layer))

const accountFlag = Flag.String("account").pipe(Flag.withDescription("Account id, e.g. acc_… (see `hcc accounts list`)"))

export const accountsInvite = Command.make(
  "invite",
  {
    account: accountFlag,
    email: Flag.String("email").pipe(Flag.withDescription("The person's e-mail address (their sign-in name)")),
    role: Flag.Literals("role", ["owner", "developer"]).pipe(Flag.withDescription("owner (people, audit log, tokens) or developer (tokens and usage)"), Flag.withDefault("owner"))
  },
  ({ account, email, role }) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      yield* (yield* Accounts).account(account)
      const people = yield* People
      const invite = yield* people.invite({ accountId: account, email, role: role as Role, by: OPERATOR })
      yield* operatorAudit(account, "person_invited", { email: email.trim().toLowerCase(), role })
      const link = inviteLink(config.publicUrl ?? `http://localhost:${config.port === 0 ? 8080 : config.port}`, invite.code)
      yield* emit(
        { account_id: account, email, role, link, expires_at: invite.expiresAt },
        () => `${link}\n\nA one-time sign-up link for ${email} (${role} of ${account}), valid until ${invite.expiresAt}.\nSend it to them; it is shown only now (only its hash is stored).${config.publicUrl === undefined ? "\nSet HCC_PUBLIC_URL to the address people reach the service at, for links that work beyond this machine." : ""}`
      )
    }).pipe(Effect.provide(PeopleLive))
).pipe(
  Command.withDescription("Invite a person to an account: prints a one-time sign-up link for the portal (valid 24 h)"),
  Command.withExamples([{ command: "hcc accounts invite --account acc_123 --email ana@example.org --role developer", description: "A developer of acc_123" }])
)

export const accountsPeople = Command.make("people", { account: accountFlag }, ({ account }) =>
  Effect.gen(function*() {
    const list = yield* (yield* People).list(account)
    yield* emit(list.map((p) => ({ id: p.id, email: p.email, role: p.role, created_at: p.createdAt })), () => table(["ID", "E-MAIL", "ROLE", "SINCE"], list.map((p) => [p.id, p.email, p.role, p.createdAt])))
  }).pipe(Effect.provide(PeopleLive))).pipe(
    Command.withDescription("List the people who can sign in to an account's portal"),
    Command.withExamples([{ command: "hcc accounts people --account acc_123", description: "Who can sign in" }])
  )

export const accountsRemovePerson = Command.make(
  "remove-person",
  { account: accountFlag, person: Argument.String("person-id").pipe(Argument.withDescription("Person id, e.g. per_… (see `hcc accounts people`)")) },
  ({ account, person }) =>
    Effect.gen(function*() {
      const people = yield* People
      const removed = yield* people.remove(account, person)
      yield* operatorAudit(account, "person_removed", { email: removed.email, role: removed.role })
      yield* emit({ id: removed.id, email: removed.email, role: removed.role }, () => `removed ${removed.email} from ${account}; their sessions ended`)
    }).pipe(Effect.provide(PeopleLive))
).pipe(
  Command.withDescription("Remove a person from an account (their sessions and passkeys end; the last owner stays)"),
  Command.withExamples([{ command: "hcc accounts remove-person --account acc_123 per_456", description: "Remove one person" }])
)

export const accountsAudit = Command.make(
  "audit",
  { account: accountFlag, limit: Flag.Int("limit").pipe(Flag.withDescription("Most entries, newest first"), Flag.withDefault(100)) },
  ({ account, limit }) =>
    Effect.gen(function*() {
      if (limit < 1) return yield* Effect.fail(new UsageError("--limit must be ≥ 1"))
      const entries = yield* (yield* People).auditLog(account, limit)
      yield* emit(entries, () => table(["WHEN", "WHO", "WHAT", "DETAILS", "FROM"], entries.map((e) => [e.at, e.actor, e.action, JSON.stringify(e.detail), e.address])))
    }).pipe(Effect.provide(PeopleLive))
).pipe(
  Command.withDescription("An account's audit log: who did what, when, from where (never a token)"),
  Command.withExamples([{ command: "hcc accounts audit --account acc_123 --json", description: "As JSON" }])
)

export const tokensRoll = Command.make(
  "roll",
  {
    id: Argument.String("token-id").pipe(Argument.withDescription("Token id, e.g. tok_…")),
    grace: Flag.Int("grace-seconds").pipe(Flag.withDescription(`How long the old token keeps working (0 to ${MAX_GRACE_SECONDS})`), Flag.withDefault(86_400))
  },
  ({ grace, id }) =>
    Effect.gen(function*() {
      if (grace < 0 || grace > MAX_GRACE_SECONDS) return yield* Effect.fail(new UsageError(`--grace-seconds must be from 0 to ${MAX_GRACE_SECONDS}`))
      const accounts = yield* Accounts
      const rolled = yield* accounts.rollToken(id, grace)
      yield* operatorAudit(rolled.info.accountId, "token_rolled", { token_id: id, new_token_id: rolled.info.id, grace_seconds: grace })
      yield* emit(
        { ...tokenJson(rolled.info), token: rolled.token, old: tokenJson(rolled.old) },
        () => `${rolled.token}\n\ntoken ${rolled.info.id} replaces ${id}, which works until ${rolled.old.expiresAt}.\nThis is the only time the token is shown: store it now.`
      )
    }).pipe(Effect.provide(PeopleLive))
).pipe(
  Command.withDescription("Roll a token: a new one now, the old one kept working for a grace period, then expired"),
  Command.withExamples([{ command: "hcc tokens roll tok_123 --grace-seconds 3600", description: "The old token works one more hour" }])
)
