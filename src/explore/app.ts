/**
 * The explorer page (docs/explore.md), bundled by `npm run build` into build/explore/app.js and
 * served at /docs/explore. It reads the OpenAPI document (request schemas, examples, each
 * endpoint's view as `x-hcc-view`) and, with the token the person pastes, the catalog
 * (vocabularies and standard codes for the pick lists); it asks, and draws the answer.
 *
 * The token lives in this tab's `sessionStorage` only: never in a URL (the forms are handled here,
 * never submitted), a cookie or a log. Problems are shown where they belong: 401 at the token,
 * a 400's located errors and a 422's unknown name at their fields, the rest (429 with its wait)
 * at the Ask button.
 */
import { chartSpec, type PluginView, VIEW_MEDIA_TYPE } from "../plugin/view.ts"
import { chartTables, drawChart, nameChart, saveChart } from "./chart.ts"
import { byId, el, fieldInput, inputId, rawFrom, setRaw } from "./fields.ts"
import { bodyOf, type Field, fieldFor, type Group, groupsOf, rawOf, valueAt } from "./form.ts"
import { snippets } from "./snippets.ts"

type Json = Record<string, any>

const TOKEN_KEY = "hcc-explorer-token"

interface Endpoint {
  readonly domain: string
  readonly path: string
  readonly summary: string
  readonly cost: number
  readonly groups: ReadonlyArray<Group>
  readonly examples: ReadonlyArray<{ readonly name: string; readonly value: unknown }>
  readonly view: PluginView | undefined
}

const state: {
  openapi?: Json
  catalog?: Json
  endpoints: Array<Endpoint>
  current?: Endpoint
  chart?: Awaited<ReturnType<typeof drawChart>> | undefined
} = { endpoints: [] }

const token = () => sessionStorage.getItem(TOKEN_KEY) ?? ""

/** A call to the service with the token; the parsed body (or undefined) and the response. */
const call = async (method: "GET" | "POST", path: string, body?: unknown): Promise<{ readonly res: Response; readonly json: Json | undefined }> => {
  // Answers as their view representation where the endpoint has one (the answer and its
  // `view_data`: what the chart draws beyond the answer), else as JSON.
  const headers: Record<string, string> = { accept: method === "POST" ? `${VIEW_MEDIA_TYPE}, application/json;q=0.9` : "application/json" }
  if (token() !== "") headers["authorization"] = `Bearer ${token()}`
  if (body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }), cache: "no-store" })
  const text = await res.text()
  let json: Json | undefined
  try {
    json = text === "" ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  return { res, json }
}

// ---- The token --------------------------------------------------------------------------------

const showTokenProblem = (text: string) => {
  const p = byId("token-problem")
  p.textContent = text
  const input = byId<HTMLInputElement>("token")
  input.setAttribute("aria-invalid", text === "" ? "false" : "true")
  if (text !== "") input.focus()
}

const signIn = async () => {
  const value = byId<HTMLInputElement>("token").value.trim()
  if (value === "") return showTokenProblem("Paste a token (hcc tokens issue, or the demo token in $HCC_DATA_DIR/demo.token).")
  sessionStorage.setItem(TOKEN_KEY, value)
  byId<HTMLInputElement>("token").value = ""
  await loadCatalog()
}

const signOut = () => {
  sessionStorage.removeItem(TOKEN_KEY)
  byId("ask").hidden = true
  byId("answer").hidden = true
  byId("token-state").textContent = "No token in use."
}

const loadCatalog = async () => {
  const { res, json } = await call("GET", "/v1/catalog")
  if (res.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY)
    return showTokenProblem(`Not accepted (401 ${json?.["code"] ?? ""}): ${json?.["detail"] ?? "the token was refused"}`)
  }
  if (!res.ok || json === undefined) return showTokenProblem(`The catalog did not load (${res.status}): ${json?.["detail"] ?? res.statusText}`)
  showTokenProblem("")
  state.catalog = json
  byId("token-state").textContent = `Signed in: the token is kept in this tab only. Service ${json["version"]}; dataset ${json["dataset"]?.["source"] ?? "loading"}.`
  fillVocabularies(json)
  fillEndpoints()
  byId("ask").hidden = false
}

// ---- Endpoints and the form -------------------------------------------------------------------

const fillVocabularies = (catalog: Json) => {
  const box = byId("vocabularies")
  box.replaceChildren()
  for (const [name, codes] of Object.entries(catalog["vocabularies"] as Record<string, Array<string>>)) {
    const list = el("datalist", { id: `vocabulary-${name}` })
    const standard = (catalog["standard_codes"]?.[name] ?? {}) as Record<string, string>
    for (const code of codes) {
      list.append(el("option", { value: code, label: standard[code] ?? "" }))
      if (standard[code] !== undefined) list.append(el("option", { value: standard[code]!, label: code }))
    }
    box.append(list)
  }
}

const endpointsOf = (openapi: Json, catalog: Json): Array<Endpoint> =>
  (catalog["endpoints"] as Array<Json>).filter((e) => e["method"] === "POST").map((e) => {
    const op = openapi["paths"]?.[e["path"]]?.["post"] ?? {}
    const content = op["requestBody"]?.["content"]?.["application/json"] ?? {}
    return {
      domain: e["domain"],
      path: e["path"],
      summary: e["summary"],
      cost: e["hcc_cost"],
      groups: groupsOf(content["schema"] ?? {}, openapi),
      examples: Object.entries((content["examples"] ?? {}) as Record<string, Json>).map(([name, ex]) => ({ name, value: ex["value"] })),
      view: op["x-hcc-view"]
    }
  })

const fillEndpoints = () => {
  if (state.openapi === undefined || state.catalog === undefined) return
  state.endpoints = endpointsOf(state.openapi, state.catalog)
  const select = byId<HTMLSelectElement>("domain")
  const previous = select.value
  select.replaceChildren(...state.endpoints.map((e) => el("option", { value: e.path }, `${e.domain} — POST ${e.path}`)))
  if (state.endpoints.some((e) => e.path === previous)) select.value = previous
  chooseEndpoint(select.value)
}

const chooseEndpoint = (path: string) => {
  const endpoint = state.endpoints.find((e) => e.path === path)
  if (endpoint === undefined) return
  state.current = endpoint
  byId("domain-summary").textContent = `${endpoint.summary} Costs ${endpoint.cost} HCC credit${endpoint.cost === 1 ? "" : "s"} an answer.`
  const form = byId("fields")
  form.replaceChildren()
  for (const group of endpoint.groups) {
    if (group.fields.length === 0) continue
    // A small group of numbers (an axis's min and max) sits on one line.
    const compact = group.fields.length <= 2 && group.fields.every((f) => f.kind === "number")
    const set = el("fieldset", { class: compact ? "group compact" : "group" }, el("legend", {}, group.label === "" ? "Request" : group.label))
    for (const field of group.fields) {
      const id = inputId(field.pointer)
      set.append(el(
        "div",
        { class: "field" },
        el("label", { for: id }, field.label, field.required ? el("span", { class: "required", "aria-label": "required" }, " *") : ""),
        fieldInput(field),
        el("small", { id: `${id}-help` }, field.description),
        el("span", { id: `${id}-problem`, class: "problem", role: "alert" })
      ))
    }
    form.append(set)
  }
  byId<HTMLSelectElement>("example").replaceChildren(...endpoint.examples.map((ex) => el("option", { value: ex.name }, ex.name)))
  if (endpoint.examples[0] !== undefined) fillForm(endpoint.examples[0].value)
  clearProblems()
}

const formBody = () => {
  const endpoint = state.current!
  const raws = new Map(endpoint.groups.flatMap((g) => g.fields).map((f) => [f.pointer, rawFrom(f)] as const))
  return bodyOf(endpoint.groups, raws)
}

/** Fills the form from a request body; the names it has no field for. */
const fillForm = (body: unknown): Array<string> => {
  const endpoint = state.current!
  const fields = endpoint.groups.flatMap((g) => g.fields)
  for (const f of fields) setRaw(f, rawOf(f, valueAt(body, f.pointer)))
  const unknown: Array<string> = []
  const walk = (value: unknown, pointer: string) => {
    if (fields.some((f) => f.pointer === pointer)) return
    if (typeof value === "object" && value !== null && !Array.isArray(value)) for (const [k, v] of Object.entries(value)) walk(v, `${pointer}/${k}`)
    else unknown.push(pointer)
  }
  walk(body, "")
  syncJson()
  return unknown
}

const syncJson = () => {
  const { body } = formBody()
  byId<HTMLTextAreaElement>("request-json").value = JSON.stringify(body, null, 2)
}

// ---- Problems ---------------------------------------------------------------------------------

const clearProblems = () => {
  for (const p of document.querySelectorAll<HTMLElement>("#ask .problem")) p.textContent = ""
  for (const i of document.querySelectorAll<HTMLElement>("#ask [aria-invalid=true]")) i.setAttribute("aria-invalid", "false")
}

const problemAt = (field: Field | undefined, text: string) => {
  if (field === undefined) {
    byId("ask-problem").textContent = text
    return
  }
  const id = inputId(field.pointer)
  const p = byId(`${id}-problem`)
  p.textContent = p.textContent === "" ? text : `${p.textContent} ${text}`
  byId(id).setAttribute("aria-invalid", "true")
}

/** Where a problem answer goes: next to its fields, or next to the button. */
const showProblem = (status: number, problem: Json | undefined, retryAfter: string | null) => {
  const endpoint = state.current!
  const code = String(problem?.["code"] ?? `http_${status}`)
  const detail = String(problem?.["detail"] ?? "")
  if (status === 401) {
    sessionStorage.removeItem(TOKEN_KEY)
    byId("ask").hidden = true
    return showTokenProblem(`Not accepted (401 ${code}): ${detail} Paste a valid token.`)
  }
  const located = Array.isArray(problem?.["errors"]) ? problem!["errors"] as Array<Json> : []
  if (located.length > 0) {
    for (const e of located) problemAt(fieldFor(endpoint.groups, String(e["path"])), `${e["message"] ?? e["detail"] ?? ""} (${e["path"]})`)
    byId("ask-problem").textContent = `${status} ${code}: ${detail}`
  } else if (status === 422 && code.startsWith("unknown_")) {
    // unknown_drug, unknown_region, …: the field that picks from that vocabulary.
    const name = code.slice("unknown_".length)
    const field = endpoint.groups.flatMap((g) => g.fields).find((f) => f.kind === "vocabulary" && (f.vocabulary === name || f.vocabulary.endsWith(`_${name}`)))
    const suggestions = Array.isArray(problem?.["suggestions"]) && problem!["suggestions"].length > 0 ? ` Did you mean: ${problem!["suggestions"].join(", ")}?` : ""
    problemAt(field, `${detail}${suggestions}`)
  } else if (status === 429) {
    const wait = retryAfter ?? String(problem?.["retry_after_seconds"] ?? "")
    problemAt(undefined, `429 ${code} (${problem?.["limit"] ?? "limit"}): ${detail} Try again in ${wait} s.`)
  } else {
    problemAt(undefined, `${status} ${code}: ${detail}${problem?.["request_id"] !== undefined ? ` (request ${problem["request_id"]})` : ""}`)
  }
  // Focus to the first field at fault, else to the message itself (the button may still be disabled).
  const first = document.querySelector<HTMLElement>("#ask [aria-invalid=true]")
  ;(first ?? byId("ask-problem")).focus()
}

// ---- Asking and the answer --------------------------------------------------------------------

/** "burst: 59 left (resets in 1 s); daily: 9,999 left (resets in 4 h)" from an RFC 9651-style RateLimit header. */
const limitsLeft = (header: string | null): string => {
  if (header === null) return ""
  const parts = [...header.matchAll(/"([^"]+)";r=(\d+);t=(\d+)/g)].map(([, name, r, t]) => {
    const seconds = Number(t)
    const reset = seconds >= 3600 ? `${Math.round(seconds / 3600)} h` : seconds >= 60 ? `${Math.round(seconds / 60)} min` : `${seconds} s`
    return `${name}: ${Number(r).toLocaleString("en")} left (resets in ${reset})`
  })
  return parts.join("; ")
}

const ask = async () => {
  clearProblems()
  const endpoint = state.current
  if (endpoint === undefined) return
  const { body, errors } = formBody()
  if (errors.size > 0) {
    for (const [pointer, message] of errors) problemAt(fieldFor(endpoint.groups, pointer), `${message}.`)
    return
  }
  syncJson()
  const button = byId<HTMLButtonElement>("ask-button")
  button.disabled = true
  byId("answer").hidden = true
  byId("ask-state").textContent = "Asking…"
  // What the page is doing, for tests and scripts that drive it: asking, answered or problem.
  document.body.dataset["state"] = "asking"
  try {
    const { res, json } = await call("POST", endpoint.path, body)
    byId("ask-state").textContent = ""
    if (!res.ok || json === undefined) {
      showProblem(res.status, json, res.headers.get("retry-after"))
      document.body.dataset["state"] = "problem"
      return
    }
    await showAnswer(endpoint, body, json, res)
    document.body.dataset["state"] = "answered"
  } catch (e) {
    byId("ask-state").textContent = ""
    problemAt(undefined, `No answer: ${e instanceof Error ? e.message : String(e)}`)
    document.body.dataset["state"] = "problem"
  } finally {
    button.disabled = false
  }
}

const showAnswer = async (endpoint: Endpoint, request: Json, answer: Json, res: Response) => {
  const section = byId("answer")
  section.hidden = false
  byId("answer-cost").textContent = `hcc_cost ${answer["hcc_cost"]}. Limits left: ${limitsLeft(res.headers.get("ratelimit")) || "not stated"}.`
  // The answer as a plain JSON call gets it; its view_data feeds the chart only.
  const { view_data: _, ...plain } = answer
  byId("answer-json").textContent = JSON.stringify(plain, null, 2)
  const chart = byId("chart")
  const tables = byId("chart-tables")
  state.chart?.finalize()
  state.chart = undefined
  chart.replaceChildren()
  tables.replaceChildren()
  chart.removeAttribute("role")
  chart.removeAttribute("aria-label")
  byId("chart-caption").textContent = ""
  byId("chart-actions").hidden = endpoint.view === undefined
  byId("chart-spec-box").hidden = endpoint.view === undefined
  if (endpoint.view === undefined) {
    chart.textContent = `${endpoint.domain} declares no view: the answer is shown as JSON below.`
  } else {
    const minCellSize = state.catalog?.["disclosure"]?.["min_cell_size"] as number | undefined
    state.chart = await drawChart(chart, endpoint.view, request, answer, minCellSize)
    nameChart(chart, byId("chart-caption"))
    byId("chart-spec").textContent = JSON.stringify(chartSpec(endpoint.view, request, answer, minCellSize), null, 2)
    tables.append(chartTables(endpoint.view, request, answer, minCellSize))
  }
  const s = snippets(location.origin, endpoint.path, request)
  byId("snippet-curl").textContent = s.curl
  byId("snippet-python").textContent = s.python
  byId("snippet-typescript").textContent = s.typescript
  byId("answer-heading").focus()
}

// ---- Start ------------------------------------------------------------------------------------

const start = async () => {
  byId("token-form").addEventListener("submit", (e) => {
    e.preventDefault()
    void signIn()
  })
  byId("sign-out").addEventListener("click", signOut)
  byId("domain").addEventListener("change", (e) => chooseEndpoint((e.target as HTMLSelectElement).value))
  byId("fill-example").addEventListener("click", () => {
    const ex = state.current?.examples.find((x) => x.name === byId<HTMLSelectElement>("example").value)
    if (ex !== undefined) fillForm(ex.value)
  })
  byId("fields").addEventListener("input", syncJson)
  byId("fields").addEventListener("change", syncJson)
  byId("use-json").addEventListener("click", () => {
    clearProblems()
    try {
      const unknown = fillForm(JSON.parse(byId<HTMLTextAreaElement>("request-json").value))
      if (unknown.length > 0) problemAt(undefined, `No field for ${unknown.join(", ")}: left out.`)
    } catch {
      problemAt(undefined, "The request JSON does not parse.")
    }
  })
  for (const kind of ["svg", "png"] as const) {
    byId(`save-${kind}`).addEventListener("click", () => {
      if (state.chart !== undefined) void saveChart(state.chart, kind, `hcc-${state.current?.domain ?? "chart"}`)
    })
  }
  for (const button of document.querySelectorAll<HTMLButtonElement>("button.copy")) {
    button.addEventListener("click", () => {
      const text = byId(button.dataset["copy"]!).textContent ?? ""
      navigator.clipboard.writeText(text).then(
        () => (byId("copy-state").textContent = `Copied the ${button.getAttribute("aria-describedby")?.replace("-heading", "")} snippet.`),
        () => (byId("copy-state").textContent = "The browser did not allow copying: select the text instead.")
      )
    })
  }
  byId("request-form").addEventListener("submit", (e) => {
    e.preventDefault()
    void ask()
  })
  const { res, json } = await call("GET", "/v1/openapi.json")
  if (!res.ok || json === undefined) return showTokenProblem(`The API description did not load (${res.status}).`)
  state.openapi = json
  if (token() !== "") await loadCatalog()
  else byId("token-state").textContent = "No token in use."
  document.body.dataset["ready"] = "true"
}

void start()
