// The part of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number
    mean: number
    stddev: number
    min: number
    max: number
    total?: number
    p50: number
    p90: number
    p97_5: number
    p99: number
  }
  export interface Result {
    latency: Histogram
    requests: Histogram & { sent: number }
    throughput: Histogram
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    duration: number
  }
  export interface Options {
    url: string
    connections?: number
    duration?: number
    amount?: number
    pipelining?: number
    method?: string
    headers?: Record<string, string>
    body?: string
    /** At most this many requests a second across all connections. */
    overallRate?: number
    /** Requests in turn on each connection; setupRequest may rewrite one before it is sent. */
    requests?: { method?: string; path?: string; headers?: Record<string, string>; body?: string; setupRequest?: (req: { method?: string; path?: string; headers?: Record<string, string>; body?: string }) => { method?: string; path?: string; headers?: Record<string, string>; body?: string } }[]
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
