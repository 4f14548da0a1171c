// The load-generating side of the benches, forked by bench/client-process.ts into a process of
// its own so that the server's event loop does only server work. It answers one task per message.
import fs from 'node:fs'
import http from 'node:http'
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import autocannon, { type Options as AutocannonOptions } from 'autocannon'

export type ClientTask =
  | { kind: 'latency'; url: string; headers: Record<string, string>; warmup: number; requests: number; /** pause between requests */ intervalMs?: number }
  | CannonTask
  | {
    kind: 'ingest'
    url: string
    key: string
    clients: number
    batchSize: number
    maxBatches: number
    seconds: number
    users: number
    /** Timestamps fall in the last `spreadHours` hours before the task starts. */
    spreadHours: number
    /** Post these bodies (a file of JSON lines, one request body each) instead of generating them. */
    bodiesFile?: string
  }

/** `connections` connections sending requests for `seconds` seconds, under autocannon. */
export interface CannonTask {
  kind: 'autocannon'
  url: string
  /** GET unless told. */
  method?: 'GET' | 'POST'
  headers: Record<string, string>
  /** The same body for every request. */
  body?: string
  /**
   * Or a JSON body built per request, so that the requests do not all touch the same rows: the
   * `fixed` fields, then each `random` field one of its values at random, then each `cycle`
   * field its values in turn.
   */
  bodies?: { fixed: Record<string, unknown>; random: Record<string, readonly unknown[]>; cycle: Record<string, readonly unknown[]> }
  connections: number
  seconds: number
  /** At most this many requests a second across all connections (autocannon's overallRate); default: as fast as answered. */
  rate?: number
}

export interface CannonResult {
  requestsPerSecond: number
  total: number
  /** Responses with a 2xx status. */
  ok: number
  p50: number
  p90: number
  p99: number
  max: number
  errors: number
  timeouts: number
  non2xx: number
}

export interface LatencyResult {
  samples: number[]
  lastBody: string
}

export interface IngestResult {
  batches: number
  accepted: number
  duplicates: number
  elapsedMs: number
  latencies: number[]
  failures: string[]
}

export type ClientReply<T = unknown> = { ok: true; result: T } | { ok: false; error: string }

interface Response {
  status: number
  body: string
}

function send(agent: http.Agent, url: URL, method: string, headers: Record<string, string>, body?: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (c: Buffer) => chunks.push(c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
        res.on('error', reject)
      }
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** Sequential requests on one kept-alive connection; the time of each after the warm-up. */
async function latency(task: Extract<ClientTask, { kind: 'latency' }>): Promise<LatencyResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const url = new URL(task.url)
  const samples: number[] = []
  let lastBody = ''
  try {
    for (let i = 0; i < task.warmup + task.requests; i++) {
      const started = performance.now()
      const res = await send(agent, url, 'GET', task.headers)
      const ms = performance.now() - started
      if (res.status !== 200) throw new Error(`GET ${url.pathname}${url.search} answered ${res.status}: ${res.body.slice(0, 500)}`)
      if (i >= task.warmup) samples.push(ms)
      lastBody = res.body
      if (task.intervalMs) await new Promise((resolve) => setTimeout(resolve, task.intervalMs))
    }
  } finally {
    agent.destroy()
  }
  return { samples, lastBody }
}

async function cannon(task: CannonTask): Promise<CannonResult> {
  const options: AutocannonOptions = { url: task.url, method: task.method ?? 'GET', headers: task.headers, body: task.body, connections: task.connections, duration: task.seconds }
  if (task.rate !== undefined) options.overallRate = task.rate
  if (task.bodies) {
    const { fixed, random, cycle } = task.bodies
    let n = 0
    options.requests = [{
      setupRequest: (req) => {
        const body: Record<string, unknown> = { ...fixed }
        for (const [field, values] of Object.entries(random)) body[field] = values[Math.floor(Math.random() * values.length)]
        for (const [field, values] of Object.entries(cycle)) body[field] = values[n % values.length]
        n++
        return { ...req, body: JSON.stringify(body) }
      },
    }]
  }
  const r = await autocannon(options)
  return {
    requestsPerSecond: r.requests.average,
    total: r.requests.total ?? 0,
    ok: r['2xx'],
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    errors: r.errors,
    timeouts: r.timeouts,
    non2xx: r.non2xx,
  }
}

/** A deterministic-enough skew: low user numbers are the heavy users, as in the bulk load. */
function pickUser(users: number): string {
  return `user_${Math.floor(users * Math.random() ** 2)}`
}

function pickEvent(): { event: string; properties?: Record<string, unknown> } {
  const r = Math.random()
  if (r < 0.9) return { event: 'daily_use' }
  if (r < 0.965) return { event: 'page_view', properties: { path: `/docs/${Math.floor(Math.random() * 40)}` } }
  if (r < 0.99) return { event: 'invite_sent' }
  return { event: 'purchase', properties: { amount_cents: 500 + Math.floor(Math.random() * 50) * 100, currency: 'USD' } }
}

/** Batches of new events posted by `clients` concurrent clients until the batches or the time run out. */
async function ingest(task: Extract<ClientTask, { kind: 'ingest' }>): Promise<IngestResult> {
  const now = Date.now()
  const spread = task.spreadHours * 3600_000
  // Built before the clock starts: the measurement is of the server, not of JSON building here.
  const bodies: string[] = task.bodiesFile ? fs.readFileSync(task.bodiesFile, 'utf8').split('\n').filter(Boolean) : []
  for (let b = bodies.length; b < task.maxBatches; b++) {
    const events = []
    for (let i = 0; i < task.batchSize; i++) {
      events.push({ uuid: randomUUID(), distinct_id: pickUser(task.users), timestamp: new Date(now - Math.floor(Math.random() * spread)).toISOString(), ...pickEvent() })
    }
    bodies.push(JSON.stringify({ events }))
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: task.clients })
  const url = new URL(task.url)
  const headers = { authorization: `Bearer ${task.key}` }
  const result: IngestResult = { batches: 0, accepted: 0, duplicates: 0, elapsedMs: 0, latencies: [], failures: [] }
  let next = 0
  const started = performance.now()
  const deadline = started + task.seconds * 1000
  async function worker() {
    while (next < bodies.length && performance.now() < deadline) {
      const body = bodies[next++]!
      const t0 = performance.now()
      const res = await send(agent, url, 'POST', headers, body)
      result.latencies.push(performance.now() - t0)
      if (res.status !== 200) {
        result.failures.push(`${res.status}: ${res.body.slice(0, 300)}`)
        continue
      }
      const parsed = JSON.parse(res.body) as { accepted: number; duplicates: number }
      result.batches++
      result.accepted += parsed.accepted
      result.duplicates += parsed.duplicates
    }
  }
  try {
    await Promise.all(Array.from({ length: task.clients }, worker))
  } finally {
    result.elapsedMs = performance.now() - started
    agent.destroy()
  }
  return result
}

async function run(task: ClientTask): Promise<unknown> {
  switch (task.kind) {
    case 'latency':
      return latency(task)
    case 'autocannon':
      return cannon(task)
    case 'ingest':
      return ingest(task)
  }
}

process.on('message', (task: ClientTask) => {
  run(task).then(
    (result) => process.send!({ ok: true, result } satisfies ClientReply),
    (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies ClientReply)
  )
})
process.on('disconnect', () => process.exit(0))
