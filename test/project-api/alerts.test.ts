// Alerts end to end: "daily users below N" fires within seconds of the ingestion that finds it
// below and reaches a subscribed receiver, then resolves when the numbers recover; a threshold
// above on registrations; the review queue after submissions and reviews, and its oldest age as
// the clock moves; the day close in the project's zone on a pinned clock; one firing however
// many evaluations run at once; validation that changes nothing; REST, /v1/tools and MCP alike.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { addMember, bearer, buildTestApp, expectStatus, fixedClock, ingestEvents, seedWorkspace, testDatabase } from '../helpers/app.ts'
import { privateOk, receiver, subscribe } from '../helpers/webhooks.ts'
import { MAX_ALERTS_PER_PROJECT } from '../../core/alerts.ts'
import { addDays } from '../../core/time.ts'

const clock = fixedClock('2026-03-18T15:00:00.000Z') // a Wednesday
const database = await testDatabase(t)
const app: FastifyInstance = await buildTestApp(t, { database, now: clock, config: privateOk })
const ws = await seedWorkspace(app)
const viewer = await addMember(app, ws.project.id, 'viewer')
const base = `/api/v1/mcp/projects/${ws.project.id}`
const json = { ...bearer(ws.keys.mcp), 'content-type': 'application/json' }

interface Alert { id: string; updated_at: string; name: string; state: 'ok' | 'firing'; last_value: number | null; last_evaluated_at: string | null; threshold: number | null; event: string | null; condition: string; metric: string; enabled: boolean }
interface AlertEvent { id: string; alert_id: string; kind: string; day: string; value: number; detail: Record<string, unknown>; at: string }

async function createAlert(payload: Record<string, unknown>, key = ws.keys.mcp) {
  return app.inject({ method: 'POST', url: `${base}/alerts`, headers: { ...bearer(key), 'content-type': 'application/json' }, payload })
}
async function made(payload: Record<string, unknown>): Promise<Alert> {
  const res = await createAlert(payload)
  if (res.statusCode !== 201) throw new Error(`create_alert: ${res.statusCode} ${res.body}`)
  return res.json()
}
async function alertNow(id: string): Promise<Alert> {
  const res = await app.inject({ method: 'GET', url: `${base}/alerts`, headers: bearer(ws.keys.mcp) })
  return (res.json().items as Alert[]).find((a) => a.id === id)!
}
async function eventsOf(id: string): Promise<AlertEvent[]> {
  const res = await app.inject({ method: 'GET', url: `${base}/alerts/events?alert_id=${id}&page_size=100`, headers: bearer(ws.keys.mcp) })
  return res.json().items
}
const users = (event: string, prefix: string, n: number, at: string): [string, string, string][] => Array.from({ length: n }, (_, i) => [event, `${prefix}-${i}@example.com`, at])
async function remove(id: string) {
  expectStatus(t, await app.inject({ method: 'DELETE', url: `${base}/alerts/${id}`, headers: bearer(ws.keys.mcp) }), 200)
}

t.test('done when: "daily users below 3" fires within seconds of the ingestion, reaches the receiver, and resolves when the numbers recover', async (t) => {
  const hook = await receiver(t)
  const sub = await subscribe(app, ws.keys.service, ws.project.id, hook.url, ['alert.triggered', 'alert.resolved'])
  const alert = await made({ name: 'Daily users below 3', metric: 'daily_users', condition: 'below', threshold: 3 })
  t.match(alert, { state: 'ok', last_value: null, last_evaluated_at: null, threshold: 3, event: null, enabled: true })

  // Yesterday closed with one user; today two so far.
  const started = Date.now()
  await ingestEvents(app, ws.keys.ingest, [...users('daily_use', 'y', 1, '2026-03-17T12:00:00Z'), ...users('daily_use', 't', 2, '2026-03-18T14:00:00Z')])
  await app.alerts.settled()
  t.ok(Date.now() - started < 5000, 'evaluated within seconds of the ingestion')
  const fired = await alertNow(alert.id)
  t.equal(fired.state, 'firing')
  t.equal(fired.last_value, 1)
  const [triggered] = await eventsOf(alert.id)
  t.match(triggered, { id: /^ale_/, alert_id: alert.id, kind: 'triggered', day: '2026-03-17', value: 1, detail: { threshold: 3, basis: 'closed_day' }, at: '2026-03-18T15:00:00.000Z' })

  t.equal(await app.webhooks.deliverDue(), 1, 'one message queued')
  t.equal(hook.got.length, 1)
  const body = JSON.parse(hook.got[0]!.body)
  t.strictSame(body, {
    type: 'alert.triggered',
    timestamp: '2026-03-18T15:00:00.000Z',
    data: {
      alert: { id: alert.id, name: 'Daily users below 3', metric: 'daily_users', event: null, condition: 'below', threshold: 3 },
      id: triggered!.id,
      kind: 'triggered',
      day: '2026-03-17',
      value: 1,
      detail: { threshold: 3, basis: 'closed_day' },
      project: { id: ws.project.id, slug: ws.project.slug, name: body.data.project.name },
      at: '2026-03-18T15:00:00.000Z',
    },
  })
  t.type(body.data.project.name, 'string')

  // Evaluated again with nothing new: still firing, nothing more sent.
  await app.alerts.evaluate(ws.project.id)
  t.equal((await eventsOf(alert.id)).length, 1)

  clock.set('2026-03-18T16:00:00.000Z')
  await ingestEvents(app, ws.keys.ingest, users('daily_use', 'later', 1, '2026-03-18T15:30:00Z'))
  await app.alerts.settled()
  t.equal((await alertNow(alert.id)).state, 'ok')
  const [resolved] = await eventsOf(alert.id)
  t.match(resolved, { kind: 'resolved', day: '2026-03-18', value: 3, detail: { threshold: 3, basis: 'today_so_far' }, at: '2026-03-18T16:00:00.000Z' })
  t.equal(await app.webhooks.deliverDue(), 1)
  const second = JSON.parse(hook.got[1]!.body)
  t.equal(second.type, 'alert.resolved')
  t.match(second.data, { id: resolved!.id, kind: 'resolved', day: '2026-03-18', value: 3, alert: { id: alert.id } })
  const { items } = await app.repos.webhooks.deliveries(sub.id, { limit: 10, offset: 0 })
  t.same(items.map((d) => d.status), ['succeeded', 'succeeded'])
  await remove(alert.id)
})

t.test('registrations above 2: fires at the third sign-up of the day, once', async (t) => {
  const alert = await made({ name: 'Sign-up rush', metric: 'registrations', condition: 'above', threshold: 2 })
  await ingestEvents(app, ws.keys.ingest, users('signup', 'reg', 2, '2026-03-18T15:10:00Z'))
  await app.alerts.settled()
  t.match(await alertNow(alert.id), { state: 'ok', last_value: 2 })
  await ingestEvents(app, ws.keys.ingest, users('signup', 'reg2', 1, '2026-03-18T15:20:00Z'))
  await ingestEvents(app, ws.keys.ingest, users('signup', 'reg3', 1, '2026-03-18T15:21:00Z'))
  await app.alerts.settled()
  t.match(await alertNow(alert.id), { state: 'firing', last_value: 4 })
  const events = await eventsOf(alert.id)
  t.equal(events.length, 1, 'one firing for a burst of batches')
  t.match(events[0], { kind: 'triggered', day: '2026-03-18', detail: { threshold: 2, basis: 'today_so_far' } })
  t.ok([3, 4].includes(events[0]!.value))
  await remove(alert.id)
})

t.test('an event\'s count: only that event counts', async (t) => {
  const alert = await made({ name: 'Exports', metric: 'event_count', event: 'export', condition: 'above', threshold: 1 })
  await ingestEvents(app, ws.keys.ingest, [['export', 'a@example.com', '2026-03-18T15:00:00Z'], ['import', 'a@example.com', '2026-03-18T15:00:00Z'], ['import', 'b@example.com', '2026-03-18T15:00:00Z']])
  await app.alerts.settled()
  t.match(await alertNow(alert.id), { state: 'ok', last_value: 1 })
  await ingestEvents(app, ws.keys.ingest, [['export', 'a@example.com', '2026-03-18T15:01:00Z']])
  await app.alerts.settled()
  t.match(await alertNow(alert.id), { state: 'firing', last_value: 2 })
  await remove(alert.id)
})

t.test('the review queue: pending count after submissions and reviews, the oldest one\'s age as the clock moves', async (t) => {
  const pending = await made({ name: 'Queue over 1', metric: 'pending_opportunities', condition: 'above', threshold: 1 })
  const age = await made({ name: 'Waiting over a day', metric: 'oldest_pending_age_hours', condition: 'above', threshold: 24 })
  const submit = async () => {
    const res = await app.inject({ method: 'POST', url: `${base}/opportunities`, headers: json, payload: { contribution_type: 'potential_user_opportunity', key_information: 'A lead', reason: 'r', suggested_action: 'a' } })
    expectStatus(t, res, 201)
    return res.json().event_id as string
  }
  const first = await submit()
  await app.alerts.settled()
  t.match(await alertNow(pending.id), { state: 'ok', last_value: 1 })
  t.match(await alertNow(age.id), { state: 'ok', last_value: 0 })
  await submit()
  await app.alerts.settled()
  t.match(await alertNow(pending.id), { state: 'firing', last_value: 2 })
  t.match((await eventsOf(pending.id))[0], { kind: 'triggered', value: 2, detail: { threshold: 1, basis: 'now' } })

  const review = await app.inject({ method: 'PATCH', url: `${base}/opportunities/${first}/review`, headers: json, payload: { status: 'done' } })
  expectStatus(t, review, 200)
  await app.alerts.settled()
  t.match(await alertNow(pending.id), { state: 'ok', last_value: 1 })

  // Nothing changes but the clock: the due sweep judges the age.
  clock.set('2026-03-19T16:30:00.000Z')
  t.ok(await app.alerts.evaluateDue() >= 1)
  const aged = await alertNow(age.id)
  t.equal(aged.state, 'firing')
  t.ok(aged.last_value! > 24 && aged.last_value! < 26, `${aged.last_value} hours`)
  t.equal(await app.alerts.evaluateDue(), 0, 'nothing due right after')
  await remove(pending.id)
  await remove(age.id)
  clock.set('2026-03-18T16:00:00.000Z')
})

t.test('the day close, in the project\'s zone, on a pinned clock', async (t) => {
  const tokyo = (await app.inject({ method: 'POST', url: '/v1/projects', headers: bearer(ws.keys.service), payload: { name: 'Tokyo shop', slug: `tokyo-${Date.now()}`, timezone: 'Asia/Tokyo' } })).json()
  const url = `/api/v1/mcp/projects/${tokyo.id}`
  clock.set('2026-03-18T05:00:00.000Z') // 14:00 in Tokyo, Wednesday 18th
  const res = await app.inject({ method: 'POST', url: `${url}/alerts`, headers: json, payload: { name: 'Quiet day', metric: 'daily_users', condition: 'below', threshold: 2 } })
  expectStatus(t, res, 201)
  const alert = res.json() as Alert
  const ingest = (events: [string, string, string][]) => app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.service), payload: { project: tokyo.id, events: events.map(([event, distinct_id, timestamp]) => ({ event, distinct_id, timestamp })) } })
  expectStatus(t, await ingest([...users('daily_use', 'tk-y', 2, '2026-03-17T05:00:00Z'), ...users('daily_use', 'tk', 3, '2026-03-18T04:00:00Z')]), 200)
  await app.alerts.settled()
  const history = async () => (await app.inject({ method: 'GET', url: `${url}/alerts/events`, headers: bearer(ws.keys.mcp) })).json().items as AlertEvent[]
  t.same(await history(), [])

  // 23:59 in Tokyo: the day has not closed.
  clock.set('2026-03-18T14:59:00.000Z')
  t.equal(await app.alerts.evaluateDue(), 0, 'evaluated today already (at the ingestion)')
  // 00:01 on the 19th in Tokyo (still the 18th in UTC): the 18th closed with 3 users, not below 2.
  clock.set('2026-03-18T15:01:00.000Z')
  t.equal(await app.alerts.evaluateDue(), 1)
  const afterClose = (await app.inject({ method: 'GET', url: `${url}/alerts`, headers: bearer(ws.keys.mcp) })).json().items[0] as Alert
  t.match(afterClose, { id: alert.id, state: 'ok', last_value: 3, last_evaluated_at: '2026-03-18T15:01:00.000Z' })

  // The 19th (Tokyo) gets one user; at its close the alert fires for the 19th.
  expectStatus(t, await ingest(users('daily_use', 'tk19', 1, '2026-03-19T03:00:00Z')), 200)
  await app.alerts.settled()
  t.same(await history(), [], 'a partial day below the threshold does not fire')
  clock.set('2026-03-19T15:00:30.000Z')
  t.equal(await app.alerts.evaluateDue(), 1)
  const [fired] = await history()
  t.match(fired, { kind: 'triggered', day: '2026-03-19', value: 1, detail: { threshold: 2, basis: 'closed_day' }, at: '2026-03-19T15:00:30.000Z' })
  t.equal(await app.alerts.evaluateDue(), 0, 'once a day')
  clock.set('2026-03-18T16:00:00.000Z')
})

t.test('evaluated at the same moment by many: one firing, one message', async (t) => {
  const hook = await receiver(t)
  const sub = await subscribe(app, ws.keys.service, ws.project.id, hook.url, ['alert.triggered'])
  const alerts = await Promise.all([1, 2, 3].map((i) => made({ name: `Race ${i}`, metric: 'daily_users', condition: 'above', threshold: i - 1 })))
  // On PostgreSQL a second instance on the same database judges at the same moment too.
  const other = database.kind === 'postgres' ? await buildTestApp(t, { database, now: clock, config: privateOk }) : app
  const results = await Promise.all([app, other, app, other].map((instance) => instance.alerts.evaluate(ws.project.id, 'daily')))
  const changes = results.flat()
  t.equal(changes.length, 3, 'each alert changed state once, whoever judged it')
  for (const a of alerts) {
    const events = await eventsOf(a.id)
    t.equal(events.length, 1, `${a.name}: one event`)
    t.equal((await alertNow(a.id)).state, 'firing')
  }
  const { items } = await app.repos.webhooks.deliveries(sub.id, { limit: 100, offset: 0 })
  const ids = items.map((d) => (d.payload as { data: { alert: { id: string } } }).data.alert.id)
  t.same(ids.sort(), alerts.map((a) => a.id).sort(), 'one message per alert')
  for (const a of alerts) await remove(a.id)
})

t.test('a burst of batches is evaluated a few times, not once a batch; a failing evaluation never fails an ingestion', async (t) => {
  const alert = await made({ name: 'Busy day', metric: 'event_users', event: 'burst', condition: 'above', threshold: 25 })
  const list = app.repos.alerts.list
  let evaluations = 0
  // The first evaluation is held (before it reads anything) until every batch has been answered,
  // so the count does not depend on how the batches' commits spread in time: the batches that
  // ask while it runs make one evaluation more between them, not one each.
  let release!: () => void
  const held = new Promise<void>((resolve) => (release = resolve))
  app.repos.alerts.list = async (projectId, enabledOnly) => {
    if (projectId === ws.project.id && enabledOnly && ++evaluations === 1) await held
    return list(projectId, enabledOnly)
  }
  t.teardown(() => {
    release()
    app.repos.alerts.list = list
  })
  const batches = 12
  await Promise.all(Array.from({ length: batches }, (_, b) => ingestEvents(app, ws.keys.ingest, users('burst', `burst-${b}`, 3, '2026-03-18T15:40:00Z'))))
  release()
  await app.alerts.settled()
  t.comment(`${batches} batches, ${evaluations} evaluations`)
  // One when every batch came in within the first one's gathering wait, else two.
  t.ok(evaluations >= 1 && evaluations <= 2, `${batches} batches, ${evaluations} evaluations`)
  t.match(await alertNow(alert.id), { state: 'firing', last_value: 36 }, 'the last evaluation saw every batch')

  app.repos.alerts.list = async () => {
    throw new Error('the database is having a bad day')
  }
  const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events: [{ event: 'burst', distinct_id: 'late@example.com', timestamp: '2026-03-18T15:41:00Z' }] } })
  expectStatus(t, res, 200)
  t.same(res.json(), { accepted: 1, duplicates: 0 })
  await app.alerts.settled()
  app.repos.alerts.list = list
  await remove(alert.id)
})

t.test('anomaly end to end: four quiet Wednesdays, then a spike today', async (t) => {
  const project = (await app.inject({ method: 'POST', url: '/v1/projects', headers: bearer(ws.keys.service), payload: { name: 'Weekly', slug: `weekly-${Date.now()}` } })).json()
  const url = `/api/v1/mcp/projects/${project.id}`
  const res = await app.inject({ method: 'POST', url: `${url}/alerts`, headers: json, payload: { name: 'Sign-ups unusual', metric: 'registrations', condition: 'anomaly' } })
  expectStatus(t, res, 201)
  const history: [string, string, string][] = []
  for (const [week, n] of [[1, 10], [2, 12], [3, 9], [4, 11]] as const) {
    for (let i = 0; i < n; i++) history.push(['signup', `w${week}-${i}@example.com`, `${addDays('2026-03-18', -7 * week)}T12:00:00Z`])
  }
  const send = (events: [string, string, string][]) => app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.service), payload: { project: project.id, events: events.map(([event, distinct_id, timestamp]) => ({ event, distinct_id, timestamp })) } })
  expectStatus(t, await send(history), 200)
  expectStatus(t, await send(users('signup', 'today', 14, '2026-03-18T14:00:00Z')), 200)
  await app.alerts.settled()
  const log = async () => (await app.inject({ method: 'GET', url: `${url}/alerts/events`, headers: bearer(ws.keys.mcp) })).json().items as AlertEvent[]
  t.same(await log(), [], '14 against a median of 10.5 is within range')
  expectStatus(t, await send(users('signup', 'rush', 16, '2026-03-18T14:30:00Z')), 200)
  await app.alerts.settled()
  const [fired] = await log()
  t.match(fired, { kind: 'triggered', day: '2026-03-18', value: 30, detail: { method: 'median_mad_same_weekdays', expected: 10.5, weeks: 4, direction: 'spike', basis: 'today_so_far' } })

  // An event first recorded today has no past weekdays (not four weeks of zeros): no verdict.
  const launch = await app.inject({ method: 'POST', url: `${url}/alerts`, headers: json, payload: { name: 'Launch unusual', metric: 'event_count', event: 'launch', condition: 'anomaly' } })
  expectStatus(t, launch, 201)
  expectStatus(t, await send(users('launch', 'l', 40, '2026-03-18T14:45:00Z')), 200)
  await app.alerts.settled()
  const judged = (await app.inject({ method: 'GET', url: `${url}/alerts`, headers: bearer(ws.keys.mcp) })).json().items as Alert[]
  t.match(judged.find((a) => a.id === launch.json().id), { state: 'ok', last_value: 40 })
  t.equal((await log()).length, 1, 'still the one firing')

  // Daily users below 5 in a project whose daily_use starts today: yesterday is no day below.
  const below = await app.inject({ method: 'POST', url: `${url}/alerts`, headers: json, payload: { name: 'Few users', metric: 'daily_users', condition: 'below', threshold: 5 } })
  expectStatus(t, below, 201)
  expectStatus(t, await send(users('daily_use', 'first', 1, '2026-03-18T14:50:00Z')), 200)
  await app.alerts.settled()
  const now = (await app.inject({ method: 'GET', url: `${url}/alerts`, headers: bearer(ws.keys.mcp) })).json().items as Alert[]
  t.match(now.find((a) => a.id === below.json().id), { state: 'ok', last_value: 1 })
  t.equal((await log()).length, 1, 'a new event does not start with a firing')
})

t.test('validation: a clear error naming the field, and nothing created or changed', async (t) => {
  const cases: [Record<string, unknown>, string][] = [
    [{ name: 'x', metric: 'event_count', condition: 'above', threshold: 1 }, 'event'],
    [{ name: 'x', metric: 'daily_users', event: 'signup', condition: 'above', threshold: 1 }, 'event'],
    [{ name: 'x', metric: 'daily_users', condition: 'below' }, 'threshold'],
    [{ name: 'x', metric: 'daily_users', condition: 'anomaly', threshold: 4 }, 'threshold'],
    [{ name: 'x', metric: 'oldest_pending_age_hours', condition: 'anomaly' }, 'condition'],
    [{ name: '   ', metric: 'daily_users', condition: 'anomaly' }, 'name'],
    [{ name: 'x', metric: 'daily_users', condition: 'sideways', threshold: 1 }, 'condition'],
  ]
  for (const [payload, field] of cases) {
    const res = await createAlert(payload)
    expectStatus(t, res, 400)
    t.match(res.json().error, { code: 'invalid_arguments', details: [{ path: field }] }, JSON.stringify(payload))
  }
  t.same((await app.inject({ method: 'GET', url: `${base}/alerts`, headers: bearer(ws.keys.mcp) })).json().items, [])

  const alert = await made({ name: 'Exports', metric: 'event_users', event: 'export', condition: 'above', threshold: 5 })
  const patch = (payload: Record<string, unknown>, id = alert.id) => app.inject({ method: 'PATCH', url: `${base}/alerts/${id}`, headers: json, payload })
  const refusals: [Record<string, unknown>, number, string][] = [
    [{ condition: 'anomaly', threshold: 3 }, 400, 'threshold'],
    [{ metric: 'daily_users', event: 'export' }, 400, 'event'],
    [{ metric: 'pending_opportunities', condition: 'anomaly' }, 400, 'condition'],
    [{}, 400, ''],
  ]
  for (const [payload, status, field] of refusals) {
    const res = await patch(payload)
    expectStatus(t, res, status)
    t.match(res.json().error, { code: 'invalid_arguments', details: [{ path: field }] }, JSON.stringify(payload))
  }
  const stored = await alertNow(alert.id)
  t.match(stored, { metric: 'event_users', event: 'export', condition: 'above', threshold: 5, updated_at: alert.updated_at }, 'unchanged')
  expectStatus(t, await patch({ enabled: false }, 'alr_doesnotexist'), 404)

  // Partial: only what is sent; a metric without an event drops it, anomaly drops the threshold.
  const renamed = await patch({ name: 'Exporters' })
  t.match(renamed.json(), { name: 'Exporters', metric: 'event_users', event: 'export', threshold: 5 })
  const daily = await patch({ metric: 'daily_users' })
  t.match(daily.json(), { metric: 'daily_users', event: null, threshold: 5 })
  const odd = await patch({ condition: 'anomaly' })
  t.match(odd.json(), { condition: 'anomaly', threshold: null })
  const needs = await patch({ condition: 'below' })
  t.match(needs.json().error, { code: 'invalid_arguments', details: [{ path: 'threshold' }] }, 'below needs a threshold it no longer has')
  const below = await patch({ condition: 'below', threshold: 7, enabled: false })
  t.match(below.json(), { condition: 'below', threshold: 7, enabled: false, name: 'Exporters' })
  const back = await patch({ metric: 'event_count' })
  t.match(back.json().error, { details: [{ path: 'event' }] }, 'an event metric needs its event again')

  // Roles: a viewer reads, only an owner writes.
  expectStatus(t, await app.inject({ method: 'GET', url: `${base}/alerts`, headers: bearer(viewer.keys.mcp) }), 200)
  expectStatus(t, await app.inject({ method: 'GET', url: `${base}/alerts/events`, headers: bearer(viewer.keys.mcp) }), 200)
  const refused = await createAlert({ name: 'x', metric: 'daily_users', condition: 'anomaly' }, viewer.keys.mcp)
  expectStatus(t, refused, 403)
  expectStatus(t, await app.inject({ method: 'DELETE', url: `${base}/alerts/${alert.id}`, headers: bearer(viewer.keys.mcp) }), 403)
  await remove(alert.id)
  expectStatus(t, await app.inject({ method: 'DELETE', url: `${base}/alerts/${alert.id}`, headers: bearer(ws.keys.mcp) }), 404)
  expectStatus(t, await app.inject({ method: 'GET', url: `${base}/alerts/events?alert_id=${alert.id}`, headers: bearer(ws.keys.mcp) }), 404)
})

t.test(`at most ${MAX_ALERTS_PER_PROJECT} alerts a project`, async (t) => {
  const existing = (await app.repos.alerts.list(ws.project.id)).length
  for (let i = existing; i < MAX_ALERTS_PER_PROJECT; i++) {
    await app.repos.alerts.create({ projectId: ws.project.id, name: `Filler ${i}`, metric: 'daily_users', event: null, condition: 'anomaly', threshold: null, createdBy: ws.user.id, now: clock() }, MAX_ALERTS_PER_PROJECT)
  }
  const res = await createAlert({ name: 'One too many', metric: 'daily_users', condition: 'anomaly' })
  expectStatus(t, res, 409)
  t.match(res.json().error, { code: 'conflict', message: /50 alerts/ })
  t.equal((await app.repos.alerts.list(ws.project.id)).length, MAX_ALERTS_PER_PROJECT)
  for (const a of await app.repos.alerts.list(ws.project.id)) await app.repos.alerts.remove(ws.project.id, a.id)
})

t.test('REST, /v1/tools and MCP answer the same', async (t) => {
  const alert = await made({ name: 'Same everywhere', metric: 'registrations', condition: 'above', threshold: 0 })
  await app.alerts.evaluate(ws.project.id)
  const rest = await app.inject({ method: 'GET', url: `${base}/alerts/events?alert_id=${alert.id}`, headers: bearer(ws.keys.mcp) })
  expectStatus(t, rest, 200)
  t.equal(rest.json().total, 1)
  const tools = await app.inject({ method: 'POST', url: '/v1/tools/list_alert_events', headers: bearer(ws.keys.service), payload: { project: ws.project.id, alert_id: alert.id } })
  t.strictSame(tools.json(), { result: rest.json() })
  const mcp = await app.inject({
    method: 'POST',
    url: '/mcp?toolsets=metrics',
    headers: { ...bearer(ws.keys.mcp), host: '127.0.0.1:3000', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_alerts', arguments: { project: ws.project.id } } },
  })
  const listed = await app.inject({ method: 'GET', url: `${base}/alerts`, headers: bearer(ws.keys.mcp) })
  t.equal(mcp.json().result.content[0].text, listed.body, 'MCP answers the bytes REST does')
  await remove(alert.id)
})
