// Any range, compared: `from`/`to` on daily-ops and the daily event summary read the same days as
// `window` does, agree with the events counted by hand (in UTC and across Berlin's clock changes),
// `compare` adds the period of equal length just before, bad ranges are a 400 naming the
// argument, and the project-side route, /v1/tools and MCP answer the same.
import t from 'tap'
import { eq } from '../../db/orm.ts'
import { projects } from '../../db/schema.ts'
import { bearer, buildTestApp, fixedClock, ingestEvents, seedWorkspace, writeBehind } from '../helpers/app.ts'
import { mcp, rest } from '../helpers/triage.ts'
import { addDays, dayRange, localDate } from '../../core/time.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`
type Event = [string, string, string]
interface Ops { date: string; registered_users: number; daily_use_users: number; active_users: number; signup_events: number; daily_use_events: number }
interface SummaryDay { date: string; events: { event: string; count: number; unique_users: number }[] }

/** Events over the `days` days to `last` (UTC instants), from a fixed seed: a few users, several names, any hour. */
function events(last: string, days: number, seed = 7): Event[] {
  let x = seed
  const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648
  const out: Event[] = []
  for (const day of dayRange(last, days)) {
    const n = Math.floor(next() * 9)
    for (let i = 0; i < n; i++) {
      const name = ['signup', 'daily_use', 'daily_use', 'page_view'][Math.floor(next() * 4)]!
      const user = `u${Math.floor(next() * 6)}`
      const ms = Date.parse(`${day}T00:00:00Z`) + Math.floor(next() * 86_400_000)
      out.push([name, user, new Date(ms).toISOString()])
    }
  }
  return out
}

/** What the summary should say, counted from the events themselves: per local day, per name, events and distinct users. */
function countByHand(list: Event[], timeZone: string) {
  const cells = new Map<string, Map<string, { count: number; users: Set<string> }>>()
  for (const [name, user, at] of list) {
    const day = localDate(new Date(at), timeZone)
    const names = cells.get(day) ?? cells.set(day, new Map()).get(day)!
    const cell = names.get(name) ?? names.set(name, { count: 0, users: new Set() }).get(name)!
    cell.count++
    cell.users.add(user)
  }
  const summaryDay = (date: string): SummaryDay => ({
    date,
    events: [...(cells.get(date) ?? new Map()).entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([event, c]) => ({ event, count: c.count, unique_users: c.users.size })),
  })
  const opsDay = (date: string): Ops => {
    const of = (name: string) => cells.get(date)?.get(name)
    const use = of('daily_use')?.users.size ?? 0
    return { date, registered_users: of('signup')?.users.size ?? 0, daily_use_users: use, active_users: use, signup_events: of('signup')?.count ?? 0, daily_use_events: of('daily_use')?.count ?? 0 }
  }
  const totals = (days: SummaryDay[]) => {
    const sums = new Map<string, number>()
    for (const d of days) for (const e of d.events) sums.set(e.event, (sums.get(e.event) ?? 0) + e.count)
    return [...sums].sort(([a], [b]) => (a < b ? -1 : 1)).map(([event, count]) => ({ event, count }))
  }
  return { summaryDay, opsDay, totals }
}

/** The `n` days ending with `to`. */
const span = (to: string, n: number) => [...dayRange(to, n)]

t.test('UTC: ranges, windows and comparisons agree with the events', async (t) => {
  const TODAY = '2026-11-20'
  const clock = fixedClock(`${TODAY}T12:00:00.000Z`)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const list = events(TODAY, 120).filter(([, , at]) => at <= `${TODAY}T12:00:00.000Z`)
  for (let i = 0; i < list.length; i += 500) await ingestEvents(app, ws.keys.ingest, list.slice(i, i + 500))
  const hand = countByHand(list, 'UTC')
  const get = (path: string) => app.inject({ method: 'GET', url: `${base(project)}/${path}`, headers: bearer(ws.keys.mcp) })
  const json = async (path: string) => {
    const res = await get(path)
    t.equal(res.statusCode, 200, path)
    return res.json()
  }

  t.test('from/to read exactly what window reads on the same days', async (t) => {
    for (const [window, n] of [['7d', 7], ['30d', 30]] as const) {
      const from = addDays(TODAY, 1 - n)
      for (const tool of ['daily-ops', 'daily-event-summary']) {
        const byWindow = await json(`${tool}?window=${window}`)
        const byRange = await json(`${tool}?from=${from}&to=${TODAY}`)
        t.equal(byWindow.window, window)
        t.equal(byRange.window, null, 'a range has no window')
        t.same([byWindow.from, byWindow.to], [from, TODAY], `${tool} ${window} says which days it covers`)
        t.same({ ...byRange, window }, byWindow, `${tool}: ${from}..${TODAY} = window ${window}`)
      }
    }
    const byDefault = await json('daily-ops')
    t.equal(byDefault.window, '7d', 'no arguments: the 7-day window, as before')
    t.equal(byDefault.previous, null, 'no comparison unless asked')
  })

  t.test('any range is the events counted by hand', async (t) => {
    for (const [from, to] of [['2026-08-01', '2026-08-31'], ['2026-09-15', '2026-11-20'], ['2026-11-02', '2026-11-02'], ['2026-07-23', '2026-11-19']]) {
      const days = span(to!, Math.round((Date.parse(to!) - Date.parse(from!)) / 86_400_000) + 1)
      const ops = await json(`daily-ops?from=${from}&to=${to}`)
      t.same(ops, { project, timezone: 'UTC', window: null, from, to, days: days.map(hand.opsDay), previous: null }, `daily-ops ${from}..${to}`)
      const summary = await json(`daily-event-summary?from=${from}&to=${to}`)
      const expected = days.map(hand.summaryDay)
      t.same(summary, { project, timezone: 'UTC', window: null, from, to, days: expected, totals: hand.totals(expected), previous: null }, `summary ${from}..${to}`)
    }
    const signups = await json('daily-event-summary?from=2026-09-01&to=2026-10-31&event=signup')
    const expected = span('2026-10-31', 61).map(hand.summaryDay).map((d) => ({ ...d, events: d.events.filter((e) => e.event === 'signup') }))
    t.same(signups.days, expected, '`event` narrows a range too')
    t.same(signups.totals, hand.totals(expected))
    t.ok(signups.totals[0].count > 0, 'the data has signups to count')
  })

  t.test('compare adds the period of equal length just before, in the same shape', async (t) => {
    const ops = await json('daily-ops?from=2026-10-01&to=2026-10-31&compare=true')
    t.same(ops.previous, { from: '2026-08-31', to: '2026-09-30', days: span('2026-09-30', 31).map(hand.opsDay) }, '31 days before October')
    t.same(ops.days, span('2026-10-31', 31).map(hand.opsDay), 'the period itself unchanged')
    const week = await json('daily-ops?window=7d&compare=true')
    t.equal(week.window, '7d')
    t.same([week.previous.from, week.previous.to], ['2026-11-07', '2026-11-13'])
    t.same(week.previous.days, span('2026-11-13', 7).map(hand.opsDay))
    const day = await json('daily-ops?from=2026-11-20&to=2026-11-20&compare=true')
    t.same(day.previous.days.map((d: Ops) => d.date), ['2026-11-19'], 'one day: the day before')

    const summary = await json('daily-event-summary?window=30d&compare=true')
    const before = span('2026-10-21', 30).map(hand.summaryDay)
    t.same(summary.previous, { from: '2026-09-22', to: '2026-10-21', days: before, totals: hand.totals(before) })
    const now = span(TODAY, 30).map(hand.summaryDay)
    t.same(summary.totals, hand.totals(now))
    t.notSame(summary.totals, summary.previous.totals, 'the two periods differ (a comparison that could not fail would prove nothing)')
    t.same(await json('daily-ops?compare=false'), await json('daily-ops'), 'compare=false: as without it')
    const longest = await json(`daily-ops?from=${addDays(TODAY, -399)}&to=${TODAY}&compare=true`)
    t.equal(longest.days.length, 400, '400 days is the longest range')
    t.same([longest.previous.from, longest.previous.days.length], [addDays(TODAY, -799), 400], 'and its comparison reaches 800 days back')
  })

  t.test('bad ranges: a 400 naming the argument, on both reads', async (t) => {
    const cases: [string, string, RegExp][] = [
      ['from=2026-11-01', 'to', /needs to/],
      ['to=2026-11-01', 'from', /needs from/],
      ['from=2026-11-10&to=2026-11-01', 'to', /before from/],
      [`from=${addDays(TODAY, -400)}&to=${TODAY}`, 'from', /401 days; at most 400/],
      ['from=2026-11-01&to=2026-11-21', 'to', /after today \(2026-11-20\)/],
      ['window=7d&from=2026-11-01&to=2026-11-07', 'window', /either window or from and to/],
      ['window=30d&to=2026-11-07', 'window', /either window or from and to/],
      ['from=2026-02-30&to=2026-03-01', 'from', /from/],
      ['from=2026-11-01&to=2026-11-1', 'to', /to/],
      ['from=20261101&to=2026-11-02', 'from', /from/],
      ['from=2026-11-01&to=2026-11-02&compare=yes', 'compare', /compare/],
    ]
    for (const tool of ['daily-ops', 'daily-event-summary']) {
      for (const [query, field, message] of cases) {
        const res = await get(`${tool}?${query}`)
        t.equal(res.statusCode, 400, `${tool}?${query}`)
        const { error } = res.json()
        t.equal(error.code, 'invalid_arguments')
        t.same([...new Set(error.details.map((d: { path: string }) => d.path))], [field], `${tool}?${query} names ${field}`)
        t.match(`${error.message} ${error.details.map((d: { message: string }) => d.message).join(' ')}`, message)
        const csv = await get(`${tool}?${query}&format=csv`)
        t.equal(csv.statusCode, 400, 'CSV: the same refusal, in JSON')
        t.same(csv.json(), res.json())
      }
    }
  })

  t.test('the route, /v1/tools and MCP answer the same, results and refusals', async (t) => {
    const calls: [string, string, Record<string, unknown>][] = [
      ['daily-ops', 'get_daily_ops', { from: '2026-10-01', to: '2026-10-31', compare: true }],
      ['daily-ops', 'get_daily_ops', { window: '30d', compare: true }],
      ['daily-event-summary', 'get_daily_event_summary', { from: '2026-09-01', to: '2026-11-20', compare: true, event: 'page_view' }],
      ['daily-ops', 'get_daily_ops', { from: '2026-11-01' }],
      ['daily-event-summary', 'get_daily_event_summary', { from: '2025-01-01', to: '2026-11-20' }],
      ['daily-ops', 'get_daily_ops', { from: '2026-02-30', to: '2026-03-02' }],
    ]
    for (const [path, name, args] of calls) {
      const route = await get(`${path}?${new URLSearchParams(Object.entries(args).map(([k, v]) => [k, String(v)]))}`)
      const viaRest = await rest(app, ws.keys.service, name, { project, ...args })
      const viaMcp = await mcp(app, ws.keys.mcp, name, { project, ...args })
      const label = `${name} ${JSON.stringify(args)}`
      t.equal(viaRest.status, route.statusCode, `${label}: /v1/tools status`)
      t.equal(viaMcp.status, route.statusCode, `${label}: MCP status`)
      if (route.statusCode === 200) {
        t.same(viaRest.body.result, route.json(), `${label}: /v1/tools = route`)
        t.same(viaMcp.body.result, route.json(), `${label}: MCP = route`)
      } else {
        t.same(viaRest.body, route.json(), `${label}: the same error on /v1/tools`)
        t.same(viaMcp.body, route.json(), `${label}: the same error over MCP`)
      }
    }
  })

  t.test('CSV of a range: its days; with compare, the previous period first', async (t) => {
    const csv = await get('daily-ops?from=2026-10-01&to=2026-10-31&format=csv')
    t.equal(csv.statusCode, 200)
    t.match(csv.headers['content-disposition'], new RegExp(`${project}-daily-ops-2026-10-31\\.csv`))
    const rows = csv.body.trim().split('\r\n')
    t.equal(rows.length, 32, 'a header and 31 days')
    t.equal(rows[1]!.split(',')[0], '2026-10-01')
    const d = hand.opsDay('2026-10-15')
    t.ok(rows.includes(`2026-10-15,${d.registered_users},${d.daily_use_users},${d.active_users},${d.signup_events},${d.daily_use_events}`))
    const compared = (await get('daily-ops?from=2026-10-01&to=2026-10-31&compare=true&format=csv')).body.trim().split('\r\n')
    t.same(compared.slice(1).map((r) => r.split(',')[0]), span('2026-10-31', 62), 'September and October, oldest first')
    const events = (await get('daily-event-summary?from=2026-10-01&to=2026-10-07&format=csv')).body.trim().split('\r\n').slice(1)
    t.same(events, span('2026-10-07', 7).flatMap((date) => hand.summaryDay(date).events.map((e) => `${date},${e.event},${e.count},${e.unique_users}`)))
  })
})

t.test('Europe/Berlin: ranges across the clock changes read the local days', async (t) => {
  const clock = fixedClock('2026-10-27T12:00:00Z') // Berlin 10-27 13:00 CET; 10-25 had 25 hours
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  // Before any ingestion: rollups take the day in the zone at the moment of ingestion.
  await writeBehind(app, app.db.update(projects).set({ timezone: 'Europe/Berlin' }).where(eq(projects.id, project)))
  const list = [
    ...events('2026-10-27', 45, 11),
    ...events('2026-04-02', 12, 13), // around the 23-hour 2026-03-29
    ['signup', 'edge1', '2026-10-24T21:59:59Z'], // 10-24 23:59:59 CEST
    ['signup', 'edge2', '2026-10-24T22:00:00Z'], // 10-25 00:00 CEST
    ['signup', 'edge3', '2026-10-25T22:59:59Z'], // 10-25 23:59:59 CET
    ['signup', 'edge4', '2026-10-25T23:00:00Z'], // 10-26 00:00 CET
    ['signup', 'edge5', '2026-03-28T23:00:00Z'], // 03-29 00:00 CET
    ['signup', 'edge6', '2026-03-29T21:59:59Z'], // 03-29 23:59:59 CEST
  ].filter(([, , at]) => at! <= '2026-10-27T12:00:00Z') as Event[]
  for (let i = 0; i < list.length; i += 500) await ingestEvents(app, ws.keys.ingest, list.slice(i, i + 500))
  const hand = countByHand(list, 'Europe/Berlin')
  const json = async (path: string) => {
    const res = await app.inject({ method: 'GET', url: `${base(project)}/${path}`, headers: bearer(ws.keys.mcp) })
    t.equal(res.statusCode, 200, path)
    return res.json()
  }

  for (const [window, n] of [['7d', 7], ['30d', 30]] as const) {
    for (const tool of ['daily-ops', 'daily-event-summary']) {
      const byWindow = await json(`${tool}?window=${window}`)
      const byRange = await json(`${tool}?from=${addDays('2026-10-27', 1 - n)}&to=2026-10-27`)
      t.same({ ...byRange, window }, byWindow, `${tool}: the range = window ${window} across the October change`)
    }
  }
  const october = await json('daily-ops?from=2026-10-20&to=2026-10-27&compare=true')
  t.same(october.days, span('2026-10-27', 8).map(hand.opsDay), 'October: each event on its local day')
  t.same(october.previous.days, span('2026-10-19', 8).map(hand.opsDay))
  t.ok(october.days.find((d: Ops) => d.date === '2026-10-25').registered_users >= 2, 'the 25-hour day holds both its edges')
  const march = await json('daily-event-summary?from=2026-03-25&to=2026-04-02&compare=true')
  const expected = span('2026-04-02', 9).map(hand.summaryDay)
  t.same(march.days, expected, 'March: the 23-hour day')
  t.same(march.totals, hand.totals(expected))
  t.same(march.previous.days, span('2026-03-24', 9).map(hand.summaryDay))
  t.ok(march.days.find((d: SummaryDay) => d.date === '2026-03-29').events.some((e: { event: string; unique_users: number }) => e.event === 'signup' && e.unique_users >= 2))
})
