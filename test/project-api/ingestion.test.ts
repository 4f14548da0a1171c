// POST /v1/events: keys and project selection, accepted/duplicates, idempotency by uuid,
// all-or-nothing batches, the 1000-event bound and timestamp rules.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { addProject, bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { dailyEventCounts, projectEventStats } from '../../db/schema.ts'
import { eq } from '../../db/orm.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`
const NOW = '2026-11-20T12:00:00.000Z'

interface Ev {
  event: string
  distinct_id: string
  timestamp?: string
  uuid?: string
  properties?: Record<string, unknown>
}

t.test('event ingestion', async (t) => {
  const clock = fixedClock(NOW)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id

  const post = (events: unknown, headers: Record<string, string> = bearer(ws.keys.ingest), extra: Record<string, unknown> = {}) =>
    app.inject({ method: 'POST', url: '/v1/events', headers, payload: { ...extra, events } })
  /** Today's record of daily-ops and today's event summary: the observable state. */
  const state = async () => {
    const ops = await app.inject({ method: 'GET', url: `${base(project)}/daily-ops`, headers: bearer(ws.keys.mcp) })
    const summary = await app.inject({ method: 'GET', url: `${base(project)}/daily-event-summary`, headers: bearer(ws.keys.mcp) })
    return { ops: ops.json().days, summary: summary.json().days, totals: summary.json().totals }
  }
  const today = async () => (await state()).ops.at(-1)
  const ev = (event: string, user: string, extra: Partial<Ev> = {}): Ev => ({ event, distinct_id: user, timestamp: '2026-11-20T09:00:00Z', uuid: randomUUID(), ...extra })

  t.test('an ingest key writes into its project', async (t) => {
    const res = await post([ev('signup', 'ann'), ev('signup', 'bob'), ev('daily_use', 'ann')])
    t.equal(res.statusCode, 200)
    t.same(res.json(), { accepted: 3, duplicates: 0 })
    t.same(await today(), { date: '2026-11-20', registered_users: 2, daily_use_users: 1, active_users: 1, signup_events: 2, daily_use_events: 1 })
  })

  t.test('an mcp key needs the project, in the body or the header', async (t) => {
    let res = await post([ev('signup', 'cat')], bearer(ws.keys.mcp), { project })
    t.same([res.statusCode, res.json()], [200, { accepted: 1, duplicates: 0 }])
    res = await post([ev('signup', 'dan')], { ...bearer(ws.keys.mcp), 'x-service-project': ws.project.slug })
    t.same([res.statusCode, res.json()], [200, { accepted: 1, duplicates: 0 }])
    res = await post([ev('signup', 'eve')], bearer(ws.keys.mcp))
    t.equal(res.statusCode, 400)
    t.equal(res.json().error.code, 'invalid_arguments')
    t.same(res.json().error.details.map((d: { path: string }) => d.path), ['project'])
    t.match(res.json().error.message, /^This call needs a project/, 'no internal operation name in the message')
    res = await post([ev('signup', 'eve')], bearer(ws.keys.service), { project: 'prj_doesnotexist' })
    t.equal(res.statusCode, 404)
    t.equal(res.json().error.code, 'not_found')
    res = await post([ev('signup', 'eve')], {})
    t.equal(res.statusCode, 401)
    t.equal((await today()).signup_events, 4)
    t.equal((await today()).registered_users, 4)
  })

  t.test('idempotency by uuid: a resent batch is all duplicates and changes nothing', async (t) => {
    const batch = [ev('signup', 'fay'), ev('daily_use', 'fay'), ev('daily_use', 'fay', { timestamp: '2026-11-19T09:00:00Z' }), ev('page_view', 'gus')]
    let res = await post(batch)
    t.same(res.json(), { accepted: 4, duplicates: 0 })
    const after = await state()
    res = await post(batch)
    t.equal(res.statusCode, 200)
    t.same(res.json(), { accepted: 0, duplicates: 4 })
    // The same uuids through another credential are the same events.
    res = await post(batch, bearer(ws.keys.mcp), { project })
    t.same(res.json(), { accepted: 0, duplicates: 4 })
    // Upper-case spelling of a uuid is the same uuid.
    res = await post([{ ...batch[0]!, uuid: batch[0]!.uuid!.toUpperCase() }])
    t.same(res.json(), { accepted: 0, duplicates: 1 })
    t.same(await state(), after)
    // Half old, half new.
    res = await post([...batch.slice(0, 2), ev('signup', 'hal'), ev('signup', 'fay')])
    t.same(res.json(), { accepted: 2, duplicates: 2 })
    const now = await today()
    t.equal(now.signup_events, after.ops.at(-1).signup_events + 2)
    t.equal(now.registered_users, after.ops.at(-1).registered_users + 1, 'fay signed up before: only hal is new')
  })

  t.test('the same uuid twice in one batch counts once', async (t) => {
    const before = await today()
    const uuid = randomUUID()
    const res = await post([ev('signup', 'ida', { uuid }), ev('signup', 'ida', { uuid })])
    t.equal(res.statusCode, 200)
    t.same(res.json(), { accepted: 1, duplicates: 1 })
    const now = await today()
    t.equal(now.signup_events, before.signup_events + 1)
    t.equal(now.registered_users, before.registered_users + 1)
  })

  // The unique key holds the day, the partition key of events (docs/design.md, "Events
  // partitioned by day ranges"): a uuid is one event per day of the project's zone.
  t.test('a uuid is one event per day: re-stamped or unstamped within the day, a resend is a duplicate; on another day it counts again', async (t) => {
    const uuid = randomUUID()
    t.same((await post([ev('invite_sent', 'kim', { uuid, timestamp: '2026-11-20T08:00:00Z' })])).json(), { accepted: 1, duplicates: 0 })
    const before = await state()
    // A client that re-stamps on retry within the day, or sends it without a timestamp (stamped now, the same day).
    for (const timestamp of ['2026-11-20T10:30:00Z', undefined]) {
      const res = await post([{ event: 'invite_sent', distinct_id: 'kim', uuid, ...(timestamp ? { timestamp } : {}) }])
      t.same(res.json(), { accepted: 0, duplicates: 1 }, `resent with timestamp ${timestamp}`)
    }
    t.same(await state(), before, 'nothing counted twice')
    // Re-stamped onto another day: another event (the documented trade).
    t.same((await post([ev('invite_sent', 'kim', { uuid, timestamp: '2026-11-18T08:00:00Z' })])).json(), { accepted: 1, duplicates: 0 }, 'the same uuid on another day is another event')
    // Unstamped: stamped on receipt just before midnight, resent later that second day and after midnight.
    const unstamped = { event: 'invite_sent', distinct_id: 'lea', uuid: randomUUID() }
    t.teardown(() => clock.set(NOW))
    clock.set('2026-11-20T23:59:59.000Z')
    t.same((await post([unstamped])).json(), { accepted: 1, duplicates: 0 })
    clock.set('2026-11-20T23:59:59.900Z')
    t.same((await post([unstamped])).json(), { accepted: 0, duplicates: 1 }, 'resent before midnight: a duplicate')
    clock.set('2026-11-21T00:00:00.500Z')
    t.same((await post([unstamped])).json(), { accepted: 1, duplicates: 0 }, 'resent after the project\'s midnight without a timestamp: counted again (documented)')
    clock.set(NOW)
    // Two copies of one uuid in a batch: one event on one day, two on two days.
    const twin = randomUUID()
    t.same((await post([ev('invite_sent', 'max', { uuid: twin }), ev('invite_sent', 'max', { uuid: twin })])).json(), { accepted: 1, duplicates: 1 })
    const apart = randomUUID()
    t.same((await post([ev('invite_sent', 'max', { uuid: apart }), ev('invite_sent', 'max', { uuid: apart, timestamp: '2026-11-17T08:00:00Z' })])).json(), { accepted: 2, duplicates: 0 })
  })

  t.test('counters written by several connections (shards) are summed by every reader', async (t) => {
    const other = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Sharded', slug: 'sharded' })
    const send = (events: Ev[]) => post(events, bearer(ws.keys.mcp), { project: other.id })
    t.same((await send([ev('signup', 'a1'), ev('daily_use', 'a1'), ev('daily_use', 'a2')])).json(), { accepted: 3, duplicates: 0 })
    // What another connection's batch leaves: rows of its own shard (never the one this batch
    // used: on PostgreSQL that is this connection's backend pid mod 16, whatever it happens to be).
    const used = new Set((await app.db.select({ shard: dailyEventCounts.shard }).from(dailyEventCounts).where(eq(dailyEventCounts.projectId, other.id))).map((r) => r.shard))
    const [s1, s2] = [...Array(16).keys()].filter((shard) => !used.has(shard)) as [number, number]
    await app.db.insert(dailyEventCounts).values([
      { projectId: other.id, day: '2026-11-20', event: 'daily_use', shard: s1, events: 5, uniqueUsers: 2 },
      { projectId: other.id, day: '2026-11-20', event: 'signup', shard: s2, events: 1, uniqueUsers: 1 },
    ])
    await app.db.insert(projectEventStats).values({ projectId: other.id, shard: s1, lastEventAt: new Date('2026-11-20T11:00:00Z'), events: 6 })
    const get = async (path: string) => (await app.inject({ method: 'GET', url: `${base(other.id)}/${path}`, headers: bearer(ws.keys.mcp) })).json()
    t.same((await get('daily-ops')).days.at(-1), { date: '2026-11-20', registered_users: 2, daily_use_users: 4, active_users: 4, signup_events: 2, daily_use_events: 7 })
    t.same((await get('daily-event-summary')).days.at(-1).events, [{ event: 'daily_use', count: 7, unique_users: 4 }, { event: 'signup', count: 2, unique_users: 2 }])
    t.equal((await get('overview')).last_event_at, '2026-11-20T11:00:00.000Z', 'the latest of the shards')
  })

  t.test('events without uuid are each new', async (t) => {
    const before = await today()
    const e = { event: 'signup', distinct_id: 'jon', timestamp: '2026-11-20T09:00:00Z' }
    t.same((await post([e, e])).json(), { accepted: 2, duplicates: 0 })
    t.same((await post([e])).json(), { accepted: 1, duplicates: 0 })
    const now = await today()
    t.equal(now.signup_events, before.signup_events + 3)
    t.equal(now.registered_users, before.registered_users + 1)
  })

  t.test('a batch with one bad event is refused whole', async (t) => {
    const before = await state()
    const good = () => Array.from({ length: 10 }, (_, i) => ev(i % 2 ? 'signup' : 'daily_use', `batch-user-${i}`))
    const mutations: [string, (e: Ev) => unknown, string][] = [
      ['missing distinct_id', ({ distinct_id: _d, ...rest }) => rest, 'events[7].distinct_id'],
      ['empty event name', (e) => ({ ...e, event: '' }), 'events[7].event'],
      ['bad uuid', (e) => ({ ...e, uuid: 'not-a-uuid' }), 'events[7].uuid'],
      ['unknown field', (e) => ({ ...e, user: 'x' }), 'events[7].user'],
      ['timestamp is not a date', (e) => ({ ...e, timestamp: 'yesterday' }), 'events[7].timestamp'],
      ['timestamp without offset', (e) => ({ ...e, timestamp: '2026-11-20T09:00:00' }), 'events[7].timestamp'],
      ['date only', (e) => ({ ...e, timestamp: '2026-11-20' }), 'events[7].timestamp'],
      ['far future', (e) => ({ ...e, timestamp: '2026-11-21T12:00:00.001Z' }), 'events[7].timestamp'],
      ['year 0000 (valid RFC 3339, not storable)', (e) => ({ ...e, timestamp: '0000-01-01T00:00:00Z' }), 'events[7].timestamp'],
      ['leap second', (e) => ({ ...e, timestamp: '2026-11-19T23:59:60Z' }), 'events[7].timestamp'],
      ['hour 24', (e) => ({ ...e, timestamp: '2026-11-19T24:00:00Z' }), 'events[7].timestamp'],
      ['far future with offset', (e) => ({ ...e, timestamp: '2026-11-21T14:00:01+02:00' }), 'events[7].timestamp'],
      ['properties not an object', (e) => ({ ...e, properties: [1, 2] }), 'events[7].properties'],
      ['distinct_id too long', (e) => ({ ...e, distinct_id: 'd'.repeat(201) }), 'events[7].distinct_id'],
    ]
    for (const [name, mutate, path] of mutations) {
      const batch: unknown[] = good()
      batch[7] = mutate(batch[7] as Ev)
      const res = await post(batch)
      t.equal(res.statusCode, 400, name)
      t.equal(res.json().error.code, 'invalid_arguments', name)
      t.same([...new Set(res.json().error.details.map((d: { path: string }) => d.path))], [path], name)
    }
    t.same(await state(), before, 'nothing of any refused batch was stored')
    // The same good events, alone, are accepted: they were not stored by the refused batches.
    const batch = good()
    t.same((await post(batch)).json(), { accepted: 10, duplicates: 0 })
  })

  t.test('timestamps: at most 24 h ahead, any offset, default now', async (t) => {
    const before = await state()
    let res = await post([ev('edge', 'kim', { timestamp: '2026-11-21T12:00:00.000Z' })]) // exactly 24 h ahead
    t.same([res.statusCode, res.json()], [200, { accepted: 1, duplicates: 0 }])
    res = await post([ev('edge', 'kim', { timestamp: '2026-11-21T12:00:00.001Z' })])
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details, [{ path: 'events[0].timestamp', message: 'is more than 24 hours in the future' }])
    res = await post([ev('edge', 'kim', { timestamp: '2026-11-20T13:00:00+01:00' })]) // = 12:00Z today
    t.equal(res.statusCode, 200)
    res = await post([{ event: 'edge', distinct_id: 'kim' }]) // no timestamp: now
    t.equal(res.statusCode, 200)
    const summary = (await state()).summary
    t.same(summary.at(-1).events.find((e: { event: string }) => e.event === 'edge'), { event: 'edge', count: 2, unique_users: 1 })
    t.same(before.summary.at(-1).events.find((e: { event: string }) => e.event === 'edge'), undefined)
    // The stream shows the exact instants stored.
    const mine = await app.inject({ method: 'GET', url: `${base(project)}/event-stream?limit=100`, headers: bearer(ws.keys.mcp) })
    t.equal(mine.statusCode, 200)
  })

  t.test('batch size: empty refused, 1000 accepted, 1001 refused', async (t) => {
    let res = await post([])
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details.map((d: { path: string }) => d.path), ['events'])
    res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: {} })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details.map((d: { path: string }) => d.path), ['events'])
    const before = await today()
    const big = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ event: 'daily_use', distinct_id: `${tag}-${i % 250}`, timestamp: '2026-11-20T10:00:00Z', uuid: randomUUID() }))
    res = await post(big(1001, 'over'))
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details.map((d: { path: string }) => d.path), ['events'])
    t.same(await today(), before)
    res = await post(big(1000, 'bulk'))
    t.equal(res.statusCode, 200)
    t.same(res.json(), { accepted: 1000, duplicates: 0 })
    const now = await today()
    t.equal(now.daily_use_events, before.daily_use_events + 1000)
    t.equal(now.daily_use_users, before.daily_use_users + 250)
  })

  t.test('concurrent batches keep unique counts exact', async (t) => {
    const before = await today()
    const users = ['p1', 'p2', 'p3', 'p4', 'p5']
    // 10 batches at once, each with every user signing up: 50 events, 5 users.
    const results = await Promise.all(Array.from({ length: 10 }, () => post(users.map((u) => ev('signup', `conc-${u}`)))))
    t.same(results.map((r) => r.statusCode), Array(10).fill(200))
    t.same(results.map((r) => r.json().accepted), Array(10).fill(5))
    const now = await today()
    t.equal(now.signup_events, before.signup_events + 50)
    t.equal(now.registered_users, before.registered_users + 5)
    // The same batch (same uuids) sent 5 times at once is stored once.
    const batch = users.map((u) => ev('daily_use', `conc-${u}`))
    const again = await Promise.all(Array.from({ length: 5 }, () => post(batch)))
    t.same(again.map((r) => r.statusCode), Array(5).fill(200))
    t.equal(again.reduce((n, r) => n + r.json().accepted, 0), 5)
    t.equal(again.reduce((n, r) => n + r.json().duplicates, 0), 20)
    const later = await today()
    t.equal(later.daily_use_events, now.daily_use_events + 5)
    t.equal(later.daily_use_users, now.daily_use_users + 5)
  })

  t.test('NUL characters are refused with a 400, not a 500', async (t) => {
    // PostgreSQL rejects \u0000 in text and jsonb: the registry refuses it for every surface.
    const before = await state()
    for (const [name, e, path] of [
      ['event name', ev('nul\u0000name', 'x'), 'events[0].event'],
      ['distinct_id', ev('signup', 'x\u0000y'), 'events[0].distinct_id'],
      ['property value', ev('signup', 'x', { properties: { k: 'v\u0000' } }), 'events[0].properties.k'],
    ] as const) {
      const res = await post([e])
      t.not(res.statusCode, 200, `${name}: not stored`)
      t.equal(res.statusCode, 400, name)
      t.equal(res.json().error.details?.[0]?.path, path, name)
    }
    t.same(await state(), before, 'nothing stored')
  })

  t.test('properties are stored as sent', async (t) => {
    const me = ws.user.email
    const properties = { plan: 'pro', seats: 3, nested: { ok: true }, list: [1, 'two'], text: 'naïve 😀' }
    const uuid = randomUUID()
    t.same((await post([ev('checkout', me, { uuid, properties, timestamp: '2026-11-20T11:00:00.000Z' })])).json(), { accepted: 1, duplicates: 0 })
    const stream = (await app.inject({ method: 'GET', url: `${base(project)}/event-stream?limit=1`, headers: bearer(ws.keys.mcp) })).json()
    t.same(stream.items[0], { uuid, event: 'checkout', distinct_id: me, timestamp: '2026-11-20T11:00:00.000Z', received_at: NOW, properties })
  })
  t.end()
})
