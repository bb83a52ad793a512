/**
 * Reads the state database of a test server directly, whichever engine it runs on, to check what
 * the service stored (ledger rows, totals). Statements use `?` placeholders.
 */
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import { withPg } from "./postgres.ts"

/** Where a server keeps its state: its data folder, and a PostgreSQL URL when it runs on one. */
export interface DbTarget {
  readonly dataDir: string
  readonly databaseUrl?: string | undefined
}

/** Runs a query and returns its rows (`write` opens SQLite for writing, as another process would). */
export const query = async <A = Record<string, unknown>>(
  target: DbTarget,
  text: string,
  params: ReadonlyArray<string | number | null> = [],
  write = false
): Promise<Array<A>> => {
  if (target.databaseUrl !== undefined) {
    let n = 0
    const numbered = text.replace(/\?/g, () => `$${++n}`)
    return withPg(target.databaseUrl, (sql) => sql.unsafe<A & object>(numbered, params)) as Promise<Array<A>>
  }
  const db = new DatabaseSync(join(target.dataDir, "hcc.db"), { readOnly: !write })
  try {
    const statement = db.prepare(text)
    if (statement.columns().length === 0) {
      statement.run(...params)
      return []
    }
    return statement.all(...params) as Array<A>
  } finally {
    db.close()
  }
}

/** A usage ledger and the day totals of one account. */
export const ledgerOf = async (target: DbTarget, accountId: string) => {
  const rows = await query<{ endpoint: string; hcc_cost: number; status: number; request_id: string }>(
    target,
    "SELECT endpoint, hcc_cost, status, request_id FROM usage_ledger WHERE account_id = ? ORDER BY id",
    [accountId]
  )
  const [daily] = await query<{ queries: number; hcc_cost: number }>(target, "SELECT queries, hcc_cost FROM usage_daily WHERE account_id = ?", [accountId])
  return { rows, daily }
}
