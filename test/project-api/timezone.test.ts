// Days in the project's time zone across daylight-saving changes: Europe/Berlin on
// 2026-10-25 (25 hours: 03:00 CEST → 02:00 CET) and 2026-03-29 (23 hours: 02:00 CET → 03:00 CEST).
import t from 'tap'
import { eq } from '../../db/orm.ts'
import { bearer, buildTestApp, fixedClock, seedWorkspace, ingestEvents, writeBehind } from '../helpers/app.ts'
import { projects } from '../../db/schema.ts'
import { dayRange } from '../../core/time.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`

t.test('Europe/Berlin across daylight-saving changes', async (t) => {
  const clock = fixedClock('2026-10-27T12:00:00Z') // Berlin 2026-10-27 13:00 CET
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  // Before any ingestion: rollups take the day in the time zone of the moment of ingestion.
  await writeBehind(app, app.db.update(projects).set({ timezone: 'Europe/Berlin' }).where(eq(projects.id, project)))

  const json = async (path: string) => {
    const res = await app.inject({ method: 'GET', url: `${base(project)}/${path}`, headers: bearer(ws.keys.mcp) })
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const ingest = (events: [string, string, string][]) => ingestEvents(app, ws.keys.ingest, events)
  const byDate = (days: { date: string }[]): Record<string, any> => Object.fromEntries(days.map((d) => [d.date, d]))

  t.same(await ingest([
    ['signup', 'u1', '2026-10-24T21:59:59Z'], // 10-24 23:59:59 CEST
    ['signup', 'u2', '2026-10-24T22:00:00Z'], // 10-25 00:00:00 CEST
    ['signup', 'u3', '2026-10-25T22:59:59Z'], // 10-25 23:59:59 CET
    ['signup', 'u4', '2026-10-25T23:00:00Z'], // 10-26 00:00:00 CET
    ['daily_use', 'u5', '2026-10-25T00:30:00Z'], // 10-25 02:30 CEST (the first 02:30)
    ['daily_use', 'u5', '2026-10-25T01:30:00Z'], // 10-25 02:30 CET (the second 02:30)
    ['daily_use', 'u6', '2026-10-24T21:59:59.999Z'], // 10-24
    ['daily_use', 'u6', '2026-10-25T23:00:00.000Z'], // 10-26
    // The spring change: 2026-03-29 runs from 03-28T23:00Z to 03-29T22:00Z.
    ['signup', 's1', '2026-03-28T22:59:59Z'], // 03-28 23:59:59 CET
    ['signup', 's2', '2026-03-28T23:00:00Z'], // 03-29 00:00:00 CET
    ['signup', 's3', '2026-03-29T21:59:59Z'], // 03-29 23:59:59 CEST
    ['signup', 's4', '2026-03-29T22:00:00Z'], // 03-30 00:00:00 CEST
  ]), { accepted: 12, duplicates: 0 })

  t.test('daily-ops puts each event on its local date (October, 25-hour day)', async (t) => {
    const ops = await json('daily-ops')
    t.equal(ops.timezone, 'Europe/Berlin')
    t.same(ops.days.map((d: { date: string }) => d.date), dayRange('2026-10-27', 7))
    const days = byDate(ops.days)
    t.same(days['2026-10-24'], { date: '2026-10-24', registered_users: 1, daily_use_users: 1, active_users: 1, signup_events: 1, daily_use_events: 1 })
    t.same(days['2026-10-25'], { date: '2026-10-25', registered_users: 2, daily_use_users: 1, active_users: 1, signup_events: 2, daily_use_events: 2 })
    t.same(days['2026-10-26'], { date: '2026-10-26', registered_users: 1, daily_use_users: 1, active_users: 1, signup_events: 1, daily_use_events: 1 })
    for (const d of ['2026-10-21', '2026-10-22', '2026-10-23', '2026-10-27']) t.equal(days[d].signup_events + days[d].daily_use_events, 0, d)
  })

  t.test('daily-event-summary uses the same local dates', async (t) => {
    const summary = await json('daily-event-summary')
    const days = Object.fromEntries(summary.days.map((d: { date: string; events: unknown[] }) => [d.date, d.events]))
    t.same(days['2026-10-24'], [{ event: 'daily_use', count: 1, unique_users: 1 }, { event: 'signup', count: 1, unique_users: 1 }])
    t.same(days['2026-10-25'], [{ event: 'daily_use', count: 2, unique_users: 1 }, { event: 'signup', count: 2, unique_users: 2 }])
    t.same(days['2026-10-26'], [{ event: 'daily_use', count: 1, unique_users: 1 }, { event: 'signup', count: 1, unique_users: 1 }])
  })

  t.test('March: the 23-hour day', async (t) => {
    clock.set('2026-03-31T10:00:00Z')
    const ops = await json('daily-ops')
    t.same(ops.days.map((d: { date: string }) => d.date), dayRange('2026-03-31', 7))
    const days = byDate(ops.days)
    t.equal(days['2026-03-28'].registered_users, 1)
    t.equal(days['2026-03-29'].registered_users, 2)
    t.equal(days['2026-03-30'].registered_users, 1)
    t.equal(days['2026-03-31'].registered_users, 0)
    clock.set('2026-10-27T12:00:00Z')
  })

  t.test('"today" flips at local midnight, not UTC midnight', async (t) => {
    const cases: [string, string][] = [
      ['2026-10-24T21:59:59Z', '2026-10-24'],
      ['2026-10-24T22:00:00Z', '2026-10-25'],
      ['2026-10-25T22:59:59Z', '2026-10-25'],
      ['2026-10-25T23:00:00Z', '2026-10-26'],
      ['2026-03-28T22:59:59Z', '2026-03-28'],
      ['2026-03-28T23:00:00Z', '2026-03-29'],
      ['2026-03-29T21:59:59Z', '2026-03-29'],
      ['2026-03-29T22:00:00Z', '2026-03-30'],
    ]
    for (const [now, today] of cases) {
      clock.set(now)
      const ops = await json('daily-ops')
      t.equal(ops.days.at(-1).date, today, `daily-ops at ${now}`)
      t.equal(ops.days.length, 7)
      t.equal((await json('overview')).today, today, `overview at ${now}`)
      const month = await json('daily-event-summary?window=30d')
      t.equal(month.days.at(-1).date, today)
      t.equal(month.days.length, 30)
    }
    clock.set('2026-10-25T22:59:59Z') // still 10-25: its counts are "today"
    const o = await json('overview')
    t.equal(o.signups.today, 2)
    t.equal(o.daily_users.today, 1)
    clock.set('2026-10-27T12:00:00Z')
  })

  t.test('the overview counts the local 7 days', async (t) => {
    const o = await json('overview')
    t.equal(o.project.timezone, 'Europe/Berlin')
    t.equal(o.today, '2026-10-27')
    t.equal(o.signups.last_7d, 4) // 10-21..10-27: u1, u2, u3, u4
    t.equal(o.signups.previous_7d, 0)
    t.equal(o.unique_users_7d, 2) // u5, u6
    t.equal(o.unique_users_30d, 2)
    t.equal(o.last_event_at, '2026-10-25T23:00:00.000Z')
  })
  t.end()
})
