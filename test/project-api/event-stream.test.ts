// GET …/event-stream: the caller's own events only, newest first, cursor pagination.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { addProject, bearer, addMember, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`
const NOW = '2026-11-20T12:00:00.000Z'

interface StreamEvent {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  received_at: string
  properties: Record<string, unknown>
}

t.test('event stream', async (t) => {
  const clock = fixedClock(NOW)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const me = ws.user.email
  const viewer = await addMember(app, project, 'viewer')
  const sibling = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Sibling', slug: 'sibling' })

  const ingest = async (events: object[], p = project) => {
    const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.mcp), payload: { project: p, events } })
    if (res.statusCode !== 200) throw new Error(`ingest: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const stream = (query = '', key = ws.keys.mcp) =>
    app.inject({ method: 'GET', url: `${base(project)}/event-stream${query ? `?${query}` : ''}`, headers: bearer(key) })

  // The stream is read day by day in the project's time zone (UTC+13 in November here).
  const tz = await app.inject({ method: 'POST', url: '/v1/tools/update_project', headers: bearer(ws.keys.service), payload: { project, timezone: 'Pacific/Auckland' } })
  if (tz.statusCode !== 200) throw new Error(`update_project: ${tz.body}`)

  // 25 events of mine: one every 170 minutes back from 11:50Z, over four local days, with three
  // pairs sharing a timestamp (ties broken by id), mixed in batches with events of other people.
  const mine: { uuid: string; timestamp: string; event: string }[] = []
  for (let i = 0; i < 25; i++) {
    const minutes = 170 * (i - (i === 5 || i === 13 || i === 20 ? 1 : 0)) // #5 = #4, #13 = #12, #20 = #19
    const at = new Date(Date.parse('2026-11-20T11:50:00Z') - minutes * 60_000).toISOString()
    mine.push({ uuid: randomUUID(), timestamp: at, event: i % 3 ? 'daily_use' : 'page_view' })
  }
  const others = (n: number) => [
    { event: 'daily_use', distinct_id: 'someone-else', timestamp: '2026-11-20T11:55:00Z', uuid: randomUUID() },
    { event: 'daily_use', distinct_id: viewer.user.email, timestamp: `2026-11-20T1${n % 2}:00:00Z`, uuid: randomUUID() },
    { event: 'daily_use', distinct_id: `${me}.other`, timestamp: '2026-11-20T11:56:00Z', uuid: randomUUID() },
  ]
  // Shuffled into three batches, so ids do not follow time.
  const order = [...mine.keys()].sort((a, b) => ((a * 7) % 25) - ((b * 7) % 25))
  for (const chunk of [order.slice(0, 9), order.slice(9, 17), order.slice(17)]) {
    await ingest([...chunk.map((i) => ({ ...mine[i]!, distinct_id: me, properties: { i } })), ...others(chunk.length)])
  }
  // My email in another project of the workspace: not this project's stream.
  await ingest([{ event: 'signup', distinct_id: me, timestamp: '2026-11-20T11:59:00Z', uuid: randomUUID() }], sibling.id)
  const newestFirst = [...mine].sort((a, b) => b.timestamp.localeCompare(a.timestamp))

  t.test('only my events, newest first, default limit 20', async (t) => {
    const res = await stream()
    t.equal(res.statusCode, 200)
    const body = res.json()
    t.equal(body.distinct_id, me)
    t.equal(body.items.length, 20)
    t.type(body.next_cursor, 'string')
    t.ok(body.items.every((e: StreamEvent) => e.distinct_id === me))
    t.same(body.items.map((e: StreamEvent) => e.timestamp), newestFirst.slice(0, 20).map((e) => new Date(e.timestamp).toISOString()))
    const first = body.items[0] as StreamEvent
    const expected = mine[0]!
    t.same(first, { uuid: expected.uuid, event: expected.event, distinct_id: me, timestamp: '2026-11-20T11:50:00.000Z', received_at: NOW, properties: { i: 0 } })
  })

  t.test('cursor pagination covers every event of mine exactly once', async (t) => {
    for (const limit of [1, 4, 5, 7, 25, 100]) {
      const seen: StreamEvent[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const res = await stream(`limit=${limit}${cursor ? `&before=${encodeURIComponent(cursor)}` : ''}`)
        t.equal(res.statusCode, 200)
        const body = res.json()
        t.ok(body.items.length <= limit)
        seen.push(...body.items)
        cursor = body.next_cursor
        pages++
        if (pages > 30) throw new Error('the cursor does not advance')
      } while (cursor)
      t.equal(pages, Math.max(1, Math.ceil(25 / limit)), `limit ${limit}: pages`)
      t.equal(seen.length, 25, `limit ${limit}: count`)
      t.equal(new Set(seen.map((e) => e.uuid)).size, 25, `limit ${limit}: no repeats`)
      t.same(new Set(seen.map((e) => e.uuid)), new Set(mine.map((e) => e.uuid)), `limit ${limit}: all mine`)
      t.ok(seen.every((e, i) => i === 0 || e.timestamp <= seen[i - 1]!.timestamp), `limit ${limit}: newest first`)
    }
  })

  t.test('other people see their own events, and a membership distinct_id is used', async (t) => {
    let body = (await stream('', viewer.keys.mcp)).json()
    t.equal(body.distinct_id, viewer.user.email)
    t.same(body.items.map((e: StreamEvent) => e.timestamp), ['2026-11-20T11:00:00.000Z', '2026-11-20T10:00:00.000Z', '2026-11-20T10:00:00.000Z'])
    t.equal(body.next_cursor, null)
    await app.repos.users.setMembership({ userId: viewer.user.id, projectId: project, role: 'viewer', distinctId: 'someone-else' })
    body = (await stream('', viewer.keys.mcp)).json()
    t.equal(body.distinct_id, 'someone-else')
    t.equal(body.items.length, 3)
    t.ok(body.items.every((e: StreamEvent) => e.distinct_id === 'someone-else'))
    const fresh = await addMember(app, project, 'reviewer')
    body = (await stream('', fresh.keys.mcp)).json()
    t.same(body, { distinct_id: fresh.user.email, items: [], next_cursor: null, raw_events_since: '2026-10-01' })
  })

  t.test('a new event of mine shows up first', async (t) => {
    const uuid = randomUUID()
    await ingest([{ event: 'checkout', distinct_id: me, uuid }])
    const body = (await stream('limit=1')).json()
    t.equal(body.items[0].uuid, uuid)
    t.equal(body.items[0].timestamp, NOW)
  })

  t.test('bad parameters and garbage cursors are 400', async (t) => {
    const b64 = (s: string) => Buffer.from(s).toString('base64url')
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=2.5', 'limit'],
      ['before=', 'before'],
      ['before=garbage', 'before'],
      ['before=%21%21%21', 'before'],
      [`before=${b64('nonsense|x')}`, 'before'],
      [`before=${b64('2026-11-20T11:00:00.000Z|abc')}`, 'before'],
      [`before=${b64('2026-11-20T11:00:00.000Z')}`, 'before'],
      [`before=${b64('2026-11-20T11:00:00.000Z|1e400')}`, 'before'],
      [`before=${'a'.repeat(201)}`, 'before'],
      ['cursor=abc', 'cursor'],
    ]
    for (const [query, path] of cases) {
      const res = await stream(query)
      t.equal(res.statusCode, 400, query)
      t.equal(res.json().error.code, 'invalid_arguments', query)
      t.same([...new Set(res.json().error.details.map((d: { path: string }) => d.path))], [path], query)
    }
  })

  t.test('a cursor with a date outside what the database stores is a 400, not a 500', async (t) => {
    const b64 = (s: string) => Buffer.from(s).toString('base64url')
    for (const iso of ['-271821-04-20T00:00:00.000Z', '0000-01-01T00:00:00.000Z', '+275760-09-13T00:00:00.000Z', '+010000-01-01T00:00:00.000Z']) {
      const res = await stream(`before=${b64(`${iso}|1`)}`)
      t.equal(res.statusCode, 400, iso)
      t.same(res.json().error.details, [{ path: 'before', message: 'is not a valid cursor' }], iso)
    }
    // The extremes the database does store are fine (nothing is older than year 1).
    for (const [iso, count] of [['0001-01-01T00:00:00.000Z', 0], ['9999-12-31T23:59:59.999Z', 20]] as const) {
      const res = await stream(`before=${b64(`${iso}|1`)}`)
      t.equal(res.statusCode, 200, iso)
      t.equal(res.json().items.length, count, iso)
    }
  })
  t.end()
})
