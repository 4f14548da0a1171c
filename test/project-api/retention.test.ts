// get_retention (issue 29) against a naive count over the raw events: random users and events from
// a seeded generator, ingested through POST /v1/events in several batches (late events that move a
// user's first day earlier, days far apart, events a few hours ahead), then a time-zone change that
// rebuilds the rollups; day and week periods, several start/return pairs (one the same event),
// window and from/to ranges with their previous periods. Then REST = /v1/tools = MCP (both eras),
// and bad input giving clear 400s.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { bearer, buildTestApp, fixedClock, PUBLIC_URL, seedWorkspace, addMember } from '../helpers/app.ts'
import { rowsOf } from '../../db/client.ts'
import { sql } from '../../db/orm.ts'
import { addDays, localDate } from '../../core/time.ts'

const NOW = '2026-11-20T15:00:00.000Z'
const DAY = 86_400_000
const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }

/** mulberry32: the same events on every run. */
function prng(seed: number) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = a
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

interface Ev { event: string; distinct_id: string; timestamp: string; uuid: string }
interface Cohort { cohort: string; users: number; complete: number; returned: (number | null)[]; fractions: (number | null)[] }
interface Section { from: string; to: string; cohorts: Cohort[]; overall: { users: number; base: number[]; returned: (number | null)[]; fractions: (number | null)[] } }
type Answer = Section & { today: string; period: 'day' | 'week'; periods: number; start_event: string; return_event: string; timezone: string; previous?: Section }

const round = (x: number) => Math.round(x * 10_000) / 10_000
const mondayOf = (day: string) => addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7))

/**
 * The events: 90 users, most signing up in the last 150 days, some ~300 days ago; daily_use and
 * purchase on days around and long after their signup (some before it, some a few hours ahead of
 * now); a third of the users sign up twice, and their earlier signup is held back to the last
 * batches (it moves their first day earlier). Returns the batches in sending order.
 */
function generate(seed: number): { early: Ev[][]; late: Ev[][]; movedUsers: number } {
  const random = prng(seed)
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1))
  const now = Date.parse(NOW)
  const at = (ms: number) => new Date(Math.min(ms, now + 3 * 3_600_000)).toISOString() // at most 3 h ahead
  const early: Ev[] = []
  const late: Ev[] = []
  let movedUsers = 0
  for (let u = 0; u < 90; u++) {
    const user = `user-${u}`
    const far = random() < 0.12
    const signup = now - (far ? int(260, 340) : int(0, 150)) * DAY - int(0, DAY - 1)
    const ev = (event: string, ms: number): Ev => ({ event, distinct_id: user, timestamp: at(ms), uuid: randomUUID() })
    if (random() < 0.33) {
      // The later signup first; the earlier one arrives late.
      early.push(ev('signup', signup + int(1, 20) * DAY))
      late.push(ev('signup', signup))
      movedUsers++
    } else {
      early.push(ev('signup', signup))
    }
    for (let i = int(0, 25); i > 0; i--) {
      const offset = random() < 0.1 ? int(-4, -1) : random() < 0.1 ? int(60, 240) : int(0, 45)
      ;(random() < 0.2 ? late : early).push(ev('daily_use', signup + offset * DAY + int(0, DAY - 1)))
    }
    for (let i = int(0, 4); i > 0; i--) (random() < 0.3 ? late : early).push(ev('purchase', signup + int(0, 30) * DAY + int(0, DAY - 1)))
  }
  const shuffle = (list: Ev[]) => {
    for (let i = list.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1))
      ;[list[i], list[j]] = [list[j]!, list[i]!]
    }
    return list
  }
  const chunks = (list: Ev[], n: number) => Array.from({ length: n }, (_, i) => list.filter((_, j) => j % n === i))
  return { early: chunks(shuffle(early), 3), late: chunks(shuffle(late), 2), movedUsers }
}

t.test('retention equals a naive count over the raw events', async (t) => {
  const clock = fixedClock(NOW)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const setZone = async (timezone: string) => {
    const res = await app.inject({ method: 'PATCH', url: `/v1/projects/${project}`, headers: bearer(ws.keys.service), payload: { timezone } })
    t.equal(res.statusCode, 200, `time zone ${timezone}`)
  }
  await setZone('America/Los_Angeles')
  const send = async (batch: Ev[]) => {
    const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events: batch } })
    t.equal(res.statusCode, 200, res.body)
    t.equal(res.json().accepted, batch.length)
  }
  const retention = async (query: Record<string, string | number | boolean>): Promise<Answer> => {
    const qs = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))
    const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/retention?${qs}`, headers: bearer(ws.keys.mcp) })
    if (res.statusCode !== 200) throw new Error(`${qs}: ${res.statusCode} ${res.body}`)
    return res.json()
  }

  /** The naive count: first days and return days from the raw events' instants, in the project's zone now. */
  async function naive(start: string, ret: string, unit: 'day' | 'week', from: string, to: string, periods: number) {
    const step = unit === 'day' ? 1 : 7
    const rows = rowsOf<{ cohort: string; k: number; n: number }>(await app.db.execute(sql`
      with zone as (select timezone from projects where id = ${project}),
      local as (
        select e.event, e.distinct_id, (e.occurred_at at time zone zone.timezone)::date as day
        from events e, zone where e.project_id = ${project}
      ),
      firsts as (select distinct_id, min(day) as first_day from local where event = ${start} group by distinct_id),
      cohort as (
        select distinct_id, first_day,
               case when ${unit} = 'week' then date_trunc('week', first_day)::date else first_day end as cohort
        from firsts where first_day between ${from}::date and ${to}::date
      )
      select cohort::text as cohort, -1 as k, count(*)::int as n from cohort group by cohort
      union all
      select c.cohort::text, ((l.day - c.cohort) / ${step}::int)::int as k, count(distinct l.distinct_id)::int as n
      from cohort c join local l on l.distinct_id = c.distinct_id and l.event = ${ret}
      where l.day >= c.first_day
        and l.day < c.cohort + ${step * (periods + 1)}::int
      group by 1, 2`))
    const users = new Map<string, number>()
    const returned = new Map<string, number>()
    for (const r of rows) {
      if (r.k === -1) users.set(r.cohort, r.n)
      else returned.set(`${r.cohort}/${r.k}`, r.n)
    }
    return { users, returned }
  }

  /** One section of an answer (its cohorts and overall row) against the naive count. */
  async function check(t: Test, label: string, a: Answer, s: Section, expectFrom: string, expectTo: string) {
    const unit = a.period
    const step = unit === 'day' ? 1 : 7
    t.equal(s.from, expectFrom, `${label}: from`)
    t.equal(s.to, expectTo, `${label}: to`)
    const expected = await naive(a.start_event, a.return_event, unit, s.from, s.to, a.periods)
    const days: string[] = []
    for (let c = s.from; c <= s.to; c = addDays(c, step)) days.push(c)
    t.strictSame(s.cohorts.map((c) => c.cohort), days, `${label}: one cohort per ${unit}, oldest first`)
    let mismatches = 0
    const base = new Array<number>(a.periods + 1).fill(0)
    const sums = new Array<number | null>(a.periods + 1).fill(null)
    for (const c of s.cohorts) {
      const users = expected.users.get(c.cohort) ?? 0
      // Period k is complete once its last day is before today.
      let complete = 0
      while (complete <= a.periods && addDays(c.cohort, step * complete + step - 1) < a.today) complete++
      const returned = Array.from({ length: a.periods + 1 }, (_, k) => (k < complete ? expected.returned.get(`${c.cohort}/${k}`) ?? 0 : null))
      const fractions = returned.map((n) => (n === null || users === 0 ? null : round(n / users)))
      if (c.users !== users || c.complete !== complete || JSON.stringify(c.returned) !== JSON.stringify(returned) || JSON.stringify(c.fractions) !== JSON.stringify(fractions)) {
        mismatches++
        t.fail(`${label} cohort ${c.cohort}`, { found: c, wanted: { users, complete, returned, fractions } })
      }
      returned.forEach((n, k) => {
        if (n === null) return
        base[k] = base[k]! + users
        sums[k] = (sums[k] ?? 0) + n
      })
    }
    t.equal(mismatches, 0, `${label}: every cohort as the naive count has it`)
    t.strictSame(s.overall, {
      users: s.cohorts.reduce((x, c) => x + c.users, 0),
      base,
      returned: sums,
      fractions: sums.map((n, k) => (n === null || base[k] === 0 ? null : round(n / base[k]!))),
    }, `${label}: the overall row, users-weighted over the complete periods`)
    return { users: s.overall.users, returned: s.cohorts.reduce((x, c) => x + c.returned.reduce<number>((y, n) => y + (n ?? 0), 0), 0) }
  }

  const pairs = [['signup', 'daily_use'], ['daily_use', 'daily_use'], ['signup', 'purchase']] as const
  async function checkAll(t: Test, label: string) {
    const today = localDate(clock(), (await app.repos.projects.find(project))!.timezone)
    const cases: { query: Record<string, string | number | boolean>; from: string; to: string; week?: boolean }[] = [
      { query: {}, from: addDays(today, -6), to: today },
      { query: { periods: 30, from: addDays(today, -119), to: today, compare: true }, from: addDays(today, -119), to: today },
      { query: { period: 'week', window: '30d', compare: true }, from: addDays(today, -29), to: today, week: true },
      { query: { period: 'week', periods: 26, from: addDays(today, -399), to: addDays(today, -140) }, from: addDays(today, -399), to: addDays(today, -140), week: true },
      { query: { period: 'day', periods: 90, from: addDays(today, -340), to: addDays(today, -250) }, from: addDays(today, -340), to: addDays(today, -250) },
    ]
    let seen = { users: 0, returned: 0 }
    for (const [start, ret] of pairs) {
      for (const c of cases) {
        const a = await retention({ ...c.query, start_event: start, return_event: ret })
        const name = `${label} ${start}→${ret} ${JSON.stringify(c.query)}`
        t.equal(a.today, today, `${name}: today`)
        const [from, to] = c.week ? [mondayOf(c.from), addDays(mondayOf(c.to), 6)] : [c.from, c.to]
        const got = await check(t, name, a, a, from, to)
        seen = { users: seen.users + got.users, returned: seen.returned + got.returned }
        if (c.query.compare) {
          const length = Math.round((Date.parse(to) - Date.parse(from)) / DAY) + 1
          t.ok(a.previous, `${name}: the previous period`)
          await check(t, `${name} (previous)`, a, a.previous!, addDays(from, -length), addDays(from, -1))
        } else {
          t.notOk('previous' in a, `${name}: no previous period without compare`)
        }
      }
    }
    // The comparison means something only if there is something to compare.
    t.ok(seen.users > 50 && seen.returned > 50, `${label}: cohorts with users (${seen.users}) and returns (${seen.returned})`)
  }

  const { early, late, movedUsers } = generate(29)
  t.ok(movedUsers > 10, `${movedUsers} users whose first signup arrives late`)
  for (const batch of early) await send(batch)
  await t.test('after the first batches', (t) => checkAll(t, 'first'))

  const before = rowsOf<{ n: number }>(await app.db.execute(sql`select count(distinct distinct_id)::int as n from daily_event_users where project_id = ${project} and event = 'signup'`))[0]!.n
  const firstsBefore = new Map(rowsOf<{ distinct_id: string; first_day: string }>(await app.db.execute(sql`
    select distinct_id, min(day)::text as first_day from daily_event_users where project_id = ${project} and event = 'signup' group by distinct_id`)).map((r) => [r.distinct_id, r.first_day]))
  for (const batch of late) await send(batch)
  const moved = rowsOf<{ distinct_id: string; first_day: string }>(await app.db.execute(sql`
    select distinct_id, min(day)::text as first_day from daily_event_users where project_id = ${project} and event = 'signup' group by distinct_id`)).filter((r) => r.first_day < firstsBefore.get(r.distinct_id)!)
  t.equal(moved.length, movedUsers, 'the late signups moved those users\' first days earlier')
  t.equal(firstsBefore.size, before)
  await t.test('after late events moved first days earlier', (t) => checkAll(t, 'late'))

  await setZone('Asia/Kolkata')
  await t.test('after a time-zone change (rollups rebuilt)', (t) => checkAll(t, 'Kolkata'))

  clock.set('2026-11-23T20:00:00.000Z') // a Tuesday in Kolkata: more periods complete, a new week begun
  await t.test('three days on', (t) => checkAll(t, 'later'))
})

t.test('REST, /v1/tools and MCP in both eras answer the same; bad input is a clear 400 on each', async (t) => {
  const app = await buildTestApp(t, { now: fixedClock(NOW) })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const rows: [string, string, string][] = [
    ['signup', 'a', '2026-11-10T10:00:00Z'], ['daily_use', 'a', '2026-11-11T10:00:00Z'], ['daily_use', 'a', '2026-11-17T10:00:00Z'],
    ['signup', 'b', '2026-11-10T12:00:00Z'], ['daily_use', 'b', '2026-11-10T13:00:00Z'],
    ['signup', 'c', '2026-11-16T09:00:00Z'], ['daily_use', 'c', '2026-11-18T09:00:00Z'],
  ]
  const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events: rows.map(([event, distinct_id, timestamp]) => ({ event, distinct_id, timestamp })) } })
  t.equal(res.statusCode, 200)

  const rest = async (query: string) => {
    const r = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/retention?${query}`, headers: bearer(ws.keys.mcp) })
    return { status: r.statusCode, body: r.json() }
  }
  const tool = async (args: object) => {
    const r = await app.inject({ method: 'POST', url: '/v1/tools/get_retention', headers: bearer(ws.keys.service), payload: { project, ...args } })
    return { status: r.statusCode, body: r.json() }
  }
  const mcp = async (era: '2025-11-25' | '2026-07-28', args: object) => {
    const modern = era === '2026-07-28'
    const r = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        host: new URL(PUBLIC_URL).host,
        ...bearer(ws.keys.service),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': era,
        ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'get_retention' } : {}),
      },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_retention', arguments: { project, ...args }, ...(modern ? { _meta: envelope } : {}) } },
    })
    const text = r.body.startsWith('{') ? r.body : /^data: (.*)$/m.exec(r.body)![1]!
    const { result } = JSON.parse(text) as { result: { isError?: boolean; content: { text: string }[]; structuredContent?: unknown } }
    return result.isError ? { error: JSON.parse(result.content[0]!.text) } : { result: result.structuredContent }
  }

  t.test('the same answer on every surface', async (t) => {
    const calls: [string, object][] = [
      ['', {}],
      ['period=week&periods=2&window=30d&compare=true', { period: 'week', periods: 2, window: '30d', compare: true }],
      ['start_event=daily_use&return_event=daily_use&from=2026-11-09&to=2026-11-19&periods=10', { start_event: 'daily_use', return_event: 'daily_use', from: '2026-11-09', to: '2026-11-19', periods: 10 }],
    ]
    for (const [query, args] of calls) {
      const r = await rest(query)
      t.equal(r.status, 200, query)
      t.strictSame((await tool(args)).body, { result: r.body }, `/v1/tools = REST: ${query}`)
      for (const era of ['2025-11-25', '2026-07-28'] as const) t.strictSame(await mcp(era, args), { result: r.body }, `MCP ${era} = REST: ${query}`)
    }
    // A small case by hand: 2026-11-10 has a (back on day 1 and day 7) and b (day 0 only); 11-16 has c (day 2).
    const day = (await rest('from=2026-11-10&to=2026-11-16&periods=7')).body
    t.equal(day.today, '2026-11-20')
    const c10 = day.cohorts.find((c: Cohort) => c.cohort === '2026-11-10')
    t.strictSame(c10, { cohort: '2026-11-10', users: 2, complete: 8, returned: [1, 1, 0, 0, 0, 0, 0, 1], fractions: [0.5, 0.5, 0, 0, 0, 0, 0, 0.5] })
    const c16 = day.cohorts.find((c: Cohort) => c.cohort === '2026-11-16')
    t.strictSame(c16, { cohort: '2026-11-16', users: 1, complete: 4, returned: [0, 0, 1, 0, null, null, null, null], fractions: [0, 0, 1, 0, null, null, null, null] },
      'periods that end today or later are null, not 0')
    t.strictSame(day.overall.base, [3, 3, 3, 3, 2, 2, 2, 2])
    t.strictSame(day.overall.returned, [1, 1, 1, 0, 0, 0, 0, 1])
    const week = (await rest('period=week&from=2026-11-10&to=2026-11-16&periods=1')).body
    t.strictSame(week.cohorts, [
      { cohort: '2026-11-09', users: 2, complete: 1, returned: [2, null], fractions: [1, null] },
      { cohort: '2026-11-16', users: 1, complete: 0, returned: [null, null], fractions: [null, null] },
    ], 'weeks from Monday; the week of today is not complete')
    t.equal(week.from, '2026-11-09')
    t.equal(week.to, '2026-11-22')
    const viewer = await addMember(app, project, 'viewer')
    const v = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/retention`, headers: bearer(viewer.keys.mcp) })
    t.equal(v.statusCode, 200, 'a viewer reads it')
  })

  t.test('bad input: a 400 naming the argument, the same on every surface', async (t) => {
    const cases: [string, object, string, RegExp?][] = [
      ['period=month', { period: 'month' }, 'period'],
      ['periods=0', { periods: 0 }, 'periods'],
      ['periods=91', { periods: 91 }, 'periods'],
      ['periods=2.5', { periods: 2.5 }, 'periods'],
      ['period=week&periods=27', { period: 'week', periods: 27 }, 'periods', /at most 26/],
      ['start_event=', { start_event: '' }, 'start_event'],
      ['from=2026-11-01', { from: '2026-11-01' }, 'to', /needs to/],
      ['to=2026-11-01', { to: '2026-11-01' }, 'from'],
      ['from=2026-11-10&to=2026-11-01', { from: '2026-11-10', to: '2026-11-01' }, 'to', /before from/],
      ['from=2026-11-01&to=2026-11-21', { from: '2026-11-01', to: '2026-11-21' }, 'to', /after today/],
      ['from=2025-01-01&to=2026-11-01', { from: '2025-01-01', to: '2026-11-01' }, 'from', /at most 400/],
      ['from=2026-02-30&to=2026-03-02', { from: '2026-02-30', to: '2026-03-02' }, 'from', /from: must match format "date"/],
      ['window=7d&from=2026-11-01&to=2026-11-02', { window: '7d', from: '2026-11-01', to: '2026-11-02' }, 'window'],
      ['window=90d', { window: '90d' }, 'window'],
      ['cohort=2026-11-01', { cohort: '2026-11-01' }, 'cohort'],
    ]
    for (const [query, args, path, message] of cases) {
      const r = await rest(query)
      t.equal(r.status, 400, `${query}: 400`)
      t.equal(r.body.error?.code, 'invalid_arguments', query)
      t.ok(r.body.error?.details?.some((d: { path: string }) => d.path === path), `${query}: names ${path}: ${JSON.stringify(r.body.error?.details)}`)
      if (message) t.match(r.body.error.message, message, `${query}: says why`)
      t.strictSame((await tool(args)).body, r.body, `${query}: /v1/tools says the same`)
      t.strictSame(await mcp('2026-07-28', args), { error: r.body }, `${query}: MCP says the same`)
    }
  })
  t.end()
})
