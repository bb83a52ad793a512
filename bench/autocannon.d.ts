// Minimal types for the part of autocannon's API the benchmarks use (the package ships none).
declare module "autocannon" {
  interface Histogram {
    readonly average: number
    readonly mean: number
    readonly p50: number
    readonly p90: number
    readonly p99: number
    readonly max: number
  }
  interface Result {
    readonly requests: Histogram & { readonly total: number; readonly sent: number }
    readonly latency: Histogram
    readonly errors: number
    readonly timeouts: number
    readonly non2xx: number
    readonly duration: number
    readonly statusCodeStats: Record<string, { readonly count: number }>
  }
  interface Options {
    readonly url: string
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly body?: string
    readonly connections?: number
    readonly duration?: number
    readonly pipelining?: number
    /** Per-request overrides; setupRequest may change each request before it is sent. */
    readonly requests?: ReadonlyArray<{
      readonly method?: string
      readonly path?: string
      readonly body?: string
      readonly setupRequest?: (request: { body?: string; [key: string]: unknown }) => { body?: string; [key: string]: unknown }
    }>
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
