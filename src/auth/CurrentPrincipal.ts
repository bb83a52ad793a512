/** The authenticated caller of the current request, provided by the Authorization middleware. */
import { Context } from "effect"
import type { Principal } from "./Accounts.ts"

/** Who is calling: account and token id. */
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("hcc/CurrentPrincipal") {}
