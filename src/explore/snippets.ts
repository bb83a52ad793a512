/**
 * The explorer's "same call elsewhere" snippets: the request just asked, as curl, with the Python
 * client and with the TypeScript client. The token is never written into them: each reads it from
 * the environment (`HCC_TOKEN`), so a snippet copied into a shell history, a notebook or a ticket
 * carries none. Pure: tested in Node, drawn by the page.
 */

/** The TypeScript client's method for each built-in endpoint (src/client/index.ts). */
const TS_METHODS: Readonly<Record<string, string>> = {
  "/v1/clinical": "clinical",
  "/v1/drug-outcomes": "drugOutcomes",
  "/v1/risk-model": "riskModel",
  "/v1/device-outcomes": "deviceOutcomes",
  "/v1/population": "population",
  "/v1/one-health": "oneHealth",
  "/v1/temporal": "temporal"
}

/** A JSON value as a Python literal (true/false/null spelled as Python spells them). */
export const pythonLiteral = (value: unknown, indent = ""): string => {
  if (value === null || value === undefined) return "None"
  if (value === true) return "True"
  if (value === false) return "False"
  if (typeof value === "number" || typeof value === "string") return JSON.stringify(value)
  const inner = `${indent}    `
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v !== "object" || v === null)) return `[${value.map((v) => pythonLiteral(v)).join(", ")}]`
    return `[\n${value.map((v) => `${inner}${pythonLiteral(v, inner)},`).join("\n")}\n${indent}]`
  }
  const entries = Object.entries(value as Record<string, unknown>)
  if (entries.length === 0) return "{}"
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${pythonLiteral(v, inner)},`).join("\n")}\n${indent}}`
}

const shellQuote = (text: string) => `'${text.replaceAll("'", `'"'"'`)}'`

/** The three snippets for a POST of `body` to `path` on the service at `origin`. */
export const snippets = (origin: string, path: string, body: unknown): { readonly curl: string; readonly python: string; readonly typescript: string } => {
  const json = JSON.stringify(body)
  const curl = [
    `curl -sS ${shellQuote(`${origin}${path}`)} \\`,
    `  -H "Authorization: Bearer $HCC_TOKEN" \\`,
    `  -H 'Content-Type: application/json' \\`,
    `  -d ${shellQuote(json)}`
  ].join("\n")
  const python = [
    "from hcc_client import Client",
    "",
    `client = Client(${JSON.stringify(origin)})  # the token from HCC_TOKEN`,
    `answer = client.call(${JSON.stringify(path)}, ${pythonLiteral(body)})`,
    "answer  # in Jupyter: drawn as its chart"
  ].join("\n")
  const method = TS_METHODS[path]
  const typescript = method === undefined
    ? [
      `const res = await fetch(${JSON.stringify(`${origin}${path}`)}, {`,
      `  method: "POST",`,
      "  headers: { authorization: `Bearer ${process.env.HCC_TOKEN}`, \"content-type\": \"application/json\" },",
      `  body: JSON.stringify(${JSON.stringify(body, null, 2).replaceAll("\n", "\n  ")})`,
      "})",
      "const answer = await res.json()"
    ].join("\n")
    : [
      `import { createClient } from "hcc-medical-intelligence/client"`,
      "",
      `const hcc = createClient({ baseUrl: ${JSON.stringify(origin)}, token: process.env.HCC_TOKEN })`,
      `const answer = await hcc.${method}(${JSON.stringify(body, null, 2)})`
    ].join("\n")
  return { curl, python, typescript }
}
