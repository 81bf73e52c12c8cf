// The part of autocannon's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface Request {
    method?: string
    path?: string
    headers?: Record<string, string>
    body?: string
    setupRequest?: (request: Request & { headers: Record<string, string> }) => Request
  }
  interface Options {
    url: string
    connections?: number
    duration?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    requests?: Request[]
  }
  interface Histogram {
    p50: number
    p99: number
    average: number
  }
  interface Result {
    requests: Histogram & { total: number }
    latency: Histogram
    non2xx: number
    errors: number
    timeouts: number
    duration: number
    statusCodeStats: Record<string, { count: number }>
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
