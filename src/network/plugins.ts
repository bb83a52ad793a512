/**
 * The coordinator's endpoints (docs/network.md): for every plugin that has a partial
 * representation and pools it, `POST /v1/network/<name>` takes the same request, asks every site
 * for its partial answer (members.ts) and pools the answers with the plugin's own `pool`, under
 * this service's small-cell rule. The answer is the plugin's, plus `network`: each site, how it took
 * part, its cohort, its weight and what it charged; `partial` when a site is missing; the pooled
 * values some site's part is missing from. It costs what its sites charge together, as its
 * catalog entry states.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { Disclosure } from "../plugin/disclosure.ts"
import { fail } from "../plugin/errors.ts"
import { PLUGIN_API_VERSION, type Plugin } from "../plugin/spec.ts"
import { askMembers, type MemberReply } from "./members.ts"
import type { AppSettings } from "../config/AppConfig.ts"
import { type Network, readNetworkFile } from "./NetworkFile.ts"

const MemberPart = Schema.Struct({
  name: Schema.String.annotate({ description: "The site, as the network file names it" }),
  status: Schema.Literals(["answered", "refused", "failed", "timeout"]).annotate({
    description: "answered; refused (it answered 4xx, e.g. its own cohort_too_small, or without the partial representation); failed (down, 429 or 5xx); timeout (no answer within the deadline)"
  }),
  reason: Schema.optionalKey(Schema.String.annotate({ description: "Why a site is not in the answer: its status and problem code, or what failed" })),
  cohort_size: Schema.NullOr(Schema.Int).annotate({ description: "The site's cohort as it published it; null when it did not answer or when under the network's minimum cell size" }),
  weight: Schema.NullOr(Schema.Finite).annotate({ description: "The site's share of the network's cohort (4 decimals); null with its cohort" }),
  hcc_cost: Schema.Finite.annotate({ description: "What the site charged the coordinator for the question" })
})

/** The `network` member of a network answer. */
export const NetworkPart = Schema.Struct({
  partial: Schema.Boolean.annotate({ description: "true when some site is not in the answer (see members)" }),
  members: Schema.Array(MemberPart).annotate({ description: "Every site of the network, in the network file's order" }),
  incomplete: Schema.Array(Schema.String).annotate({ description: "Pointers of the pooled values that some site's part is missing from: it withheld a small cell of its own" })
})

const round4 = (x: number) => Math.round(x * 10_000) / 10_000

/** The `network` member from the sites' replies; a site's cohort is its answer's field at `cohort` (the plugin's disclosure pointer). */
const networkPart = (replies: ReadonlyArray<MemberReply>, incomplete: ReadonlyArray<string>, disclosure: Disclosure["Service"], cohort: string) => {
  const field = cohort.slice(1)
  const cohorts = replies.map((r) => (r.status === "answered" ? Number(r.body![field]) : 0))
  const total = cohorts.reduce((a, b) => a + b, 0)
  return {
    partial: replies.some((r) => r.status !== "answered"),
    members: replies.map((r, i) => {
      if (r.status === "answered") disclosure.rests(`/network/members/${i}/weight`, cohorts[i]!)
      return {
        name: r.name,
        status: r.status,
        ...(r.reason === undefined ? {} : { reason: r.reason }),
        cohort_size: r.status === "answered" ? cohorts[i]! : null,
        weight: r.status === "answered" && total > 0 ? round4(cohorts[i]! / total) : null,
        hcc_cost: r.hccCost
      }
    }),
    incomplete
  }
}

/** The network endpoint of one plugin, or undefined when the plugin cannot be pooled. */
const networkPlugin = (network: Network, plugin: Plugin): Plugin | undefined => {
  const pool = plugin.pool
  if (plugin.partial === undefined || pool === undefined) return undefined
  const name = plugin.path.replace(/^\/v1\//u, "")
  const declared = plugin.disclosure ?? {}
  return {
    name: `network-${plugin.name}`,
    version: plugin.version,
    engine: `^${PLUGIN_API_VERSION}`,
    path: `/v1/network/${name}`,
    summary: `${plugin.summary}, across the network's ${network.members.length} sites (docs/network.md)`,
    description: `${plugin.description ?? plugin.summary}\n\nAsked of every site of the network at once; each answers with its partial representation after its own small-cell rule, and the answers are pooled under this service's (docs/network.md). The answer adds \`network\`: each site, how it took part, its cohort and weight, and what it charged.`,
    request: plugin.request,
    response: Schema.Struct({ ...plugin.response.fields, network: NetworkPart }),
    hcc_cost: plugin.hcc_cost * network.members.length,
    errors: [
      ...(plugin.errors ?? []),
      { code: "no_member_answered", status: 503, description: "No site of the network answered (the detail names each site and why); retry later." }
    ],
    ...(plugin.vocabularies === undefined ? {} : { vocabularies: plugin.vocabularies }),
    // The domain's sample questions (the explorer offers them); not their recorded answers, which are one service's.
    ...(plugin.examples === undefined ? {} : { examples: plugin.examples.map(({ name, request, summary }) => ({ name, request, summary })) }),
    disclosure: {
      ...(declared.cohort === undefined ? {} : { cohort: declared.cohort }),
      counts: [...(declared.counts ?? []).filter((p) => !p.startsWith("/partial/")), "/network/members/*/cohort_size"],
      statistics: [...(declared.statistics ?? []).filter((p) => !p.startsWith("/partial/")), "/network/members/*/weight"]
    },
    ...((plugin.networkView ?? plugin.view) === undefined ? {} : { view: plugin.networkView ?? plugin.view }),
    ...(plugin.viewData === undefined ? {} : { viewData: plugin.viewData }),
    onHttpThread: true,
    handler: (request) =>
      Effect.gen(function*() {
        const replies = yield* askMembers(network, plugin.path, request)
        const answered = replies.filter((r) => r.status === "answered")
        // Every site's cohort under its minimum cell size: none publishes it, and neither does the network.
        if (replies.every((r) => r.reason === "422 cohort_too_small")) {
          return yield* fail("cohort_too_small", "At every site the cohort is under the site's minimum cell size, so no site publishes it; widen the question.")
        }
        if (answered.length === 0) {
          const why = replies.map((r) => `${r.name} ${r.status}${r.reason === undefined ? "" : ` (${r.reason})`}`).join("; ")
          return yield* fail("no_member_answered", `No site of the network answered this question: ${why}.`)
        }
        const disclosure = yield* Disclosure
        const pooled = (yield* pool(request, answered.map((r) => ({ name: r.name, answer: r.body! })))) as Record<string, unknown> & { incomplete?: ReadonlyArray<string> }
        const { incomplete, ...answer } = pooled
        return { ...answer, network: networkPart(replies, incomplete ?? [], disclosure, declared.cohort ?? "/cohort_size") }
      })
  }
}

/** The network endpoints of the plugins when the settings name a network file (HCC_NETWORK): a coordinator serves only these. */
export const networkEndpoints = (plugins: ReadonlyArray<Plugin>, config: AppSettings): ReadonlyArray<Plugin> | undefined =>
  config.network === undefined ? undefined : networkPlugins(readNetworkFile(config.network), plugins)

/** The network endpoints of `plugins` for `network`. */
export const networkPlugins = (network: Network, plugins: ReadonlyArray<Plugin>): ReadonlyArray<Plugin> =>
  plugins.flatMap((p) => {
    const made = networkPlugin(network, p)
    return made === undefined ? [] : [made]
  })
