/**
 * The portal's address and its invite links, in a module of their own: the CLI's `accounts invite`
 * makes links too, and should not load the portal's routes (and the docs' Markdown) to do it.
 */

/** Where the account portal's page is served. */
export const PORTAL_PAGE_PATH = "/portal"

/** The longest grace a rolled token keeps working (a week). */
export const MAX_GRACE_SECONDS = 7 * 86_400

/** An invite link: the code in the fragment, which a browser never sends, so no server or proxy logs it. */
export const inviteLink = (origin: string, code: string): string => `${origin}${PORTAL_PAGE_PATH}#invite=${code}`
