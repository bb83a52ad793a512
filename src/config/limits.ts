/**
 * The bounds of what the service is configured to hold, beside the configuration that checks
 * them (AppConfig, the CLI's flags); the generator and the writers take them from here.
 */

/** Largest population the id scheme and a 24 GiB machine comfortably hold. */
export const MAX_PATIENTS = 10_000_000
/** The population generated when HCC_POPULATION is not set (the documented examples are recorded on it). */
export const DEFAULT_POPULATION = 50_000
/** Seeds are 32-bit unsigned integers (the random streams mix them as such). */
export const MAX_SEED = 4_294_967_295

/** Patients per chunk of a generated dataset: one transaction each when written (a few hundred milliseconds). */
export const PATIENTS_PER_CHUNK = 2000
