/**
 * The account portal's page (docs/portal.md), bundled by `npm run build` into build/portal/app.js
 * and served at /portal. The session is an HttpOnly cookie this script never sees; what it keeps is
 * the session's CSRF token (from /portal/api/session), sent on every change. An invite code comes
 * in the address's fragment (`#invite=…`), which browsers never send to a server; it is removed
 * from the address as soon as it is read. A new token is shown once, and never stored.
 */
import { startAuthentication, startRegistration } from "@simplewebauthn/browser"
import { byId, el } from "../../explore/fields.ts"
import { drawChart } from "../../explore/chart.ts"
import { USAGE_VIEW } from "./usageView.ts"

type Json = Record<string, any>

const state: { csrf: string; role: string; inviteCode: string; chart?: { finalize(): void } | undefined } = { csrf: "", role: "", inviteCode: "" }

/** A call to the portal's API: the parsed body and the status. */
const api = async (method: "GET" | "POST", path: string, body?: unknown): Promise<{ readonly status: number; readonly json: Json }> => {
  const headers: Record<string, string> = { accept: "application/json" }
  if (method === "POST") {
    headers["content-type"] = "application/json"
    if (state.csrf !== "") headers["x-csrf-token"] = state.csrf
  }
  const res = await fetch(`/portal/api/${path}`, { method, headers, cache: "no-store", credentials: "same-origin", ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  let json: Json = {}
  try {
    json = await res.json()
  } catch {
    json = {}
  }
  return { status: res.status, json }
}

/** A problem's sentence for the person (the service's detail, else the status). */
const say = (r: { readonly status: number; readonly json: Json }) => `${r.json["detail"] ?? "Something went wrong"} (${r.status})`

const show = (id: string, visible: boolean) => {
  byId(id).hidden = !visible
}
const setText = (id: string, text: string) => {
  byId(id).textContent = text
}
const when = (iso: string | null | undefined, none: string) => (iso === null || iso === undefined ? none : iso.slice(0, 16).replace("T", " ") + " UTC")

/** Replaces a table's body rows. */
const fill = (tableId: string, rows: ReadonlyArray<ReadonlyArray<string | Node>>) => {
  const body = byId<HTMLTableElement>(tableId).tBodies[0]!
  body.replaceChildren(...rows.map((cells) => el("tr", {}, ...cells.map((c) => el("td", {}, c)))))
}

// ---- Signed out --------------------------------------------------------------------------------

const signedOut = async () => {
  show("signed-in", false)
  const fragment = new URLSearchParams(location.hash.slice(1))
  const code = fragment.get("invite")
  if (code !== null) {
    state.inviteCode = code
    history.replaceState(null, "", location.pathname)
  }
  if (state.inviteCode !== "") {
    const r = await api("POST", "invitation", { code: state.inviteCode })
    if (r.status === 200) {
      setText("invite-about", `You are invited to the account ${r.json["account"]["name"]} as ${r.json["role"]}, as ${r.json["email"]}. Choose a password to sign in with.`)
      show("sign-up", true)
      show("sign-in", false)
      byId("new-password").focus()
      return
    }
    setText("state", say(r))
    state.inviteCode = ""
  }
  show("sign-up", false)
  show("sign-in", true)
}

byId("sign-up-form").addEventListener("submit", async (e) => {
  e.preventDefault()
  setText("sign-up-problem", "")
  const r = await api("POST", "sign-up", { code: state.inviteCode, password: byId<HTMLInputElement>("new-password").value })
  if (r.status !== 201) return setText("sign-up-problem", say(r))
  byId<HTMLInputElement>("new-password").value = ""
  state.inviteCode = ""
  await signedIn(r.json)
})

byId("sign-in-form").addEventListener("submit", async (e) => {
  e.preventDefault()
  setText("sign-in-problem", "")
  const r = await api("POST", "sign-in", { email: byId<HTMLInputElement>("email").value, password: byId<HTMLInputElement>("password").value })
  byId<HTMLInputElement>("password").value = ""
  if (r.status !== 200) return setText("sign-in-problem", say(r))
  await signedIn(r.json)
})

/**
 * A passkey ceremony: the options from `optionsPath`, the browser's authenticator (`start`), its
 * answer to `finishPath`; a refusal or a cancelled ceremony is said at `problemId`. The answer's
 * JSON when the service took it, else undefined.
 */
const ceremony = async (optionsPath: string, start: (options: any) => Promise<unknown>, finishPath: string, ok: number, problemId: string, cancelled: string): Promise<Json | undefined> => {
  setText(problemId, "")
  const options = await api("POST", optionsPath, {})
  if (options.status !== 200) return void setText(problemId, say(options))
  let response: unknown
  try {
    response = await start(options.json)
  } catch (e) {
    return void setText(problemId, `${cancelled} (${e instanceof Error ? e.message : String(e)}).`)
  }
  const r = await api("POST", finishPath, { response })
  if (r.status !== ok) return void setText(problemId, say(r))
  return r.json
}

byId("passkey-sign-in").addEventListener("click", async () => {
  const session = await ceremony("passkeys/sign-in-options", (o) => startAuthentication({ optionsJSON: o }), "passkeys/sign-in", 200, "sign-in-problem", "No passkey was used")
  if (session !== undefined) await signedIn(session)
})

// ---- Signed in ---------------------------------------------------------------------------------

const signedIn = async (session: Json) => {
  state.csrf = session["csrf_token"]
  state.role = session["person"]["role"]
  show("sign-in", false)
  show("sign-up", false)
  show("signed-in", true)
  show("people-section", state.role === "owner")
  show("audit-section", state.role === "owner")
  setText("you", `${session["person"]["email"]}, ${state.role} of ${session["account"]["name"]} (${session["account"]["id"]}).`)
  setText("state", "Signed in.")
  await refresh()
  byId("you-heading").focus()
}

const loadPasskeys = async () => {
  const r = await api("GET", "passkeys")
  if (await ended(r)) return
  const n = r.json["passkeys"].length
  setText("passkeys", n === 0 ? "No passkey yet: add one to sign in without your password." : `${n} passkey${n === 1 ? "" : "s"} can sign you in.`)
}

byId("add-passkey").addEventListener("click", async () => {
  if ((await ceremony("passkeys/options", (o) => startRegistration({ optionsJSON: o }), "passkeys/register", 201, "you-problem", "No passkey was added")) === undefined) return
  setText("state", "Passkey added.")
  await loadPasskeys()
})

byId("password-form").addEventListener("submit", async (e) => {
  e.preventDefault()
  setText("password-problem", "")
  setText("password-state", "")
  const current = byId<HTMLInputElement>("current-password")
  const next = byId<HTMLInputElement>("changed-password")
  const r = await api("POST", "password", { current_password: current.value, new_password: next.value })
  current.value = ""
  next.value = ""
  if (r.status !== 200) return setText("password-problem", say(r))
  state.csrf = r.json["csrf_token"]
  setText("password-state", "Changed; your other sessions have ended.")
})

const refresh = () => Promise.all([loadAccount(), loadUsage(), loadTokens(), loadPasskeys(), ...(state.role === "owner" ? [loadPeople(), loadAudit()] : [])])

/** The page after an answer that says the session has ended. */
const ended = async (r: { readonly status: number }) => {
  if (r.status !== 401) return false
  state.csrf = ""
  setText("state", "Your session has ended; sign in again.")
  await signedOut()
  return true
}

const loadAccount = async () => {
  const r = await api("GET", "account")
  if (await ended(r)) return
  const a = r.json
  const limit = (l: Json | null, unit: string) => (l === null ? "none" : `${l["limit"]} ${unit} (${l["remaining"]} left now; resets in ${l["reset_seconds"]} s)`)
  const items: Array<[string, string]> = [
    ["Tier", a["tier"]],
    ["Daily limit", limit(a["limits"]["daily"], "queries a day")],
    ["Burst limit", limit(a["limits"]["burst"], "requests a minute")],
    ["Today", `${a["queries_today"]} queries, ${a["hcc_cost_today"]} credits`]
  ]
  byId("account").replaceChildren(...items.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]))
}

const loadUsage = async () => {
  const r = await api("GET", "usage")
  if (await ended(r)) return
  const u = r.json
  setText("usage-summary", `Today: ${u["today"]["calls"]} calls, ${u["today"]["hcc_cost"]} credits, ${u["today"]["refused"]} refused. Last 30 days: ${u["last_30_days"]["calls"]} calls, ${u["last_30_days"]["hcc_cost"]} credits, ${u["last_30_days"]["refused"]} refused.`)
  fill("usage-today", u["today"]["by_endpoint"].map((row: Json) => [row["endpoint"], String(row["calls"]), String(row["hcc_cost"]), String(row["refused"])]))
  state.chart?.finalize()
  const box = byId("usage-chart")
  box.replaceChildren()
  state.chart = u["days"].length === 0 ? undefined : await drawChart(box, USAGE_VIEW, {}, u)
  if (state.chart === undefined) box.append(el("p", {}, "No calls in the last 30 days."))
}

const action = (label: string, onClick: () => Promise<void>) => {
  const b = el("button", { type: "button" }, label)
  b.addEventListener("click", () => void onClick())
  return b
}

const showToken = (token: string) => {
  const origin = location.origin
  setText("new-token-value", token)
  setText("new-token-curl", `export HCC_TOKEN='${token}'\ncurl -sS '${origin}/v1/catalog' -H "Authorization: Bearer $HCC_TOKEN"`)
  setText("new-token-python", `# HCC_TOKEN set in the environment, as above\nfrom hcc_client import Client\n\nclient = Client(${JSON.stringify(origin)})\nclient.catalog()`)
  setText("copy-state", "")
  show("new-token", true)
  byId("new-token").focus()
}

byId("copy-token").addEventListener("click", async () => {
  try {
    await navigator.clipboard.writeText(byId("new-token-value").textContent ?? "")
    setText("copy-state", "Copied.")
  } catch {
    setText("copy-state", "The browser did not allow copying; select the token and copy it.")
  }
})

const loadTokens = async () => {
  const r = await api("GET", "tokens")
  if (await ended(r)) return
  fill("tokens", r.json["tokens"].map((t: Json) => {
    const live = t["revoked_at"] === null && (t["expires_at"] === null || Date.parse(t["expires_at"]) > Date.now())
    const stateText = t["revoked_at"] !== null ? `revoked ${when(t["revoked_at"], "")}` : live ? "active" : "expired"
    const actions = el("span", {})
    if (live) {
      actions.append(
        action(`Revoke ${t["label"]}`, async () => {
          const x = await api("POST", "tokens/revoke", { token_id: t["id"] })
          if (x.status !== 200) return setText("issue-problem", say(x))
          setText("state", `Revoked ${t["label"]} (${t["id"]}).`)
          await refresh()
        }),
        " ",
        action(`Roll ${t["label"]}`, async () => {
          const x = await api("POST", "tokens/roll", { token_id: t["id"], grace_seconds: Number(byId<HTMLSelectElement>("grace").value) })
          if (x.status !== 201) return setText("issue-problem", say(x))
          setText("state", `Rolled ${t["label"]}: the old token works until ${when(x.json["old"]["expires_at"], "now")}.`)
          await refresh()
          showToken(x.json["token"])
        })
      )
    }
    return [t["label"], t["id"], when(t["created_at"], ""), when(t["last_used_at"], "never"), when(t["expires_at"], "never"), stateText, actions]
  }))
}

byId("issue-form").addEventListener("submit", async (e) => {
  e.preventDefault()
  setText("issue-problem", "")
  const days = byId<HTMLInputElement>("token-days").value
  const r = await api("POST", "tokens/issue", { label: byId<HTMLInputElement>("token-label").value, ...(days === "" ? {} : { expires_in_days: Number(days) }) })
  if (r.status !== 201) return setText("issue-problem", say(r))
  byId<HTMLInputElement>("token-label").value = ""
  await refresh()
  showToken(r.json["token"])
})

const loadPeople = async () => {
  const r = await api("GET", "people")
  if (await ended(r)) return
  fill("people", r.json["people"].map((p: Json) => [
    p["email"],
    p["role"],
    when(p["created_at"], ""),
    action(`Remove ${p["email"]}`, async () => {
      const x = await api("POST", "people/remove", { person_id: p["id"] })
      if (x.status !== 200) return setText("invite-problem", say(x))
      setText("state", `Removed ${p["email"]}.`)
      await refresh()
    })
  ]))
}

byId("invite-form").addEventListener("submit", async (e) => {
  e.preventDefault()
  setText("invite-problem", "")
  setText("invite-link", "")
  const r = await api("POST", "people/invite", { email: byId<HTMLInputElement>("invite-email").value, role: byId<HTMLSelectElement>("invite-role").value })
  if (r.status !== 201) return setText("invite-problem", say(r))
  setText("invite-link", `Send ${r.json["email"]} this link (it works once, until ${when(r.json["expires_at"], "")}): ${r.json["link"]}`)
  await refresh()
})

const loadAudit = async () => {
  const r = await api("GET", "audit")
  if (await ended(r)) return
  fill("audit", r.json["entries"].map((a: Json) => [when(a["at"], ""), a["actor"], a["action"].replaceAll("_", " "), Object.entries(a["detail"]).map(([k, v]) => `${k}: ${v}`).join(", "), a["address"]]))
}

const signOut = (path: string) => async () => {
  const r = await api("POST", path)
  state.csrf = ""
  setText("state", r.status === 200 ? (path === "sign-out" ? "Signed out." : `Signed out everywhere (${r.json["sessions_ended"]} sessions).`) : say(r))
  await signedOut()
}
byId("sign-out").addEventListener("click", () => void signOut("sign-out")())
byId("sign-out-everywhere").addEventListener("click", () => void signOut("sign-out-everywhere")())

// ---- Start -------------------------------------------------------------------------------------

const start = async () => {
  const r = await api("GET", "session")
  // An invite link opened while signed in is still an invite: set up the new sign-in.
  if (r.json["signed_in"] === true && !location.hash.startsWith("#invite=")) await signedIn(r.json)
  else await signedOut()
  document.body.dataset["ready"] = "true"
}
void start()
