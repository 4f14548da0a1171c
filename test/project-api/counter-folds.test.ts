// Folding finished days' counter shards into one row a day (issue 31; fold_counter_shards,
// migration 0021): batches sent concurrently (on PostgreSQL several connections, so several
// shards; on PGlite one connection, one shard: there this checks exactness only) over past days
// and today, with folds running while they do. After every round the rollups and the metrics
// reads equal a naive count of the raw events; after the last fold every past day is one row per
// (day, event) and today's rows are left alone; a time-zone change rebuilds over folded rows;
// the timer folds at start.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { bearer, buildTestApp, fixedClock, seedWorkspace, testDatabase } from '../helpers/app.ts'
import { rowsOf } from '../../db/client.ts'
import { sql } from '../../db/orm.ts'
import { FOLDED_SHARD } from '../../db/schema.ts'
import { addDays, dayRange } from '../../core/time.ts'
import type { FastifyInstance } from 'fastify'

const NOW = '2026-11-20T12:00:00.000Z' // today = 2026-11-20 in UTC
const TODAY = '2026-11-20'
const onPostgres = !!process.env.DATABASE_URL && process.env.DATABASE_URL !== 'memory://'

const query = async <T>(app: FastifyInstance, q: ReturnType<typeof sql>) => rowsOf<T>(await app.db.execute(q))

/** Every read over [from, to] against a count of the raw events (and of user_activity). */
async function compareReads(t: Test, app: FastifyInstance, project: string, key: string, label: string) {
  const get = async (path: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/${path}`, headers: bearer(key) })
    if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const [{ today }] = await query<{ today: string }>(app, sql`select (${NOW}::timestamptz at time zone timezone)::date::text as today from projects where id = ${project}`) as [{ today: string }]
  const from = addDays(today, -13)
  const naive = await query<{ day: string; event: string; n: number; users: number }>(app, sql`
    select day::text, event, count(*)::int as n, count(distinct distinct_id)::int as users
    from events where project_id = ${project} and day >= ${from}::date and day <= ${today}::date group by 1, 2 order by 1, 2`)
  const at = (day: string, event: string) => naive.find((r) => r.day === day && r.event === event)

  const summary = await get(`daily-event-summary?from=${from}&to=${today}`)
  const summarized = (summary.days as { date: string; events: { event: string; count: number; unique_users: number }[] }[])
    .flatMap((d) => d.events.map((e) => ({ day: d.date, event: e.event, n: e.count, users: e.unique_users })))
    .sort((a, b) => (a.day + a.event < b.day + b.event ? -1 : 1))
  t.same(summarized, naive, `${label}: the event summary is the raw count`)

  const ops = await get(`daily-ops?from=${from}&to=${today}`)
  t.same(ops.days, dayRange(today, 14).map((date) => ({
    date,
    registered_users: at(date, 'signup')?.users ?? 0,
    daily_use_users: at(date, 'daily_use')?.users ?? 0,
    active_users: at(date, 'daily_use')?.users ?? 0,
    signup_events: at(date, 'signup')?.n ?? 0,
    daily_use_events: at(date, 'daily_use')?.n ?? 0,
  })), `${label}: daily-ops is the raw count`)

  const overview = await get('overview')
  const [users] = await query<{ u7: number; u30: number; last: string }>(app, sql`
    select count(distinct distinct_id) filter (where event = 'daily_use' and day >= ${addDays(today, -6)}::date)::int as u7,
           count(distinct distinct_id) filter (where event = 'daily_use' and day >= ${addDays(today, -29)}::date)::int as u30
    from events where project_id = ${project}`)
  t.same([overview.unique_users_7d, overview.unique_users_30d, overview.signups.today], [users!.u7, users!.u30, at(today, 'signup')?.users ?? 0],
    `${label}: the overview's unique users and today's signups are the raw count`)

  // user_activity_days per day against user_activity (itself held to the events by ingestion-exactness).
  const [days] = await query<{ differing: number }>(app, sql`
    select count(*)::int as differing from (
      (select day, sum(users)::int from user_activity_days where project_id = ${project} group by 1 having sum(users) <> 0
       except select last_active_day, count(*)::int from user_activity where project_id = ${project} group by 1)
      union all
      (select last_active_day, count(*)::int from user_activity where project_id = ${project} group by 1
       except select day, sum(users)::int from user_activity_days where project_id = ${project} group by 1 having sum(users) <> 0)) d`)
  t.equal(days!.differing, 0, `${label}: user_activity_days sums to the users' last active days`)
}

/** Rows per (day, event) of daily_event_counts and per day of user_activity_days, before `today` and on it. */
interface Shape { past_counts_max: number; past_counts_unfolded: number; past_days_max: number; today_folded: number; live_shards: number }
async function rowShape(app: FastifyInstance, project: string, today: string): Promise<Shape> {
  const [r] = await query<Shape>(app, sql`
    select
      (select coalesce(max(n), 0) from (select count(*)::int as n from daily_event_counts
         where project_id = ${project} and day < ${today}::date group by day, event) c)::int as past_counts_max,
      (select count(*) from daily_event_counts where project_id = ${project} and day < ${today}::date and shard <> ${FOLDED_SHARD})::int as past_counts_unfolded,
      (select coalesce(max(n), 0) from (select count(*)::int as n from user_activity_days
         where project_id = ${project} and day < ${today}::date group by day) u)::int as past_days_max,
      (select count(*) from daily_event_counts where project_id = ${project} and day = ${today}::date and shard = ${FOLDED_SHARD})::int as today_folded,
      (select count(distinct shard) from daily_event_counts where project_id = ${project} and shard <> ${FOLDED_SHARD})::int as live_shards`)
  return r!
}

t.test('folds are exact while concurrent ingestion runs, and leave one row per past day', async (t) => {
  const clock = fixedClock(NOW)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const post = (events: unknown) => app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events } })

  // A small deterministic generator: the same batches on every run.
  let seed = 31
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  const names = ['daily_use', 'daily_use', 'signup', 'page_view']
  const batch = (n: number) => Array.from({ length: n }, () => {
    const day = 8 + Math.floor(rand() * 13) // 2026-11-08 … 2026-11-20 (today)
    return {
      event: names[Math.floor(rand() * names.length)]!,
      distinct_id: `u${Math.floor(rand() * 40)}`,
      timestamp: `2026-11-${String(day).padStart(2, '0')}T${String(Math.floor(rand() * 12)).padStart(2, '0')}:15:00Z`,
      uuid: randomUUID(),
    }
  })

  t.equal(await app.repos.events.foldShards(new Date(NOW)), 0, 'nothing to fold on an empty project')
  // A first round without folds: on PostgreSQL the counters spread over several shards.
  for (const r of await Promise.all(Array.from({ length: 8 }, () => post(batch(40))))) t.equal(r.statusCode, 200)
  const spread = await rowShape(app, project, TODAY)
  if (onPostgres) t.ok(spread.live_shards > 1, `concurrent batches wrote ${spread.live_shards} shards`)
  t.ok(spread.past_counts_unfolded > 0, 'past days have unfolded rows')
  await compareReads(t, app, project, ws.keys.mcp, 'before any fold')

  // Rounds of concurrent batches with folds running among them (late events keep arriving for past days).
  let folded = 0
  for (let round = 0; round < 5; round++) {
    const [results, ...folds] = await Promise.all([
      Promise.all(Array.from({ length: 8 }, () => post(batch(30)))),
      app.repos.events.foldShards(new Date(NOW)),
      app.repos.events.foldShards(new Date(NOW)),
    ])
    t.same(results.map((r) => r.statusCode), Array(8).fill(200), `round ${round}: every batch accepted`)
    folded += folds[0]! + folds[1]!
    await compareReads(t, app, project, ws.keys.mcp, `round ${round}`)
  }
  t.ok(folded > 0, `the folds among the batches moved rows (${folded})`)

  t.ok(await app.repos.events.foldShards(new Date(NOW)) > 0, 'a fold after the last batches moves what was left')
  const shape = await rowShape(app, project, TODAY)
  t.same([shape.past_counts_max, shape.past_counts_unfolded, shape.past_days_max], [1, 0, 1],
    'every past day is one row per (day, event) in daily_event_counts and one row in user_activity_days')
  t.equal(shape.today_folded, 0, "today's rows are not folded")
  t.ok(shape.live_shards >= 1, "today's shard rows stay where ingestion writes them")
  await compareReads(t, app, project, ws.keys.mcp, 'after the last fold')
  t.equal(await app.repos.events.foldShards(new Date(NOW)), 0, 'a second fold finds nothing to do')

  t.test('a day ends in the project\'s own time zone: Los Angeles is still on the 19th at 05:00 UTC', async (t) => {
    const other = await seedWorkspace(app)
    await app.repos.projects.update(other.project.id, { timezone: 'America/Los_Angeles' }, new Date(NOW))
    const events = (day: string) => [{ event: 'daily_use', distinct_id: 'ann', timestamp: `${day}T20:00:00Z`, uuid: randomUUID() }]
    for (const day of ['2026-11-18', '2026-11-19']) {
      const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(other.keys.ingest), payload: { events: events(day) } })
      t.equal(res.statusCode, 200)
    }
    await app.repos.events.foldShards(new Date('2026-11-20T05:00:00Z')) // 21:00 on the 19th in Los Angeles
    const shards = await query<{ day: string; folded: boolean }>(app, sql`
      select day::text, bool_and(shard = ${FOLDED_SHARD}) as folded from daily_event_counts where project_id = ${other.project.id} group by 1 order by 1`)
    t.same(shards, [{ day: '2026-11-18', folded: true }, { day: '2026-11-19', folded: false }])
  })

  t.test('a time-zone change rebuilds the rollups over folded rows', async (t) => {
    const result = await app.repos.projects.update(project, { timezone: 'Asia/Tokyo' }, new Date(NOW))
    t.ok(result?.ok)
    await compareReads(t, app, project, ws.keys.mcp, 'in Tokyo')
    await app.repos.events.foldShards(new Date(NOW))
    const shape = await rowShape(app, project, '2026-11-20')
    t.same([shape.past_counts_max, shape.past_counts_unfolded], [1, 0], 'folded again in the new zone')
    await compareReads(t, app, project, ws.keys.mcp, 'in Tokyo, folded')
  })
})

t.test('the timer folds at start', async (t) => {
  const database = await testDatabase(t)
  const first = await buildTestApp(t, { database, now: fixedClock(NOW) })
  const ws = await seedWorkspace(first)
  const events = [{ event: 'signup', distinct_id: 'ann', timestamp: '2026-11-18T10:00:00Z', uuid: randomUUID() }]
  const res = await first.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events } })
  t.equal(res.statusCode, 200)
  t.equal((await rowShape(first, ws.project.id, TODAY)).past_counts_unfolded, 1, 'one unfolded row before the start')
  await first.close()

  const app = await buildTestApp(t, { database, now: fixedClock(NOW), config: { counterFolds: { intervalMs: 3_600_000 } } })
  await app.ready()
  // The fold at start is not awaited by the start: wait for it (no timing is asserted).
  for (let i = 0; i < 500 && (await rowShape(app, ws.project.id, TODAY)).past_counts_unfolded > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.equal((await rowShape(app, ws.project.id, TODAY)).past_counts_unfolded, 0, 'folded at start')
})
