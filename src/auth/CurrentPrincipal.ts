/** The authenticated caller of the current request, provided by the Authorization middleware. */
import * as Context from "effect/Context"
import type { Principal } from "./Accounts.ts"

/** Who is calling: account and token id. */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("hcc/CurrentPrincipal") {}
