/**
 * What the `hcc` CLI changes on an account is written to the account's audit log as the portal's
 * changes are (docs/portal.md): by "operator (hcc CLI)", from "server", never with a token.
 */
import * as Effect from "effect/Effect"
import { People } from "../portal/People.ts"

/** Who the audit log names for what the CLI does. */
export const OPERATOR = "operator (hcc CLI)"
const CLI_ADDRESS = "server"

/** Appends an operator's action to an account's audit log. */
export const operatorAudit = (accountId: string, action: string, detail: Record<string, string | number | null> = {}) =>
  Effect.flatMap(People, (people) => people.audit(accountId, { actor: OPERATOR, action, detail, address: CLI_ADDRESS }))
