/**
 * Driving the explorer (/docs/explore) in Chromium: sign in, ask a question through its form, and
 * count the marks its chart drew the way Vega draws them.
 */
import type { Page } from "playwright-core"

/** Marks by type in an SVG the way Vega draws them: `g.mark-<type>.role-mark`, one child per item; `svg` null reads the page's chart. */
export const markCounts = (page: Page, svg: string | null): Promise<Record<string, number>> =>
  page.evaluate((markup) => {
    const root = markup === null ? document.querySelector("#chart svg") : new DOMParser().parseFromString(markup, "image/svg+xml").documentElement
    const counts: Record<string, number> = {}
    for (const g of root?.querySelectorAll("g.role-mark") ?? []) {
      const type = [...g.classList].find((c) => c.startsWith("mark-"))!.slice(5)
      counts[type] = (counts[type] ?? 0) + g.children.length
    }
    return counts
  }, svg)

/** Signs in with `token` (the page shows the question form once the token is taken). */
export const signIn = async (page: Page, token: string): Promise<void> => {
  await page.fill("#token", token)
  await page.click("text=Use this token")
  await page.waitForSelector("#ask:not([hidden])")
}

/** Asks `body` of `path` through the form's JSON box; the page's state once answered: "answered" or "problem". */
export const askThroughForm = async (page: Page, path: string, body: unknown): Promise<string | undefined> => {
  await page.selectOption("#domain", path)
  if (!(await page.locator("details:has(#request-json)").evaluate((d) => (d as HTMLDetailsElement).open))) await page.click("text=The request as JSON")
  await page.fill("#request-json", JSON.stringify(body))
  await page.click("#use-json")
  await page.click("#ask-button")
  await page.waitForSelector("body[data-state=answered], body[data-state=problem]")
  return page.evaluate(() => document.body.dataset["state"])
}
