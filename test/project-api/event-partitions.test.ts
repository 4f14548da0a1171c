// Raw events partitioned by month (migration 0020, plugins/event-retention.ts): partitions ahead
// at start and on demand, idempotency within a day, EVENTS_RETENTION_DAYS dropping whole months
// while every rollup-backed answer stays the same, the event stream saying how far back raw
// events go, and a time-zone change refused once raw events are gone (allowed before, across a
// month with no partition yet).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { sql } from '../../db/orm.ts'
import { rowsOf } from '../../db/client.ts'
import { addDays } from '../../core/time.ts'
import { monthsOf } from '../../db/repositories/partitions.ts'
import { bearer, buildTestApp, fixedClock, seedWorkspace, testDatabase } from '../helpers/app.ts'

const NOW = '2026-11-26T12:00:00.000Z'
const TODAY = '2026-11-26'

t.test('months of a timestamp: both ends of the widest time-zone span', async (t) => {
  t.same(monthsOf(['2026-11-15T12:00:00Z']), ['2026-11-01'])
  t.same(monthsOf(['2026-11-30T13:00:00Z']).sort(), ['2026-11-01', '2026-12-01'], 'UTC+14 is already in December')
  t.same(monthsOf(['2026-12-01T10:00:00Z']).sort(), ['2026-11-01', '2026-12-01'], 'UTC−12 is still in November')
  t.same(monthsOf(['0001-01-01T02:00:00Z']), ['0001-01-01'], 'never before year 1')
})

t.test('event partitions', async (t) => {
  const clock = fixedClock(NOW)
  const app = await buildTestApp(t, { now: clock, config: { eventPartitions: { retentionDays: 30 } } })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const names = async () => (await app.repos.partitions.list()).map((p) => p.name)
  const rawCount = async (where = sql`true`) =>
    rowsOf<{ n: number }>(await app.db.execute(sql`select count(*)::int as n from events where ${where}`))[0]!.n
  const send = async (events: object[]) => {
    const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events } })
    if (res.statusCode !== 200) throw new Error(`ingest: ${res.statusCode} ${res.body}`)
    return res.json() as { accepted: number; duplicates: number }
  }
  const get = async (path: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/${path}`, headers: bearer(ws.keys.mcp) })
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`)
    return res.json()
  }

  t.test('the start created last month to two months ahead; ensuring again creates nothing', async (t) => {
    t.same(await names(), ['events_y2026m10', 'events_y2026m11', 'events_y2026m12', 'events_y2027m01'])
    t.equal(await app.repos.partitions.ensure('2026-10-01', '2027-01-31'), 0, 'idempotent')
    t.same(await names(), ['events_y2026m10', 'events_y2026m11', 'events_y2026m12', 'events_y2027m01'])
  })

  t.test('an event in a month with no partition is stored: the batch creates its month first', async (t) => {
    t.same(await send([
      { event: 'signup', distinct_id: 'old-timer', timestamp: '2019-03-15T10:00:00Z', uuid: randomUUID() },
      { event: 'daily_use', distinct_id: 'ann', timestamp: '2026-11-26T09:00:00Z', uuid: randomUUID() },
    ]), { accepted: 2, duplicates: 0 })
    t.ok((await names()).includes('events_y2019m03'), 'the backfilled month has its partition')
    t.equal(await rawCount(sql`distinct_id = 'old-timer'`), 1, 'and the event is in it')
    t.equal(rowsOf<{ n: number }>(await app.db.execute(sql`select count(*)::int as n from events_y2019m03`))[0]!.n, 1)
  })

  t.test('idempotency within a day: the same uuid on the same day is one event', async (t) => {
    const uuid = randomUUID()
    t.same(await send([{ event: 'invite', distinct_id: 'kim', timestamp: '2026-11-26T08:00:00Z', uuid }]), { accepted: 1, duplicates: 0 })
    t.same(await send([{ event: 'invite', distinct_id: 'kim', timestamp: '2026-11-26T08:00:00Z', uuid }]), { accepted: 0, duplicates: 1 }, 'a retry')
    t.same(await send([{ event: 'invite', distinct_id: 'kim', timestamp: '2026-11-26T11:00:00Z', uuid }]), { accepted: 0, duplicates: 1 }, 're-stamped the same day')
    t.equal(await rawCount(sql`uuid = ${uuid}`), 1)
  })

  t.test('EVENTS_RETENTION_DAYS=30 over 90 days of events: old months gone, every rollup-backed answer unchanged', async (t) => {
    // 90 days, 2026-08-29 … 2026-11-26: signups and daily use, some users returning.
    const batch: object[] = []
    for (let i = 0; i < 90; i++) {
      const day = addDays(TODAY, -i)
      batch.push({ event: 'signup', distinct_id: `u${i}`, timestamp: `${day}T10:00:00Z`, uuid: randomUUID() })
      for (const u of [i, i + 1, i + 7]) batch.push({ event: 'daily_use', distinct_id: `u${u}`, timestamp: `${day}T1${u % 10}:00:00Z`, uuid: randomUUID() })
    }
    for (let i = 0; i < batch.length; i += 100) await send(batch.slice(i, i + 100))
    t.ok((await names()).includes('events_y2026m08') && (await names()).includes('events_y2026m09'), 'August and September were created on demand')

    const from = addDays(TODAY, -89)
    const reads = async () => ({
      ops: await get(`daily-ops?from=${from}&to=${TODAY}`),
      summary: await get(`daily-event-summary?from=${from}&to=${TODAY}`),
      overview: await get('overview'),
      retention: await get(`retention?period=week&from=${from}&to=${TODAY}&periods=12`),
    })
    const before = await reads()
    t.ok(before.ops.days.find((d: { date: string }) => d.date === from).registered_users > 0, 'the oldest day has numbers')
    const stream = await get('event-stream')
    t.equal(stream.raw_events_since, '2019-03-01', 'before: raw events go back to the oldest partition')

    const { dropped } = await app.eventPartitions.run()
    // Cutoff today − 31 = 2026-10-26: the months that end by then go, October (ending 11-01) stays.
    t.same(dropped, ['events_y2019m03', 'events_y2026m08', 'events_y2026m09'])
    t.same(await names(), ['events_y2026m10', 'events_y2026m11', 'events_y2026m12', 'events_y2027m01'], 'whole partitions dropped')
    t.equal(await rawCount(sql`day < '2026-10-01'`), 0, 'no raw event before October')
    t.equal(await rawCount(sql`day < ${addDays(TODAY, -61)}`), 0, 'none older than 61 days (30 + the slack day + at most a month)')
    t.ok(await rawCount(sql`day >= '2026-10-01'`) > 0, 'the rest is there')
    t.same(await reads(), before, 'daily-ops, the event summary, the overview and retention over all 90 days are unchanged')
    t.equal((await get('event-stream')).raw_events_since, '2026-10-01', 'the event stream says how far back raw events go now')
    t.same((await app.eventPartitions.run()).dropped, [], 'a second run drops nothing')
  })

  t.test('the tools API answers it too', async (t) => {
    const rest = await app.inject({ method: 'POST', url: '/v1/tools/get_event_stream', headers: bearer(ws.keys.service), payload: { project } })
    t.equal(rest.statusCode, 200, rest.body)
    t.equal(rest.json().result.raw_events_since, '2026-10-01')
  })

  t.test('a time-zone change is refused once raw events were dropped, and changes nothing', async (t) => {
    const ops = await get(`daily-ops?from=${addDays(TODAY, -89)}&to=${TODAY}`)
    const res = await app.inject({ method: 'PATCH', url: `/v1/projects/${project}`, headers: bearer(ws.keys.service), payload: { timezone: 'Asia/Tokyo', name: 'Renamed' } })
    t.equal(res.statusCode, 409)
    t.equal(res.json().error.code, 'conflict')
    t.match(res.json().error.message, /raw events before 2026-10-01 were dropped by EVENTS_RETENTION_DAYS/)
    t.same(res.json().error.details, [{ path: 'timezone', message: 'cannot change once raw events have been dropped by retention' }])
    const card = await app.inject({ method: 'GET', url: `/v1/projects/${project}`, headers: bearer(ws.keys.service) })
    t.equal(card.json().timezone, 'UTC')
    t.not(card.json().name, 'Renamed', 'no field of the write was applied')
    t.same(await get(`daily-ops?from=${addDays(TODAY, -89)}&to=${TODAY}`), ops, 'the numbers are the same')
    const other = await app.inject({ method: 'PATCH', url: `/v1/projects/${project}`, headers: bearer(ws.keys.service), payload: { name: 'Renamed' } })
    t.equal(other.statusCode, 200, 'other fields still change')
  })
})

t.test('a time-zone change before any retention moves days into a month with no partition yet', async (t) => {
  const app = await buildTestApp(t, { now: fixedClock(NOW) })
  const ws = await seedWorkspace(app)
  // 2026-10-01 02:00 UTC is 2026-09-30 in New York.
  const res = await app.inject({
    method: 'POST',
    url: '/v1/events',
    headers: bearer(ws.keys.ingest),
    payload: { events: [{ event: 'signup', distinct_id: 'ny', timestamp: '2026-10-01T02:00:00Z', uuid: randomUUID() }] },
  })
  t.equal(res.statusCode, 200, res.body)
  // Ingestion made September too (a day can be 14 hours off UTC); a database migrated by 0020 has
  // only the months of its rows' days, which is what this makes.
  await app.db.execute(sql`drop table events_y2026m09`)
  t.notOk((await app.repos.partitions.list()).some((p) => p.name === 'events_y2026m09'))
  const patch = await app.inject({ method: 'PATCH', url: `/v1/projects/${ws.project.id}`, headers: bearer(ws.keys.service), payload: { timezone: 'America/New_York' } })
  t.equal(patch.statusCode, 200, patch.body)
  const day = rowsOf<{ day: string }>(await app.db.execute(sql`select day::text as day from events where distinct_id = 'ny'`))[0]!.day
  t.equal(day, '2026-09-30', 'the event moved to its new day, in a partition made for it')
  const ops = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/daily-ops?from=2026-09-30&to=2026-10-01`, headers: bearer(ws.keys.mcp) })
  t.same(ops.json().days.map((d: { date: string; signup_events: number }) => [d.date, d.signup_events]), [['2026-09-30', 1], ['2026-10-01', 0]])
})

t.test('the hot path asks for partitions only for a month it has not seen', async (t) => {
  const statements: string[] = []
  const database = { ...await testDatabase(t), onQuery: (text: string) => statements.push(text) }
  const app = await buildTestApp(t, { now: fixedClock(NOW), database })
  const ws = await seedWorkspace(app)
  const send = async (timestamp: string) => {
    statements.length = 0
    const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events: [{ event: 'signup', distinct_id: 'x', timestamp, uuid: randomUUID() }] } })
    t.equal(res.statusCode, 200, res.body)
    return statements.filter((s) => s.includes('events_ensure_partitions')).length
  }
  t.equal(await send('2026-11-26T09:00:00Z'), 0, 'this month: made at start, no statement')
  t.equal(await send('2026-11-27T09:00:00Z'), 0, 'tomorrow: none either')
  t.equal(await send('2021-06-15T09:00:00Z'), 1, 'a month not seen: one statement')
  t.equal(await send('2021-06-16T09:00:00Z'), 0, 'seen since: none')
  t.ok(statements.some((s) => s.includes('insert into events')), 'the statements were counted')
})
