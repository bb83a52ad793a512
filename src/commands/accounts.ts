/** `hcc accounts …` and `hcc tokens …`: accounts, their tiers and limits, and their API tokens (docs/cli.md). */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import { type Account, type AccountChanges, Accounts, type TokenInfo } from "../auth/Accounts.ts"
import { AppConfig } from "../config/AppConfig.ts"
import * as Database from "../db/Database.ts"
import { type Tier, TIER_LIMITS, TIERS } from "../metering/Tiers.ts"
import { People } from "../portal/People.ts"
import { accountJson, tokenJson } from "../auth/json.ts"
import { operatorAudit } from "./operatorAudit.ts"
import { emit, table, UsageError } from "./output.ts"

/** Accounts (and the people whose audit log records what the CLI changes) over the configured, migrated database. */
const AccountsLive = Layer.mergeAll(Accounts.layer, People.layer).pipe(Layer.provide(Database.layer), Layer.provide(AppConfig.layer))
/** `--tier`: the stored id or the title the API shows, in any case. */
const tierFlag = (name: string) =>
  Flag.Literals(name, [...TIERS, ...TIERS.map((t) => TIER_LIMITS[t].title)]).pipe(
    Flag.map((t) => t.toLowerCase() as Tier),
    Flag.withDescription("Tier: starter, professional, enterprise or unlimited")
  )

/** A limit override: a whole number from `min`, or `tier` to go back to the tier's. */
const limitValue = (flag: string, text: string, min: number): Effect.Effect<number | null, UsageError> => {
  if (text === "tier") return Effect.succeed(null)
  if (!/^\d{1,16}$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) {
    return Effect.fail(new UsageError(`--${flag} must be a whole number from ${min} (or "tier" for the tier's own)`))
  }
  return Effect.succeed(Number(text))
}

export const accountsCreate = Command.make(
  "create",
  {
    name: Flag.String("name").pipe(Flag.withDescription("Display name of the account (unique, whatever its case)")),
    tier: tierFlag("tier"),
    dailyLimit: Flag.Int("daily-limit").pipe(Flag.withDescription("Override the tier's daily limit (0 or more)"), Flag.optional),
    burstLimit: Flag.Int("burst-limit").pipe(Flag.withDescription("Override the tier's burst limit per rolling minute (1 or more)"), Flag.optional),
    token: Flag.String("token").pipe(Flag.withDescription("Also issue the account's first token, with this label (printed once, as `hcc tokens issue` does)"), Flag.optional)
  },
  ({ burstLimit, dailyLimit, name, tier, token }) =>
    Effect.gen(function*() {
      if (Option.isSome(dailyLimit) && dailyLimit.value < 0) return yield* Effect.fail(new UsageError("--daily-limit must be ≥ 0"))
      if (Option.isSome(burstLimit) && burstLimit.value < 1) return yield* Effect.fail(new UsageError("--burst-limit must be ≥ 1"))
      const account = yield* (yield* Accounts).create({
        name,
        tier,
        dailyLimit: Option.getOrUndefined(dailyLimit),
        burstLimit: Option.getOrUndefined(burstLimit)
      })
      const created = `created account ${account.id} (${TIER_LIMITS[tier].title})`
      if (Option.isNone(token)) return yield* emit(accountJson(account), () => created)
      const issued = yield* (yield* Accounts).issueToken({ accountId: account.id, label: token.value, expiresAt: undefined })
      yield* operatorAudit(account.id, "token_issued", { token_id: issued.info.id, label: token.value })
      yield* emit(
        { ...accountJson(account), token: { ...tokenJson(issued.info), token: issued.token } },
        () => `${created}\n${issued.token}\n\ntoken ${issued.info.id}; expires never.\nThis is the only time the token is shown: store it now.`
      )
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("Create an account"),
  Command.withExamples([
    { command: "hcc accounts create --name acme --tier professional", description: "An account on the Professional tier" },
    { command: "hcc accounts create --name lab --tier starter --burst-limit 20 --json", description: "With its own burst limit, printed as JSON" },
    { command: "hcc accounts create --name ci --tier starter --token ci --json", description: "With its first token (the JSON's `token`), in one step" }
  ])
)

const accountRow = (a: Account) => {
  const j = accountJson(a)
  return [a.id, a.name, j.tier, String(j.daily_limit ?? "none"), String(j.burst_per_minute), a.disabledAt === null ? "active" : "disabled", a.createdAt]
}
const ACCOUNT_HEADER = ["ID", "NAME", "TIER", "DAILY", "BURST", "STATUS", "CREATED"]

export const accountsList = Command.make("list", {}, () =>
  Effect.gen(function*() {
    const list = yield* (yield* Accounts).list
    yield* emit(list.map(accountJson), () => table(ACCOUNT_HEADER, list.map(accountRow)))
  }).pipe(Effect.provide(AccountsLive))).pipe(
    Command.withDescription("List accounts with the limits that bind them (overrides or their tier's)"),
    Command.withExamples([{ command: "hcc accounts list --json", description: "Every account as JSON" }])
  )

const accountId = Argument.String("account-id").pipe(Argument.withDescription("Account id, e.g. acc_… (see `hcc accounts list`)"))

export const accountsUpdate = Command.make(
  "update",
  {
    id: accountId,
    name: Flag.String("name").pipe(Flag.withDescription("New display name (unique, whatever its case)"), Flag.optional),
    tier: tierFlag("tier").pipe(Flag.optional),
    dailyLimit: Flag.String("daily-limit").pipe(Flag.withDescription("Daily limit override (0 or more), or `tier` for the tier's own"), Flag.optional),
    burstLimit: Flag.String("burst-limit").pipe(Flag.withDescription("Burst limit override per minute (1 or more), or `tier` for the tier's own"), Flag.optional)
  },
  ({ burstLimit, dailyLimit, id, name, tier }) =>
    Effect.gen(function*() {
      if ([name, tier, dailyLimit, burstLimit].every(Option.isNone)) {
        return yield* Effect.fail(new UsageError("nothing to change: give --name, --tier, --daily-limit or --burst-limit"))
      }
      const changes: AccountChanges = {
        name: Option.getOrUndefined(name),
        tier: Option.getOrUndefined(tier),
        dailyLimit: Option.isSome(dailyLimit) ? yield* limitValue("daily-limit", dailyLimit.value, 0) : undefined,
        burstLimit: Option.isSome(burstLimit) ? yield* limitValue("burst-limit", burstLimit.value, 1) : undefined
      }
      const account = yield* (yield* Accounts).update(id, changes)
      yield* operatorAudit(id, "account_updated", { name: changes.name ?? null, tier: changes.tier ?? null, daily_limit: changes.dailyLimit === undefined ? null : String(changes.dailyLimit ?? "tier"), burst_limit: changes.burstLimit === undefined ? null : String(changes.burstLimit ?? "tier") })
      yield* emit(accountJson(account), () => `updated account ${account.id}: ${table(ACCOUNT_HEADER, [accountRow(account)]).split("\n")[1]}`)
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("Change an account's name, tier or limits; running servers apply it within HCC_AUTH_CACHE_MS"),
  Command.withExamples([
    { command: "hcc accounts update acc_123 --tier enterprise", description: "Move an account to Enterprise" },
    { command: "hcc accounts update acc_123 --burst-limit tier --daily-limit 5000", description: "Back to the tier's burst limit, a daily limit of its own" }
  ])
)

const setDisabled = (disabled: boolean) => ({ id }: { readonly id: string }) =>
  Effect.gen(function*() {
    const account = yield* (yield* Accounts).setDisabled(id, disabled)
    yield* operatorAudit(id, disabled ? "account_disabled" : "account_enabled")
    yield* emit(accountJson(account), () => `${disabled ? "disabled" : "enabled"} account ${account.id}${disabled ? `; its tokens are refused from now on` : ""}`)
  }).pipe(Effect.provide(AccountsLive))

export const accountsDisable = Command.make("disable", { id: accountId }, setDisabled(true)).pipe(
  Command.withDescription("Disable an account: every request with its tokens gets 401 (within HCC_AUTH_CACHE_MS); its data and ledger stay"),
  Command.withExamples([{ command: "hcc accounts disable acc_123", description: "Stop an account's tokens working" }])
)
export const accountsEnable = Command.make("enable", { id: accountId }, setDisabled(false)).pipe(
  Command.withDescription("Enable a disabled account again (its unrevoked, unexpired tokens work again)"),
  Command.withExamples([{ command: "hcc accounts enable acc_123", description: "Undo `hcc accounts disable`" }])
)

const when = (iso: string | null, none: string) => (iso === null ? none : iso.slice(0, 16).replace("T", " "))
const tokenRow = (t: TokenInfo) => [t.id, t.accountId, t.label, t.createdAt, t.expiresAt ?? "never", t.revokedAt ?? "", when(t.lastUsedAt, "never")]
const TOKEN_HEADER = ["ID", "ACCOUNT", "LABEL", "CREATED", "EXPIRES", "REVOKED", "LAST USED"]

export const tokensIssue = Command.make(
  "issue",
  {
    account: Flag.String("account").pipe(Flag.withDescription("Account id (see `hcc accounts list`)")),
    label: Flag.String("label").pipe(Flag.withDescription("What the token is for"), Flag.withDefault("default")),
    expiresInDays: Flag.Int("expires-in-days").pipe(Flag.withDescription("Expire the token after this many days (1 or more)"), Flag.optional)
  },
  ({ account, expiresInDays, label }) =>
    Effect.gen(function*() {
      if (Option.isSome(expiresInDays) && expiresInDays.value < 1) return yield* Effect.fail(new UsageError("--expires-in-days must be ≥ 1"))
      const now = new Date(yield* Effect.clockWith((c) => c.currentTimeMillis))
      const expiresAt = Option.isSome(expiresInDays) ? new Date(now.getTime() + expiresInDays.value * 86_400_000) : undefined
      const { info, token } = yield* (yield* Accounts).issueToken({ accountId: account, label, expiresAt })
      yield* operatorAudit(account, "token_issued", { token_id: info.id, label })
      yield* emit(
        { ...tokenJson(info), token },
        () => `${token}\n\ntoken ${info.id} for ${info.accountId}; expires ${info.expiresAt ?? "never"}.\nThis is the only time the token is shown: store it now.`
      )
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("Issue a token (printed once; only its hash is stored)"),
  Command.withExamples([
    { command: "hcc tokens issue --account acc_123 --label ci --expires-in-days 90", description: "A token for CI that expires in 90 days" }
  ])
)

export const tokensList = Command.make(
  "list",
  { account: Flag.String("account").pipe(Flag.withDescription("Only this account's tokens"), Flag.optional) },
  ({ account }) =>
    Effect.gen(function*() {
      const list = yield* (yield* Accounts).listTokens(Option.getOrUndefined(account))
      yield* emit(list.map(tokenJson), () => table(TOKEN_HEADER, list.map(tokenRow)))
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("List tokens (ids, dates and when each was last used — to the minute — never the tokens)"),
  Command.withExamples([{ command: "hcc tokens list --account acc_123", description: "One account's tokens" }])
)

export const tokensRevoke = Command.make(
  "revoke",
  { id: Argument.String("token-id").pipe(Argument.withDescription("Token id, e.g. tok_…")) },
  ({ id }) =>
    Effect.gen(function*() {
      const info = yield* (yield* Accounts).revokeToken(id)
      yield* operatorAudit(info.accountId, "token_revoked", { token_id: info.id, label: info.label })
      yield* emit(tokenJson(info), () => `revoked ${info.id} at ${info.revokedAt}`)
    }).pipe(Effect.provide(AccountsLive))
).pipe(
  Command.withDescription("Revoke a token; requests with it get 401 from then on"),
  Command.withExamples([{ command: "hcc tokens revoke tok_123", description: "Revoke one token" }])
)

