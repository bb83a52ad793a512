/**
 * Passkeys (WebAuthn Level 2, verified by the maintained `@simplewebauthn/server`): a signed-in
 * person registers one (a discoverable credential, so signing in needs no e-mail address), then
 * signs in with it instead of a password. The relying party is the service's own host (the public
 * URL's, else the request's Host) and the expected origin the portal's own. Each ceremony's
 * challenge is random, stored for five minutes and used once; a passkey's signature counter is
 * kept; user verification (the device's PIN or biometric) is required, since a passkey stands in
 * for the password. Only public keys are stored. Passkey sign-ins are throttled by address as
 * password ones are.
 */
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from "@simplewebauthn/server"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import type { IncomingMessage } from "node:http"
import { json, ownOrigin } from "./http.ts"
import { type Kit, refused } from "./kit.ts"

/** The WebAuthn library, loaded at the first passkey ceremony (not at every server's start). */
const webauthn = () => import("@simplewebauthn/server")

/** How long a ceremony's challenge is good for. */
const CHALLENGE_MS = 5 * 60_000
const RP_NAME = "HCC Medical Intelligence"

interface PasskeyRow {
  readonly id: string
  readonly person_id: string
  readonly public_key: string
  readonly counter: number
  readonly transports: string
  readonly created_at: string
  readonly last_used_at: string | null
}

/** The challenge a browser's response answers (its client data's), or undefined when it has none. */
const challengeOf = (response: unknown): string | undefined => {
  try {
    const data = (response as { readonly response: { readonly clientDataJSON: string } }).response.clientDataJSON
    const challenge = (JSON.parse(Buffer.from(data, "base64url").toString("utf8")) as { readonly challenge?: unknown }).challenge
    return typeof challenge === "string" ? challenge : undefined
  } catch {
    return undefined
  }
}

/** The passkey routes under /portal/api/passkeys. */
export const passkeyRoutes = ({ activeAccount, audit, config, open, people, sessionState, signed, signIn, sql, throttle }: Kit) => {
  const relyingParty = (req: IncomingMessage) => {
    const origin = ownOrigin(req, config.publicUrl)
    return { origin, rpID: new URL(origin).hostname }
  }
  // Challenges past their five minutes go as new ones are stored: the table holds open ceremonies only.
  const storeChallenge = (challenge: string, purpose: "register" | "sign_in", personId: string | null) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.andThen(
        sql`DELETE FROM passkey_challenges WHERE expires_at <= ${new Date(now).toISOString()}`,
        sql`INSERT INTO passkey_challenges ${sql.insert({ challenge, purpose, person_id: personId, expires_at: new Date(now + CHALLENGE_MS).toISOString() })}`
      ))
  /** Uses a challenge: true when it was issued for this purpose (and person), unused and unexpired. */
  const useChallenge = (challenge: string | undefined, purpose: "register" | "sign_in", personId: string | null) =>
    Effect.gen(function*() {
      if (challenge === undefined) return false
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* sql`DELETE FROM passkey_challenges WHERE expires_at <= ${now}`
      const used = yield* sql<{ person_id: string | null }>`DELETE FROM passkey_challenges WHERE challenge = ${challenge} AND purpose = ${purpose} RETURNING person_id`
      return used.length === 1 && used[0]!.person_id === personId
    })
  const verifyFailed = (e: unknown) => refused(400, "passkey_not_verified", `The passkey's answer could not be verified: ${e instanceof Error ? e.message : "unreadable"}`)

  signed("GET", "passkeys", (c) =>
    Effect.map(sql<PasskeyRow>`SELECT * FROM passkeys WHERE person_id = ${c.me.person.id} ORDER BY created_at`, (rows) =>
      json({ passkeys: rows.map((r) => ({ id: r.id, created_at: r.created_at, last_used_at: r.last_used_at })) })))

  signed("POST", "passkeys/options", (c) =>
    Effect.gen(function*() {
      const { rpID } = relyingParty(c.req)
      const existing = yield* sql<PasskeyRow>`SELECT * FROM passkeys WHERE person_id = ${c.me.person.id}`
      const options = yield* Effect.promise(async () =>
        (await webauthn()).generateRegistrationOptions({
          rpName: RP_NAME,
          rpID,
          userName: c.me.person.email,
          userID: new TextEncoder().encode(c.me.person.id),
          attestationType: "none",
          excludeCredentials: existing.map((p) => ({ id: p.id, transports: JSON.parse(p.transports) as Array<string> })),
          authenticatorSelection: { residentKey: "required", userVerification: "required" }
        }))
      yield* storeChallenge(options.challenge, "register", c.me.person.id)
      return json(options)
    }))

  signed("POST", "passkeys/register", (c) =>
    Effect.gen(function*() {
      const response = c.body["response"] as RegistrationResponseJSON
      if (!(yield* useChallenge(challengeOf(response), "register", c.me.person.id))) return yield* refused(400, "passkey_not_verified", "This passkey answer is not for a challenge of yours that is still open; try again.")
      const { origin, rpID } = relyingParty(c.req)
      const verified = yield* Effect.tryPromise({
        try: async () => (await webauthn()).verifyRegistrationResponse({ response, expectedChallenge: challengeOf(response)!, expectedOrigin: origin, expectedRPID: rpID, requireUserVerification: true }),
        catch: verifyFailed
      })
      if (!verified.verified) return yield* verifyFailed(undefined)
      const credential = verified.registrationInfo.credential
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const known = yield* sql<{ id: string }>`SELECT id FROM passkeys WHERE id = ${credential.id}`
      if (known.length > 0) return yield* refused(409, "passkey_known", "This passkey is registered already.")
      yield* sql`INSERT INTO passkeys ${sql.insert({ id: credential.id, person_id: c.me.person.id, public_key: Buffer.from(credential.publicKey).toString("base64url"), counter: credential.counter, transports: JSON.stringify(credential.transports ?? []), created_at: now, last_used_at: null })}`
      yield* audit(c, c.account.id, c.me.person.email, "passkey_registered", { passkey_id: credential.id.slice(0, 12) })
      return json({ id: credential.id, created_at: now }, 201)
    }))

  open("POST", "passkeys/sign-in-options", (req) =>
    Effect.gen(function*() {
      yield* throttle(req, undefined)
      const options = yield* Effect.promise(async () => (await webauthn()).generateAuthenticationOptions({ rpID: relyingParty(req).rpID, userVerification: "required" }))
      yield* storeChallenge(options.challenge, "sign_in", null)
      return json(options)
    }))

  open("POST", "passkeys/sign-in", (req, _info, body) =>
    Effect.gen(function*() {
      const response = body["response"] as AuthenticationResponseJSON
      const notYours = refused(401, "sign_in_failed", "That passkey does not sign in to this service.")
      if (!(yield* useChallenge(challengeOf(response), "sign_in", null))) return yield* refused(400, "passkey_not_verified", "This passkey answer is not for an open challenge; try again.")
      const [passkey] = yield* sql<PasskeyRow>`SELECT * FROM passkeys WHERE id = ${String(response?.id ?? "")}`
      if (passkey === undefined) return yield* notYours
      const { origin, rpID } = relyingParty(req)
      const verified = yield* Effect.tryPromise({
        try: async () =>
          (await webauthn()).verifyAuthenticationResponse({
            response,
            expectedChallenge: challengeOf(response)!,
            expectedOrigin: origin,
            expectedRPID: rpID,
            credential: { id: passkey.id, publicKey: Buffer.from(passkey.public_key, "base64url"), counter: Number(passkey.counter), transports: JSON.parse(passkey.transports) as [] },
            requireUserVerification: true
          }),
        catch: () => notYours
      })
      if (!verified.verified) return yield* notYours
      // The authenticator's user handle is the id the passkey was made for (registration's userID).
      const handle = response.response.userHandle
      if (handle !== undefined && Buffer.from(handle, "base64url").toString("utf8") !== passkey.person_id) return yield* notYours
      const person = yield* people.person(passkey.person_id)
      if (person === undefined) return yield* notYours
      const account = yield* activeAccount(person.accountId)
      yield* sql`UPDATE passkeys SET counter = ${verified.authenticationInfo.newCounter}, last_used_at = ${new Date(yield* Clock.currentTimeMillis).toISOString()} WHERE id = ${passkey.id}`
      const s = yield* signIn(req, person.id)
      yield* audit({ req }, person.accountId, person.email, "signed_in", { with: "passkey" })
      return json(sessionState({ person, sessionHash: "", expiresAt: s.session.expiresAt }, s.session.id, account), 200, { "set-cookie": s.cookie })
    }))
}
