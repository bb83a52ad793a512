/**
 * The network file (`HCC_NETWORK`): the sites a coordinator asks, each by name, base URL and the
 * token the site issued for the coordinator, and how long a question waits for them
 * (docs/network.md). Read once at start; a file that does not decode stops the start with each
 * problem's path and reason. Tokens are held in memory only, never logged.
 */
import * as Schema from "effect/Schema"
import { readFileSync } from "node:fs"

const Member = Schema.Struct({
  name: Schema.String.check(Schema.isPattern(/^[a-z0-9]+(?:-[a-z0-9]+)*$/u, { message: "expected a kebab-case name, e.g. site-north" })).annotate({
    description: "The site's name in answers (kebab-case)"
  }),
  url: Schema.String.check(Schema.isPattern(/^https?:\/\/[^\s/]+(?:\/[^\s]*)?$/u, { message: "expected an http(s) base URL, e.g. https://hcc.site-north.example" })).annotate({
    description: "The site's base URL (https in production; docs/deploy.md)"
  }),
  token: Schema.String.check(Schema.isMinLength(1)).annotate({ description: "The Bearer token the site issued for this coordinator" })
})

/** The file's shape. */
export const NetworkFileSchema = Schema.Struct({
  members: Schema.Array(Member).check(Schema.isMinLength(1)).annotate({ description: "The sites, each asked once per question" }),
  deadline_seconds: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 0.1, maximum: 300 }))).annotate({
    description: "How long a question waits for the sites (default 30): a site that has not answered by then is left out, the answer marked partial"
  })
})

/** A member site as the coordinator holds it. */
export interface NetworkMember {
  readonly name: string
  readonly url: string
  readonly token: string
}

/** The network a coordinator serves. */
export interface Network {
  readonly members: ReadonlyArray<NetworkMember>
  readonly deadlineMs: number
}

/** The default deadline of a question, in seconds. */
export const DEFAULT_DEADLINE_SECONDS = 30

/** Why a network file was refused: the file, and each problem with its path. */
export class NetworkFileError extends Error {
  readonly file: string
  readonly problems: ReadonlyArray<string>
  constructor(file: string, problems: ReadonlyArray<string>) {
    super(`network file ${file} is not usable: ${problems.join("; ")}`)
    this.file = file
    this.problems = problems
  }
}

/** Reads and checks a network file (throws NetworkFileError with each problem's path and reason). */
export const readNetworkFile = (file: string): Network => {
  let json: unknown
  try {
    json = JSON.parse(readFileSync(file, "utf8"))
  } catch (e) {
    throw new NetworkFileError(file, [e instanceof SyntaxError ? `not JSON: ${e.message}` : `cannot be read: ${(e as Error).message}`])
  }
  const decoded = Schema.decodeUnknownExit(NetworkFileSchema)(json, { errors: "all", onExcessProperty: "error" })
  if (decoded._tag === "Failure") {
    const error = decoded.cause.reasons.find((r) => r._tag === "Fail")?.error as Schema.SchemaError | undefined
    throw new NetworkFileError(file, [error === undefined ? "does not match the network file's shape" : error.message])
  }
  const { deadline_seconds, members } = decoded.value
  const names = members.map((m) => m.name)
  const twice = names.filter((n, i) => names.indexOf(n) !== i)
  if (twice.length > 0) throw new NetworkFileError(file, [`/members: the name ${twice[0]} is used twice`])
  return {
    members: members.map((m) => ({ name: m.name, url: m.url.replace(/\/+$/u, ""), token: m.token })),
    deadlineMs: (deadline_seconds ?? DEFAULT_DEADLINE_SECONDS) * 1000
  }
}
