/**
 * First start on an empty database: create the demo account (tier Professional) and write its token
 * to `$HCC_DATA_DIR/demo.token`, readable only by the owner. Logs name the file, never the token.
 */
import * as Effect from "effect/Effect"
import { chmodSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Accounts } from "./Accounts.ts"

/** Name of the demo token file inside the data folder. */
export const DEMO_TOKEN_FILE = "demo.token"

/** Creates the demo account if there are no accounts yet; returns the token file's path when it did. */
export const ensureDemoAccount = (dataDir: string) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    if ((yield* accounts.list).length > 0) return undefined
    const account = yield* accounts.create({ name: "demo", tier: "professional" })
    const { token } = yield* accounts.issueToken({ accountId: account.id, label: "demo" })
    const file = join(dataDir, DEMO_TOKEN_FILE)
    yield* Effect.try(() => {
      writeFileSync(file, token + "\n", { mode: 0o600 })
      chmodSync(file, 0o600) // in case the file already existed with wider permissions
    })
    yield* Effect.logInfo("created the demo account").pipe(
      Effect.annotateLogs({ account_id: account.id, token_file: file })
    )
    return file
  })
