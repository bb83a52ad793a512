/** The service's version: the package's semver (docs/api.md, "Versioning"). */
import pkg from "../package.json" with { type: "json" }

/** Semver of this build, as reported by the catalog and the OpenAPI document. */
export const SERVICE_VERSION: string = pkg.version
