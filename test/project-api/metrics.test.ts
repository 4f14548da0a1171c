// daily-ops, daily-event-summary and overview over a small known dataset: exact unique
// counts per day, dense series, windows, and every KPI of the overview.
import t from 'tap'
import { bearer, buildTestApp, fixedClock, seedWorkspace, ingestEvents } from '../helpers/app.ts'
import { addDays, dayRange } from '../../core/time.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`
const NOW = '2026-11-20T12:00:00.000Z' // today = 2026-11-20 (UTC project)

type Counts = { registered_users: number; daily_use_users: number; active_users: number; signup_events: number; daily_use_events: number }
const zero: Counts = { registered_users: 0, daily_use_users: 0, active_users: 0, signup_events: 0, daily_use_events: 0 }

t.test('daily metrics and overview', async (t) => {
  const clock = fixedClock(NOW)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const key = ws.keys.mcp

  const get = async (path: string, k = key, p = project) => {
    const res = await app.inject({ method: 'GET', url: `${base(p)}/${path}`, headers: bearer(k) })
    return res
  }
  const json = async (path: string, k = key, p = project) => {
    const res = await get(path, k, p)
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const ingest = (events: [string, string, string][]) => ingestEvents(app, ws.keys.ingest, events)

  // The dataset (UTC days). Two batches, so unique counts must hold across batches too.
  t.same(await ingest([
    ['signup', 'A', '2026-11-20T08:00:00Z'],
    ['signup', 'A', '2026-11-20T08:05:00Z'],
    ['daily_use', 'A', '2026-11-20T09:00:00Z'],
    ['daily_use', 'A', '2026-11-20T10:00:00Z'],
    ['page_view', 'A', '2026-11-20T10:00:00Z'],
    ['page_view', 'A', '2026-11-20T10:01:00Z'],
    ['daily_use', 'A', '2026-11-18T10:00:00Z'],
    ['page_view', 'A', '2026-11-18T10:00:00Z'],
    ['signup', 'C', '2026-11-18T23:59:59.999Z'],
    ['signup', 'D', '2026-11-14T00:00:00Z'],
    ['daily_use', 'D', '2026-11-14T01:00:00Z'],
    ['daily_use', 'D', '2026-11-14T02:00:00Z'],
    ['signup', 'E', '2026-11-13T23:59:59Z'],
    ['daily_use', 'E', '2026-11-13T12:00:00Z'],
    ['signup', 'G', '2026-11-07T00:00:00Z'],
    ['signup', 'H', '2026-11-06T12:00:00Z'],
    ['daily_use', 'H', '2026-11-06T12:00:00Z'],
    ['signup', 'I', '2026-10-22T00:00:00Z'],
    ['daily_use', 'I', '2026-10-22T00:00:00Z'],
    ['signup', 'J', '2026-10-21T23:59:59Z'],
    ['daily_use', 'J', '2026-10-21T23:59:59Z'],
    ['signup', 'K', '2026-09-22T00:00:00Z'],
    ['signup', 'L', '2026-09-21T23:59:59Z'],
    ['daily_use', 'L', '2026-09-21T23:59:59Z'],
  ]), { accepted: 24, duplicates: 0 })
  t.same(await ingest([
    ['signup', 'B', '2026-11-20T11:00:00Z'],
    ['daily_use', 'A', '2026-11-20T11:30:00Z'],
    ['daily_use', 'B', '2026-11-20T11:00:00Z'],
    ['daily_use', 'C', '2026-11-20T11:59:59Z'],
    ['page_view', 'B', '2026-11-20T11:00:00Z'],
    ['signup', 'F', '2026-11-13T00:00:00Z'],
  ]), { accepted: 6, duplicates: 0 })

  const expected: Record<string, Partial<Counts>> = {
    '2026-11-20': { registered_users: 2, signup_events: 3, daily_use_users: 3, active_users: 3, daily_use_events: 5 },
    '2026-11-18': { registered_users: 1, signup_events: 1, daily_use_users: 1, active_users: 1, daily_use_events: 1 },
    '2026-11-14': { registered_users: 1, signup_events: 1, daily_use_users: 1, active_users: 1, daily_use_events: 2 },
    '2026-11-13': { registered_users: 2, signup_events: 2, daily_use_users: 1, active_users: 1, daily_use_events: 1 },
    '2026-11-07': { registered_users: 1, signup_events: 1 },
    '2026-11-06': { registered_users: 1, signup_events: 1, daily_use_users: 1, active_users: 1, daily_use_events: 1 },
    '2026-10-22': { registered_users: 1, signup_events: 1, daily_use_users: 1, active_users: 1, daily_use_events: 1 },
    '2026-10-21': { registered_users: 1, signup_events: 1, daily_use_users: 1, active_users: 1, daily_use_events: 1 },
  }
  const series = (days: number) => dayRange('2026-11-20', days).map((date) => ({ date, ...zero, ...expected[date] }))

  t.test('daily-ops: default window is 7 dense days, oldest first', async (t) => {
    const ops = await json('daily-ops')
    t.same(ops, { project, timezone: 'UTC', window: '7d', from: '2026-11-14', to: '2026-11-20', days: series(7), previous: null })
    t.same(ops.days.map((d: { date: string }) => d.date), ['2026-11-14', '2026-11-15', '2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'])
    t.same(ops.days.at(-1), { date: '2026-11-20', registered_users: 2, daily_use_users: 3, active_users: 3, signup_events: 3, daily_use_events: 5 })
    t.same(await json('daily-ops?window=7d'), ops)
  })

  t.test('daily-ops: 30 days', async (t) => {
    const ops = await json('daily-ops?window=30d')
    t.equal(ops.window, '30d')
    t.equal(ops.days.length, 30)
    t.equal(ops.days[0].date, '2026-10-22')
    t.equal(ops.days[29].date, '2026-11-20')
    t.same(ops.days, series(30))
    const sum = (f: keyof Counts) => ops.days.reduce((n: number, d: Counts) => n + d[f], 0)
    t.equal(sum('signup_events'), 10) // A×2, B, C, D, E, F, G, H, I; J, K and L fall outside
    t.equal(sum('daily_use_events'), 11) // A×4, B, C, D×2, E, H, I
  })

  t.test('daily-ops: bad windows are 400', async (t) => {
    for (const [query, path] of [['window=90d', 'window'], ['window=7D', 'window'], ['window=', 'window'], ['window=1d', 'window'], ['days=7', 'days']] as const) {
      const res = await get(`daily-ops?${query}`)
      t.equal(res.statusCode, 400, query)
      t.equal(res.json().error.code, 'invalid_arguments')
      t.same([...new Set(res.json().error.details.map((d: { path: string }) => d.path))], [path], query)
    }
    t.equal((await get('daily-event-summary?window=90d')).statusCode, 400)
  })

  t.test('daily-event-summary: per event name, count and unique users', async (t) => {
    const summary = await json('daily-event-summary')
    t.equal(summary.window, '7d')
    t.equal(summary.timezone, 'UTC')
    t.equal(summary.project, project)
    t.same(summary.days.map((d: { date: string }) => d.date), dayRange('2026-11-20', 7))
    const byDate = Object.fromEntries(summary.days.map((d: { date: string; events: unknown[] }) => [d.date, d.events]))
    t.same(byDate['2026-11-20'], [
      { event: 'daily_use', count: 5, unique_users: 3 },
      { event: 'page_view', count: 3, unique_users: 2 },
      { event: 'signup', count: 3, unique_users: 2 },
    ])
    t.same(byDate['2026-11-18'], [
      { event: 'daily_use', count: 1, unique_users: 1 },
      { event: 'page_view', count: 1, unique_users: 1 },
      { event: 'signup', count: 1, unique_users: 1 },
    ])
    t.same(byDate['2026-11-14'], [
      { event: 'daily_use', count: 2, unique_users: 1 },
      { event: 'signup', count: 1, unique_users: 1 },
    ])
    for (const d of ['2026-11-15', '2026-11-16', '2026-11-17', '2026-11-19']) t.same(byDate[d], [], `${d} is empty but present`)
    t.same(summary.totals, [
      { event: 'daily_use', count: 8 },
      { event: 'page_view', count: 4 },
      { event: 'signup', count: 5 },
    ])

    const one = await json('daily-event-summary?event=page_view')
    t.same(one.days.map((d: { events: unknown[] }) => d.events), [[], [], [], [], [{ event: 'page_view', count: 1, unique_users: 1 }], [], [{ event: 'page_view', count: 3, unique_users: 2 }]])
    t.same(one.totals, [{ event: 'page_view', count: 4 }])
    const none = await json('daily-event-summary?event=never_sent')
    t.equal(none.days.length, 7)
    t.ok(none.days.every((d: { events: unknown[] }) => d.events.length === 0))
    t.same(none.totals, [])

    const month = await json('daily-event-summary?window=30d&event=signup')
    t.equal(month.days.length, 30)
    t.same(month.totals, [{ event: 'signup', count: 10 }])
    t.same(month.days.find((d: { date: string }) => d.date === '2026-11-13').events, [{ event: 'signup', count: 2, unique_users: 2 }])
    t.equal((await get('daily-event-summary?event=')).statusCode, 400)
  })

  t.test('overview: KPIs of the known dataset', async (t) => {
    const opp = async (n: number) => {
      const res = await app.inject({
        method: 'POST',
        url: `${base(project)}/opportunities`,
        headers: bearer(key),
        payload: { contribution_type: 'partnership', key_information: `Opp ${n}`, reason: 'r', suggested_action: 'a' },
      })
      return res.json().event_id as string
    }
    const ids = [await opp(1), await opp(2), await opp(3), await opp(4), await opp(5)]
    const review = (id: string, body: object) =>
      app.inject({ method: 'PATCH', url: `${base(project)}/opportunities/${id}/review`, headers: bearer(key), payload: body })
    t.equal((await review(ids[0]!, { evaluation: 'useful', status: 'contacted' })).statusCode, 200)
    t.equal((await review(ids[1]!, { evaluation: 'not_useful' })).statusCode, 200)
    t.equal((await review(ids[2]!, { status: 'done' })).statusCode, 200)

    const o = await json('overview')
    t.same(o.project, { id: project, slug: 'demo-project', name: 'Demo project', timezone: 'UTC' })
    t.equal(o.today, '2026-11-20')
    t.equal(o.generated_at, NOW)
    // registered_users per day, summed: 7d = 11-14..11-20, previous 7d = 11-07..11-13,
    // 30d = 10-22..11-20, previous 30d = 09-22..10-21.
    t.same(o.signups, { today: 2, last_7d: 4, previous_7d: 3, change_7d: 0.3333, last_30d: 9, previous_30d: 2, change_30d: 3.5 })
    // daily_use_users per day, averaged over the period.
    t.same(o.daily_users, { today: 3, last_7d: 0.71, previous_7d: 0.14, change_7d: 4, last_30d: 0.27, previous_30d: 0.03, change_30d: 7 })
    t.equal(o.unique_users_7d, 4) // A, B, C, D
    t.equal(o.unique_users_30d, 7) // + E, H, I
    t.equal(o.stickiness, 0.0381) // (8 / 30) / 7
    t.same(o.opportunities, {
      total: 5,
      pending_review: 3,
      unevaluated: 3,
      by_status: { pending: 3, reviewing: 0, contacted: 1, adopted: 0, ignored: 0, done: 1 },
      by_evaluation: { useful: 1, not_useful: 1, none: 3 },
    })
    t.equal(o.last_event_at, '2026-11-20T11:59:59.000Z')
    t.equal((await get('overview?x=1')).statusCode, 400)
  })

  t.test('overview of an empty project', async (t) => {
    const other = await seedWorkspace(app)
    const o = await json('overview', other.keys.mcp, other.project.id)
    const flat = { today: 0, last_7d: 0, previous_7d: 0, change_7d: null, last_30d: 0, previous_30d: 0, change_30d: null }
    t.same(o.signups, flat)
    t.same(o.daily_users, flat)
    t.equal(o.unique_users_7d, 0)
    t.equal(o.unique_users_30d, 0)
    t.equal(o.stickiness, null)
    t.same(o.opportunities, {
      total: 0,
      pending_review: 0,
      unevaluated: 0,
      by_status: { pending: 0, reviewing: 0, contacted: 0, adopted: 0, ignored: 0, done: 0 },
      by_evaluation: { useful: 0, not_useful: 0, none: 0 },
    })
    t.equal(o.last_event_at, null)
    const ops = await json('daily-ops', other.keys.mcp, other.project.id)
    t.same(ops.days, dayRange('2026-11-20', 7).map((date) => ({ date, ...zero })))
  })

  t.test('the windows move with the clock', async (t) => {
    clock.set('2026-11-23T00:00:00Z')
    const ops = await json('daily-ops')
    t.same(ops.days.map((d: { date: string }) => d.date), dayRange('2026-11-23', 7))
    t.same(ops.days, dayRange('2026-11-23', 7).map((date) => ({ date, ...zero, ...expected[date] })))
    const o = await json('overview')
    t.equal(o.today, '2026-11-23')
    t.equal(o.unique_users_7d, 3) // A, B, C (D's 11-14 has left the window)
    t.equal(o.signups.last_7d, 3) // 11-17..11-23: B+A on 11-20, C on 11-18
    clock.set(NOW)
  })

  t.test('late events for past days and repeat users keep counts exact', async (t) => {
    t.same(await ingest([
      ['signup', 'A', '2026-11-18T05:00:00Z'], // A's first signup that day
      ['signup', 'C', '2026-11-18T06:00:00Z'], // C again
      ['daily_use', 'A', '2026-11-18T06:00:00Z'],
      ['daily_use', 'B', '2026-11-18T06:00:00Z'],
    ]), { accepted: 4, duplicates: 0 })
    const day = (await json('daily-ops')).days.find((d: { date: string }) => d.date === '2026-11-18')
    t.same(day, { date: '2026-11-18', registered_users: 2, daily_use_users: 2, active_users: 2, signup_events: 3, daily_use_events: 3 })
    const o = await json('overview')
    t.equal(o.unique_users_7d, 4, 'B was already counted; still A, B, C, D')
    t.equal(o.signups.last_7d, 5)
  })

  t.test('a daily_use stamped early tomorrow (allowed: < 24 h ahead) keeps the user in the 7-day uniques', async (t) => {
    t.same(await ingest([['daily_use', 'A', addDays('2026-11-20', 1) + 'T06:00:00Z']]), { accepted: 1, duplicates: 0 })
    const ops = await json('daily-ops')
    t.same(ops.days.at(-1).daily_use_users, 3, 'tomorrow is not in today’s window')
    const o = await json('overview')
    t.equal(o.unique_users_7d, 4, 'A was active today and stays counted')
    t.equal(o.unique_users_30d, 7)
  })
  t.end()
})
