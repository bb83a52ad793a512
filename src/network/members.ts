/**
 * Asking the member sites one question (docs/network.md): every member at once, each with the
 * token it issued, its own Idempotency-Key for the question and the partial representation in
 * Accept; one deadline for all of them. A member that is down, slow past the deadline, refuses
 * (4xx) or fails (429, 5xx) is left out and said so; a connection that fails before any answer is
 * tried once more under the same key, so a member never computes or charges one question twice.
 */
import * as Effect from "effect/Effect"
import { createHash, randomUUID } from "node:crypto"
import { PARTIAL_MEDIA_TYPE } from "../plugin/viewData.ts"
import type { Network, NetworkMember } from "./NetworkFile.ts"

/** How one member took part in a question. */
export type MemberStatus = "answered" | "refused" | "failed" | "timeout"

/** One member's reply: its partial answer, or why there is none. */
export interface MemberReply {
  readonly name: string
  readonly status: MemberStatus
  /** Why a member did not answer: its status and problem code, or what failed. */
  readonly reason?: string
  /** The partial representation it returned (answered only). */
  readonly body?: Record<string, unknown>
  /** What the member charged for the question (its answer's hcc_cost; 0 without an answer). */
  readonly hccCost: number
}

/** The Idempotency-Key a member gets for one question: the same on a retry, different per member. */
export const memberKey = (question: string, member: string): string => createHash("sha256").update(`${question}\n${member}`).digest("hex")

/** A fetch failure that happened before any response: the connection (refused, reset), not the deadline. */
const isConnectionFailure = (e: unknown, signal: AbortSignal): boolean => !signal.aborted && e instanceof TypeError

const askOne = async (member: NetworkMember, path: string, body: unknown, key: string, signal: AbortSignal, deadlineMs: number): Promise<MemberReply> => {
  const send = () =>
    fetch(`${member.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${member.token}`, "content-type": "application/json", accept: PARTIAL_MEDIA_TYPE, "idempotency-key": key },
      body: JSON.stringify(body),
      signal
    })
  try {
    let res: Response
    try {
      res = await send()
    } catch (e) {
      if (!isConnectionFailure(e, signal)) throw e
      res = await send()
    }
    const text = await res.text()
    let json: Record<string, unknown> | undefined
    try {
      json = JSON.parse(text) as Record<string, unknown>
    } catch {
      json = undefined
    }
    const code = typeof json?.["code"] === "string" ? ` ${json["code"]}` : ""
    if (res.status !== 200) {
      return { name: member.name, status: res.status === 429 || res.status >= 500 ? "failed" : "refused", reason: `${res.status}${code}`, hccCost: 0 }
    }
    if (!(res.headers.get("content-type") ?? "").startsWith(PARTIAL_MEDIA_TYPE) || json === undefined || typeof json["partial"] !== "object") {
      return { name: member.name, status: "refused", reason: "it did not return the partial representation", hccCost: Number(json?.["hcc_cost"] ?? 0) }
    }
    return { name: member.name, status: "answered", body: json, hccCost: Number(json["hcc_cost"] ?? 0) }
  } catch (e) {
    if (signal.aborted) return { name: member.name, status: "timeout", reason: `no answer within ${deadlineMs / 1000} s`, hccCost: 0 }
    return { name: member.name, status: "failed", reason: e instanceof TypeError ? "the site could not be reached" : "the site's answer could not be read", hccCost: 0 }
  }
}

/** Asks every member `path` with `body` (in the network file's order), all within the network's deadline. */
export const askMembers = (network: Network, path: string, body: unknown): Effect.Effect<ReadonlyArray<MemberReply>> =>
  Effect.promise((interrupted) => {
    const question = randomUUID()
    const signal = AbortSignal.any([interrupted, AbortSignal.timeout(network.deadlineMs)])
    return Promise.all(network.members.map((m) => askOne(m, path, body, memberKey(question, m.name), signal, network.deadlineMs)))
  })
