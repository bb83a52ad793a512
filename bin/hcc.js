#!/usr/bin/env node
// The `hcc` command. In a checkout (src/ beside this folder, outside node_modules) it runs the
// TypeScript sources, so a change is live without a build; installed as a package it runs the
// compiled dist/ (Node does not strip types under node_modules).
import { existsSync } from "node:fs"
import { dirname, join, sep } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const checkout = !root.split(sep).includes("node_modules") && existsSync(join(root, "src", "cli.ts"))
const { main } = await import(checkout ? "../src/cli.ts" : "../dist/src/cli.js")
main()
