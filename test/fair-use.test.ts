// Fair use (issue 13): per-credential limits on every authenticated surface, ingestion counted
// per batch in a bucket of its own, a per-address limit on failed authentication, the IETF
// draft RateLimit headers, and — on PostgreSQL — limits that hold across instances.
//
// Windows are fixed and aligned to the epoch; a day-long window keeps a test from straddling
// a boundary (which would reset the counts halfway).
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import type { RateLimits } from '../config.ts'
import { generateKey } from '../db/keys.ts'
import { REFUSAL_DELAY_MS, REFUSALS_BEFORE_DELAY } from '../plugins/fair-use.ts'
import { bearer, buildTestApp, fixedClock, seedWorkspace, testConfig, testDatabase } from './helpers/app.ts'

const DAY = 86_400_000
const limits: RateLimits = { max: 3, ingestMax: 2, windowMs: DAY, authFailures: 4, authFailureWindowMs: DAY, concurrency: 0 }

type Call = (app: FastifyInstance, key: string, project: string) => Promise<{ statusCode: number; body: string; headers: Record<string, unknown>; json(): any }>

const surfaces: { name: string; key: 'mcp' | 'service' | 'ingest'; call: Call }[] = [
  {
    name: 'project-side API',
    key: 'mcp',
    call: (app, key, project) => app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/overview`, headers: bearer(key) }),
  },
  {
    name: 'tools API',
    key: 'service',
    call: (app, key) => app.inject({ method: 'POST', url: '/v1/tools/list_projects', headers: bearer(key), payload: {} }),
  },
  {
    name: 'MCP',
    key: 'service',
    call: (app, key) =>
      app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { ...bearer(key), host: '127.0.0.1:3000', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_projects', arguments: {} } },
      }),
  },
  {
    name: 'ingestion',
    key: 'ingest',
    call: (app, key) =>
      app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload: { events: [{ event: 'signup', distinct_id: 'u1' }] } }),
  },
]

t.test('each surface: the limit per credential, with RateLimit headers, then a 429 in the error shape', async (t) => {
  const app = await buildTestApp(t, { config: { rateLimit: limits } })
  for (const surface of surfaces) {
    t.test(surface.name, async (t) => {
      const ws = await seedWorkspace(app)
      const other = await seedWorkspace(app)
      const max = surface.name === 'ingestion' ? limits.ingestMax : limits.max
      for (let i = 1; i <= max; i++) {
        const res = await surface.call(app, ws.keys[surface.key], ws.project.id)
        t.ok(res.statusCode < 400, `call ${i} of ${max} is served (${res.statusCode}: ${res.body.slice(0, 120)})`)
        t.equal(res.headers['ratelimit-limit'], String(max))
        t.equal(res.headers['ratelimit-remaining'], String(max - i))
        t.equal(res.headers['ratelimit-policy'], `${max};w=86400`)
        t.ok(Number(res.headers['ratelimit-reset']) > 0, 'RateLimit-Reset is in seconds from now')
      }
      const limited = await surface.call(app, ws.keys[surface.key], ws.project.id)
      t.equal(limited.statusCode, 429)
      t.equal(limited.json().error.code, 'rate_limited')
      t.match(limited.json().error.message, surface.name === 'ingestion' ? /at most 2 event batches every 86400 s/ : /at most 3 requests every 86400 s/)
      t.equal(limited.headers['ratelimit-remaining'], '0')
      t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After says when to come back')
      t.equal(limited.headers['cache-control'], 'no-store')
      const again = await surface.call(app, ws.keys[surface.key], ws.project.id)
      t.equal(again.statusCode, 429, 'it stays limited for the rest of the window')

      const neighbour = await surface.call(app, other.keys[surface.key], other.project.id)
      t.ok(neighbour.statusCode < 400, 'another workspace\'s key is not slowed by it')
    })
  }
})

t.test('ingestion counts per batch in a bucket of its own', async (t) => {
  const app = await buildTestApp(t, { config: { rateLimit: limits } })
  const ws = await seedWorkspace(app)
  const batch = (n: number) => ({ events: Array.from({ length: n }, (_, i) => ({ event: 'signup', distinct_id: `u${i}` })), project: ws.project.id })
  // A project-side key may ingest too: its batches do not use up its requests, nor the reverse.
  for (let i = 0; i < limits.ingestMax; i++) {
    const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.mcp), payload: batch(50) })
    t.equal(res.statusCode, 200, 'a batch of 50 events counts once')
  }
  t.equal((await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.mcp), payload: batch(1) })).statusCode, 429)
  const read = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/overview`, headers: bearer(ws.keys.mcp) })
  t.equal(read.statusCode, 200, 'the same key still reads')
  t.equal(read.headers['ratelimit-remaining'], String(limits.max - 1))
})

t.test('failed authentication: a lower limit per address on failures; valid credentials from it still work', async (t) => {
  const app = await buildTestApp(t, { config: { rateLimit: limits } })
  const ws = await seedWorkspace(app)
  let lookups = 0
  const findActive = app.repos.apiKeys.findActive.bind(app.repos.apiKeys)
  app.repos.apiKeys.findActive = (...args: Parameters<typeof findActive>) => {
    lookups++
    return findActive(...args)
  }
  const missing = await Promise.all(Array.from({ length: limits.authFailures + 2 }, () => app.inject({ method: 'GET', url: '/v1/projects' })))
  t.same(missing.map((r) => r.statusCode), missing.map(() => 401), 'a request without credentials is a challenge, not a failure')

  const basic = await app.inject({ method: 'GET', url: '/v1/projects', headers: { authorization: 'Basic YTpi' } })
  t.equal(basic.statusCode, 401, 'another scheme is a challenge too')

  // Malformed, mistyped, unknown, and a real key of a kind this surface does not take.
  const wrong = ['gds_notakey', `gds_${'A'.repeat(40)}`, `gdm_${'b'.repeat(30)}`, ws.keys.ingest]
  for (const [i, key] of wrong.entries()) {
    const res = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(key) })
    t.equal(res.statusCode, 401, `failure ${i + 1} is a 401`)
  }
  // The address is over its limit: another guess is refused, whether it is well formed or not.
  const guess = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(generateKey('service')) })
  t.equal(guess.statusCode, 429, 'a well-formed unknown key is looked up and refused with a 429')
  t.match(guess.json().error, { code: 'rate_limited', message: /Too many failed authentications from this address/ })
  t.ok(Number(guess.headers['retry-after']) > 0)
  t.notOk(guess.headers['www-authenticate'], 'a 429, not a challenge')
  for (const key of wrong) {
    const before = lookups
    const res = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(key) })
    t.equal(res.statusCode, 429, `${key.slice(0, 8)}…: still refused`)
    t.equal(lookups, before, 'a malformed or mistyped key, or one of a kind this surface does not take, is refused without a lookup')
  }

  // Someone else behind the same address (one NAT for a whole office) is not refused for those failures.
  for (let i = 0; i < 3; i++) {
    const good = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })
    t.equal(good.statusCode, 200, `a valid key from the same address is served (${i + 1})`)
  }
  const other = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events: [{ event: 'signup', distinct_id: 'u1' }] } })
  t.equal(other.statusCode, 200, 'and so is another valid key, on another surface')

  const elsewhere = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(generateKey('service')), remoteAddress: '203.0.113.9' })
  t.equal(elsewhere.statusCode, 401, 'another address is not affected: its failure is a 401')
})

t.test('without limits configured, nothing is counted and no header is sent', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  for (let i = 0; i < 5; i++) {
    const res = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })
    t.equal(res.statusCode, 200)
    t.notOk(res.headers['ratelimit-limit'])
  }
})

t.test('two instances on one PostgreSQL share the counts', { skip: process.env.DATABASE_URL ? false : 'the embedded database has one instance' }, async (t) => {
  const database = await testDatabase(t)
  const build = async () => {
    const app = await buildApp({ config: testConfig(database, { rateLimit: { ...limits, max: 5 } }), logger: false })
    t.teardown(() => app.close())
    await app.ready()
    return app
  }
  const a = await build()
  const b = await build()
  const ws = await seedWorkspace(a)
  const call = (app: FastifyInstance) => app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })

  for (let i = 0; i < 3; i++) t.equal((await call(a)).statusCode, 200, `instance A, call ${i + 1}`)
  await a.fairUse.counters.flush()
  const first = await call(b)
  t.equal(first.statusCode, 200)
  t.equal(first.headers['ratelimit-remaining'], '1', 'instance B learns what A counted before it answers its first call')
  t.equal((await call(b)).statusCode, 200, 'the fifth call, on B')
  await b.fairUse.counters.flush()
  t.equal((await call(b)).statusCode, 429, 'the sixth, on B')
  // A learns totals when it syncs what it counted itself (every 100 ms under load): until then
  // it decides on its own view — the documented slack of one sync interval.
  const stale = await call(a)
  t.equal(stale.statusCode, 200, 'A still decides on its own view (3 + 1) until its next sync')
  await a.fairUse.counters.flush()
  t.equal((await call(a)).statusCode, 429, 'after the sync A knows the total and refuses')

  // Failed authentication is counted across instances too: B sees every failure, A's first
  // failure from that address syncs and learns them.
  const from = { remoteAddress: '198.51.100.7' }
  for (let i = 0; i < limits.authFailures; i++) {
    t.equal((await b.inject({ method: 'GET', url: '/v1/projects', headers: bearer('gds_unknown'), ...from })).statusCode, 401)
  }
  await b.fairUse.counters.flush()
  t.equal((await a.inject({ method: 'GET', url: '/v1/projects', headers: bearer('gds_unknown'), ...from })).statusCode, 401)
  const blocked = await a.inject({ method: 'GET', url: '/v1/projects', headers: bearer(generateKey('service')), ...from })
  t.equal(blocked.statusCode, 429, 'A now refuses the address\'s next failure with a 429')
  const other = await seedWorkspace(a)
  t.equal((await a.inject({ method: 'GET', url: '/v1/projects', headers: bearer(other.keys.service), ...from })).statusCode, 200, 'but serves a valid key from it')

  const rows = await a.repos.rateLimits.add([])
  t.same(rows, [], 'an empty batch sends no statement')
})

t.test("windows follow the app's clock: a pinned clock keeps one window, moving it past the end opens the next", async (t) => {
  const now = fixedClock('2025-06-10T12:00:03.000Z')
  const app = await buildTestApp(t, { now, config: { rateLimit: { ...limits, max: 2, windowMs: 10_000 } } })
  const ws = await seedWorkspace(app)
  const list = () => app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })
  t.equal((await list()).statusCode, 200)
  t.equal((await list()).headers['ratelimit-reset'], '7', 'the window (aligned to the epoch) ends 7 s after 12:00:03')
  const refused = await list()
  t.equal(refused.statusCode, 429)
  t.equal(refused.headers['retry-after'], '7')
  now.set('2025-06-10T12:00:09.999Z')
  t.equal((await list()).statusCode, 429, 'still the same window a millisecond before its end')
  now.set('2025-06-10T12:00:10.000Z')
  const next = await list()
  t.equal(next.statusCode, 200, 'the next window starts at 12:00:10')
  t.equal(next.headers['ratelimit-remaining'], '1')
  t.equal(next.headers['ratelimit-reset'], '10')
})

t.test('concurrency: a credential holds at most N requests in progress on an instance', async (t) => {
  const app = await buildTestApp(t, { config: { rateLimit: { ...limits, max: 100, concurrency: 1 } } })
  let started!: () => void
  const running = new Promise<void>((resolve) => { started = resolve })
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  // A slow authenticated route, to hold a slot for as long as the test wants.
  app.get('/test/slow', { onRequest: app.authenticate('tools-api') }, async () => {
    started()
    await gate
    return { ok: true }
  })
  const ws = await seedWorkspace(app)
  const slow = app.inject({ method: 'GET', url: '/test/slow', headers: bearer(ws.keys.service) })
  await running
  const refused = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })
  t.equal(refused.statusCode, 429)
  t.match(refused.json().error.message, /at most 1 at a time/)
  t.equal(refused.headers['retry-after'], '1')
  const other = await seedWorkspace(app)
  t.equal((await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(other.keys.service) })).statusCode, 200, 'another credential has slots of its own')
  release()
  t.equal((await slow).statusCode, 200)
  const after = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })
  t.equal(after.statusCode, 200, 'the slot is free again once the response ends')
  t.equal(after.headers['ratelimit-remaining'], '98', 'the refused request did not count against the rate')
})

t.test('a sweep never deletes a window still under way: the cut-off is the retention plus the longest window', async (t) => {
  const { SharedCounters } = await import('../core/fair-use.ts')
  const NOW = Date.parse('2025-06-10T12:00:00Z')
  const cutoffs: number[] = []
  const backend = {
    add: async (rows: { key: string; windowStart: number; hits: number }[]) => rows,
    purgeBefore: async (windowStart: number) => {
      cutoffs.push(windowStart)
      return 0
    },
  }
  // A new instance sweeps at its first tick, before it has counted anything: the configured
  // longest window must already hold (it once deleted a day-long window that had started at midnight).
  const counters = new SharedCounters(backend, { syncMs: 5, retainMs: 60_000, longestWindowMs: DAY, now: () => NOW })
  counters.start()
  while (cutoffs.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  await counters.close()
  t.equal(cutoffs[0], NOW - 60_000 - DAY, 'the cut-off is a day and a minute before now')

  // A window longer than configured, once counted in, extends it.
  const seen: number[] = []
  const other = new SharedCounters({
    ...backend,
    purgeBefore: async (w: number) => {
      seen.push(w)
      return 0
    },
  }, { syncMs: 5, retainMs: 1000, now: () => NOW })
  await other.hit('k', 7 * DAY)
  other.start()
  while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  await other.close()
  t.equal(seen[0], NOW - 1000 - 7 * DAY, 'a week-long window counted here is kept a week and the retention')
})

t.test('a credential that keeps sending after its refusals gets them late, unchanged; its neighbour is answered meanwhile', async (t) => {
  const app = await buildTestApp(t, { config: { rateLimit: limits } })
  const waits: number[] = []
  let open!: () => void
  const gate = new Promise<void>((resolve) => { open = resolve })
  app.fairUse.sleep = (ms) => {
    waits.push(ms)
    return gate
  }
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const read = (key: string, project: string) => app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/overview`, headers: bearer(key) })
  for (let i = 0; i < limits.max; i++) t.equal((await read(ws.keys.mcp, ws.project.id)).statusCode, 200)
  for (let i = 1; i <= REFUSALS_BEFORE_DELAY; i++) {
    t.equal((await read(ws.keys.mcp, ws.project.id)).statusCode, 429, `refusal ${i} is answered at once`)
  }
  t.same(waits, [], 'none of them waited')
  let answered = false
  const late = read(ws.keys.mcp, ws.project.id).then((res) => {
    answered = true
    return res
  })
  const neighbour = await read(other.keys.mcp, other.project.id)
  t.equal(neighbour.statusCode, 200, 'the neighbour is served')
  t.same(waits, [REFUSAL_DELAY_MS], `the next refusal waits ${REFUSAL_DELAY_MS} ms (the window is a day)`)
  t.equal(answered, false, 'and is not answered before its wait ends')
  open()
  const res = await late
  t.equal(res.statusCode, 429)
  t.equal(res.json().error.code, 'rate_limited')
  t.match(res.json().error.message, /at most 3 requests every 86400 s/)
  t.ok(Number(res.headers['retry-after']) > 0, 'Retry-After as ever')
})
