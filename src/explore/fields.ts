/**
 * The explorer's form controls (the page is app.ts): one control per field of form.ts — a select
 * for a choice, check boxes for a list of choices, a text input with the vocabulary's pick list
 * (a datalist: it searches as you type) for codes, number inputs, a JSON text area for the rest —
 * each labelled, described and with a place for its problem; and reading and setting their values.
 */
import type { Field, Raw } from "./form.ts"

/** An element with its attributes and children. */
export const el = <K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<Record<string, string>> = {}, ...children: Array<Node | string>): HTMLElementTagNameMap[K] => {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(props)) if (v !== undefined) node.setAttribute(k, v)
  node.append(...children)
  return node
}
/** An element of the page by id. */
export const byId = <T extends HTMLElement>(id: string) => document.getElementById(id) as T

/** The id of a field's control (its help and problem ids add `-help`, `-problem`). */
export const inputId = (pointer: string) => `field${pointer.replaceAll(/[^A-Za-z0-9_]/g, "-")}`

/** The control of a field. */
export const fieldInput = (field: Field): HTMLElement => {
  const id = inputId(field.pointer)
  const describedBy = `${id}-help ${id}-problem`
  const common = { id, name: field.pointer, "aria-describedby": describedBy, "data-pointer": field.pointer }
  switch (field.kind) {
    case "choice": {
      const select = el("select", common, el("option", { value: "" }, field.required ? "(choose)" : "(default)"))
      for (const o of field.options) select.append(el("option", { value: o }, o))
      return select
    }
    case "choices": {
      const box = el("fieldset", { ...common, class: "choices" }, el("legend", { class: "visually-hidden" }, field.label))
      for (const o of field.options) {
        const boxId = `${id}-${o}`
        box.append(el("label", { for: boxId }, el("input", { type: "checkbox", id: boxId, value: o }), ` ${o}`))
      }
      return box
    }
    case "boolean":
      return el("input", { ...common, type: "checkbox" })
    case "number":
      return el("input", {
        ...common,
        type: "number",
        step: field.integer ? "1" : "any",
        ...(field.minimum !== undefined ? { min: String(field.minimum) } : {}),
        ...(field.maximum !== undefined ? { max: String(field.maximum) } : {})
      })
    case "vocabulary":
      return field.multiple
        ? el("input", { ...common, type: "text", list: `vocabulary-${field.vocabulary}`, placeholder: "codes, comma-separated", autocomplete: "off", spellcheck: "false" })
        : el("input", { ...common, type: "text", list: `vocabulary-${field.vocabulary}`, autocomplete: "off", spellcheck: "false" })
    case "numbers":
      return el("input", { ...common, type: "text", inputmode: "decimal", placeholder: "numbers, comma-separated" })
    case "json":
      return el("textarea", { ...common, rows: "3", spellcheck: "false" })
    default:
      return el("input", { ...common, type: "text", spellcheck: "false" })
  }
}

/** What a field's control holds. */
export const rawFrom = (field: Field): Raw => {
  const node = byId(inputId(field.pointer))
  if (field.kind === "choices") return [...node.querySelectorAll<HTMLInputElement>("input:checked")].map((b) => b.value)
  if (field.kind === "boolean") return (node as HTMLInputElement).checked
  return (node as HTMLInputElement).value
}

/** Sets what a field's control holds. */
export const setRaw = (field: Field, raw: Raw) => {
  const node = byId(inputId(field.pointer))
  if (field.kind === "choices") {
    for (const b of node.querySelectorAll<HTMLInputElement>("input")) b.checked = Array.isArray(raw) && raw.includes(b.value)
  } else if (field.kind === "boolean") (node as HTMLInputElement).checked = raw === true
  else (node as HTMLInputElement).value = typeof raw === "string" ? raw : ""
}
