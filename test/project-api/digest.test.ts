// The digest tools: what a digest says over seeded events, opportunities and alert events
// (registrations, daily users and events against the previous period, with their change), the
// schedule's validation (a clear 400 naming the field, nothing changed), roles, and the same
// answers over REST, /v1/tools and MCP.
import t from 'tap'
import { sql } from '../../db/orm.ts'
import { addMember, bearer, buildTestApp, fixedClock, ingestEvents, seedWorkspace } from '../helpers/app.ts'

const clock = fixedClock('2026-11-20T12:00:00.000Z') // a Friday; yesterday is 2026-11-19 (UTC project)
const app = await buildTestApp(t, { now: clock })
const ws = await seedWorkspace(app)
const project = ws.project.id
const digestUrl = `/api/v1/mcp/projects/${project}/digest`

const rest = (method: 'GET' | 'PUT' | 'DELETE', url: string, key = ws.keys.mcp, payload?: unknown) =>
  app.inject({ method, url, headers: bearer(key), ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) })
const tool = (name: string, args: Record<string, unknown> = {}, key = ws.keys.service) =>
  app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: { project, ...args } })
async function mcp(name: string, args: Record<string, unknown> = {}, key = ws.keys.mcp) {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp?toolsets=metrics',
    headers: { ...bearer(key), host: '127.0.0.1:3000', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { project, ...args } } },
  })
  return res.json().result as { structuredContent?: unknown; isError?: boolean; content: { text: string }[] }
}

// Events: yesterday (the daily period) against the day before, and one in the week before.
await ingestEvents(app, ws.keys.ingest, [
  ['signup', 'A', '2026-11-19T08:00:00Z'],
  ['signup', 'B', '2026-11-19T09:00:00Z'],
  ['signup', 'B', '2026-11-19T09:01:00Z'],
  ['daily_use', 'A', '2026-11-19T10:00:00Z'],
  ['daily_use', 'A', '2026-11-19T11:00:00Z'],
  ['daily_use', 'B', '2026-11-19T10:00:00Z'],
  ['daily_use', 'C', '2026-11-19T23:59:59Z'],
  ...Array.from({ length: 5 }, (_, i) => ['page_view', 'A', `2026-11-19T12:0${i}:00Z`] as [string, string, string]),
  ['click', 'A', '2026-11-19T12:00:00Z'],
  ['click', 'B', '2026-11-19T12:00:00Z'],
  ['signup', 'C', '2026-11-18T08:00:00Z'],
  ['daily_use', 'A', '2026-11-18T10:00:00Z'],
  ['daily_use', 'C', '2026-11-18T10:00:00Z'],
  ['page_view', 'A', '2026-11-18T10:00:00Z'],
  ['page_view', 'C', '2026-11-18T10:00:00Z'],
  ['signup', 'D', '2026-11-10T10:00:00Z'],
  ['daily_use', 'D', '2026-11-10T10:00:00Z'],
  // Today: in no digest yet.
  ['signup', 'E', '2026-11-20T01:00:00Z'],
  ['page_view', 'E', '2026-11-20T01:00:00Z'],
])

// Opportunities: two submitted yesterday, one the day before, one today; one adopted yesterday,
// one adopted today (not in the period).
const submit = async (key: string, at: string) =>
  (await app.repos.opportunities.submit({ projectId: project, submittedBy: ws.user.id, contributionType: 'potential_user_opportunity', keyInformation: key, reason: 'r', suggestedAction: 's', receivedAt: new Date(at) })).opportunity.event_id
const alpha = await submit('Alpha: a CTO asked for SSO', '2026-11-19T10:00:00Z')
const beta = await submit('Beta: a reseller in Lyon', '2026-11-19T11:00:00Z')
const gamma = await submit('Gamma: an agency wants a partner plan', '2026-11-18T10:00:00Z')
await submit('Delta: today', '2026-11-20T01:00:00Z')
async function review(eventId: string, status: string, at: string) {
  clock.set(at)
  const patched = await app.inject({ method: 'PATCH', url: `/api/v1/mcp/projects/${project}/opportunities/${eventId}/review`, headers: bearer(ws.keys.mcp), payload: { status } })
  if (patched.statusCode !== 200) throw new Error(patched.body)
}
await review(gamma, 'adopted', '2026-11-19T15:00:00.000Z')
await review(alpha, 'adopted', '2026-11-20T09:00:00.000Z')
clock.set('2026-11-20T12:00:00.000Z')

// Alerts (another part of the product fills these; here, rows of their own).
await app.db.execute(sql`insert into alerts (id, project_id, name, metric, condition, threshold) values ('alr_low', ${project}, 'Signups low', 'registrations', 'below', 5)`)
await app.db.execute(sql`insert into alert_events (id, alert_id, project_id, kind, day, value, at) values
  ('ale_1', 'alr_low', ${project}, 'triggered', '2026-11-19', 2, '2026-11-20T00:05:00Z'),
  ('ale_2', 'alr_low', ${project}, 'resolved', '2026-11-18', 6, '2026-11-19T00:05:00Z'),
  ('ale_3', 'alr_low', ${project}, 'triggered', '2026-11-20', 1, '2026-11-20T11:00:00Z')`)

t.test('preview_digest: the daily digest of yesterday against the day before', async (t) => {
  const res = await rest('GET', `${digestUrl}/preview`)
  t.equal(res.statusCode, 200, res.body)
  t.same(res.json(), {
    project: { id: project, slug: ws.project.slug, name: res.json().project.name, timezone: 'UTC' },
    frequency: 'daily',
    period: { from: '2026-11-19', to: '2026-11-19' },
    previous: { from: '2026-11-18', to: '2026-11-18' },
    metrics: {
      registrations: { value: 2, previous: 1, change: 1 },
      daily_users: { value: 3, previous: 2, change: 0.5 },
      events: [
        { event: 'page_view', count: 5, previous: 2, change: 1.5 },
        { event: 'daily_use', count: 4, previous: 2, change: 1 },
        { event: 'signup', count: 3, previous: 1, change: 2 },
        { event: 'click', count: 2, previous: 0, change: null },
      ],
    },
    opportunities: { new: 2, pending: 2, adopted: 1, top_new: [{ event_id: beta, key_information: 'Beta: a reseller in Lyon' }, { event_id: alpha, key_information: 'Alpha: a CTO asked for SSO' }] },
    alerts: [{ id: 'alr_low', name: 'Signups low', kind: 'triggered', day: '2026-11-19', value: 2 }],
    generated_at: '2026-11-20T12:00:00.000Z',
  })
})

t.test('preview_digest weekly: the 7 days ending yesterday against the 7 before, daily users an average per day', async (t) => {
  const res = await rest('GET', `${digestUrl}/preview?frequency=weekly`)
  t.equal(res.statusCode, 200, res.body)
  const d = res.json()
  t.same([d.period, d.previous], [{ from: '2026-11-13', to: '2026-11-19' }, { from: '2026-11-06', to: '2026-11-12' }])
  t.same(d.metrics.registrations, { value: 3, previous: 1, change: 2 })
  t.same(d.metrics.daily_users, { value: 0.71, previous: 0.14, change: 4 }, '5 and 1 user-days over 7 days')
  t.same(d.metrics.events.map((e: { event: string }) => e.event), ['page_view', 'daily_use', 'signup', 'click'])
  t.same(d.opportunities, { new: 3, pending: 2, adopted: 1, top_new: [beta, alpha, gamma].map((id) => ({ event_id: id, key_information: d.opportunities.top_new.find((o: { event_id: string }) => o.event_id === id)?.key_information })) })
  t.same(d.alerts.map((a: { kind: string; day: string }) => [a.kind, a.day]), [['resolved', '2026-11-18'], ['triggered', '2026-11-19']], 'oldest first')
})

t.test('a schedule: set, read, changed, the preview following its frequency, deleted', async (t) => {
  t.same((await rest('GET', digestUrl)).json(), { digest: null }, 'none yet')
  const created = await rest('PUT', digestUrl, ws.keys.mcp, { frequency: 'weekly', hour: 8, weekday: 'Monday' })
  t.equal(created.statusCode, 201)
  t.same(created.json(), {
    project,
    timezone: 'UTC',
    frequency: 'weekly',
    hour: 8,
    weekday: 1,
    enabled: true,
    last_period_end: '2026-11-15',
    last_sent_at: null,
    next_at: '2026-11-23T08:00:00.000Z',
    created_at: '2026-11-20T12:00:00.000Z',
    updated_at: '2026-11-20T12:00:00.000Z',
    created: true,
  })
  t.equal((await rest('GET', `${digestUrl}/preview`)).json().frequency, 'weekly', 'the preview takes the schedule\'s frequency')
  clock.set('2026-11-20T13:00:00.000Z')
  const changed = await rest('PUT', digestUrl, ws.keys.mcp, { frequency: 'daily', hour: 18 })
  t.equal(changed.statusCode, 200)
  t.match(changed.json(), { frequency: 'daily', hour: 18, weekday: null, created: false, created_at: '2026-11-20T12:00:00.000Z', updated_at: '2026-11-20T13:00:00.000Z', next_at: '2026-11-20T18:00:00.000Z' })
  const { created: _, ...schedule } = changed.json()
  t.same((await rest('GET', digestUrl)).json(), { digest: schedule })
  t.same((await rest('DELETE', digestUrl)).json(), { project, deleted: true })
  t.same((await rest('DELETE', digestUrl)).json(), { project, deleted: false }, 'again: nothing to delete')
  t.same((await rest('GET', digestUrl)).json(), { digest: null })
  clock.set('2026-11-20T12:00:00.000Z')
})

t.test('bad input: 400 naming the field, and nothing changes', async (t) => {
  await rest('PUT', digestUrl, ws.keys.mcp, { frequency: 'daily', hour: 9 })
  const before = (await rest('GET', digestUrl)).json()
  const cases: [Record<string, unknown>, string, RegExp][] = [
    [{ frequency: 'daily', hour: 24 }, 'hour', /<= 23/],
    [{ frequency: 'daily', hour: -1 }, 'hour', />= 0/],
    [{ frequency: 'daily', hour: 9.5 }, 'hour', /integer/],
    [{ frequency: 'monthly', hour: 9 }, 'frequency', /must be one of "daily", "weekly"/],
    [{ frequency: 'weekly', hour: 9 }, 'weekday', /required for a weekly digest/],
    [{ frequency: 'daily', hour: 9, weekday: 'monday' }, 'weekday', /must not be sent for a daily digest/],
    [{ frequency: 'weekly', hour: 9, weekday: 0 }, 'weekday', /must be >= 1/],
    [{ frequency: 'weekly', hour: 9, weekday: 8 }, 'weekday', /must be <= 7/],
    [{ frequency: 'weekly', hour: 9, weekday: 2.5 }, 'weekday', /must be integer/],
    [{ frequency: 'weekly', hour: 9, weekday: 'Funday' }, 'weekday', /^must be 1 = Monday … 7 = Sunday, or the day's name in English \(monday … sunday\)$/],
    [{ frequency: 'daily', hour: 9, enabled: 'yes' }, 'enabled', /boolean/],
    [{ frequency: 'daily', hour: 9, minute: 30 }, 'minute', /is not a known field/],
    [{ hour: 9 }, 'frequency', /required/],
  ]
  for (const [payload, field, message] of cases) {
    const res = await rest('PUT', digestUrl, ws.keys.mcp, payload)
    t.equal(res.statusCode, 400, JSON.stringify(payload))
    const error = res.json().error
    t.equal(error.code, 'invalid_arguments')
    t.ok(error.details.length > 0 && error.details.every((d: { path: string }) => d.path === field), `${JSON.stringify(payload)}: names ${field}: ${JSON.stringify(error.details)}`)
    t.match(error.details.map((d: { message: string }) => d.message).join(' '), message)
  }
  t.same((await rest('GET', digestUrl)).json(), before, 'the schedule is as it was')
  t.equal((await rest('GET', `${digestUrl}/preview?frequency=hourly`)).statusCode, 400)
  await rest('DELETE', digestUrl)
})

t.test('roles: a viewer reads and previews, only an owner sets or deletes; another workspace sees nothing', async (t) => {
  const viewer = await addMember(app, project, 'viewer')
  t.equal((await rest('GET', digestUrl, viewer.keys.mcp)).statusCode, 200)
  const seen = await rest('GET', `${digestUrl}/preview`, viewer.keys.mcp)
  t.equal(seen.statusCode, 200)
  t.same(seen.json().opportunities, { new: 2, pending: 2, adopted: 1, top_new: [] }, 'a viewer gets the counts, not what the opportunities say')
  const refused = await rest('PUT', digestUrl, viewer.keys.mcp, { frequency: 'daily', hour: 9 })
  t.equal(refused.statusCode, 403)
  t.equal(refused.json().error.code, 'forbidden')
  t.equal((await rest('DELETE', digestUrl, viewer.keys.mcp)).statusCode, 403)
  t.same((await rest('GET', digestUrl)).json(), { digest: null }, 'nothing set')
  const other = await seedWorkspace(app)
  t.equal((await rest('GET', digestUrl, other.keys.mcp)).statusCode, 404)
  t.equal((await rest('PUT', digestUrl, other.keys.mcp, { frequency: 'daily', hour: 9 })).statusCode, 404)
})

t.test('REST, /v1/tools and MCP answer the same', async (t) => {
  const viaMcp = await mcp('set_digest', { frequency: 'weekly', hour: 7, weekday: 5 })
  t.notOk(viaMcp.isError, viaMcp.content[0]?.text ?? '')
  t.match(viaMcp.structuredContent, { frequency: 'weekly', hour: 7, weekday: 5, created: true })
  const restGet = (await rest('GET', digestUrl)).json()
  t.same((await tool('get_digest')).json(), { result: restGet })
  t.same((await mcp('get_digest')).structuredContent, restGet)
  const restPreview = (await rest('GET', `${digestUrl}/preview`)).json()
  t.same((await tool('preview_digest')).json(), { result: restPreview })
  t.same((await mcp('preview_digest')).structuredContent, restPreview)
  // The same refusal everywhere.
  const restBad = (await rest('PUT', digestUrl, ws.keys.mcp, { frequency: 'weekly', hour: 7 })).json()
  t.same((await tool('set_digest', { frequency: 'weekly', hour: 7 })).json(), restBad)
  const mcpBad = await mcp('set_digest', { frequency: 'weekly', hour: 7 })
  t.ok(mcpBad.isError)
  t.same(JSON.parse(mcpBad.content[0]!.text), restBad)
  t.same((await mcp('delete_digest')).structuredContent, { project, deleted: true })
  t.same((await tool('delete_digest')).json(), { result: { project, deleted: false } })
})
