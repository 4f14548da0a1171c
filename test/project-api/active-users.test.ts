// The overview's unique_users_7d / unique_users_30d come from the per-day rollup
// user_activity_days (migration 0009), kept by triggers on user_activity. These tests hold them to
// a naive count of the raw events after every kind of change that moves a user's last active day:
// new users, users active on several days, re-ingestion of the same uuids, events stamped ahead of
// today, a time-zone change of the project, concurrent batches, and the deletion of a project.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { sql } from '../../db/orm.ts'
import { rowsOf } from '../../db/client.ts'
import { addDays } from '../../core/time.ts'
import { bearer, buildTestApp, fixedClock, seedWorkspace, addProject } from '../helpers/app.ts'
import type { FastifyInstance } from 'fastify'

type Event = { event: string; distinct_id: string; timestamp: string; uuid: string }

const ev = (event: string, distinct_id: string, timestamp: string, uuid = randomUUID()): Event => ({ event, distinct_id, timestamp, uuid })

async function ingest(app: FastifyInstance, key: string, events: Event[]) {
  const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(key), payload: { events } })
  if (res.statusCode !== 200) throw new Error(`ingest: ${res.statusCode} ${res.body}`)
  return res.json() as { accepted: number; duplicates: number }
}

/** The answer without rollups: distinct users with a daily_use on `from` or later (their local day). */
async function naive(app: FastifyInstance, projectId: string, from: string): Promise<number> {
  const result = await app.db.execute(sql`
    select count(distinct distinct_id)::int as n from events
    where project_id = ${projectId} and event = 'daily_use' and day >= ${from}::date`)
  return rowsOf<{ n: number }>(result)[0]!.n
}

/** Every day's rollup value against the users whose last day it is (all days, not only the window). */
async function rollupMismatches(app: FastifyInstance, projectId: string): Promise<unknown[]> {
  const result = await app.db.execute(sql`
    with kept as (
      select day, sum(users)::int as n from user_activity_days where project_id = ${projectId} group by day having sum(users) <> 0
    ), counted as (
      select day, count(*)::int as n from (
        select distinct_id, max(day) as day from events where project_id = ${projectId} and event = 'daily_use' group by distinct_id
      ) last group by day
    )
    select coalesce(k.day, c.day)::text as day, k.n as kept, c.n as counted
    from kept k full join counted c on c.day = k.day
    where k.n is distinct from c.n`)
  return rowsOf(result)
}

t.test('unique users over 7 and 30 days = a naive count, through every change', async (t) => {
  const clock = fixedClock('2026-06-15T12:00:00Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id

  const overview = async () => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/overview`, headers: bearer(ws.keys.mcp) })
    if (res.statusCode !== 200) throw new Error(`overview: ${res.statusCode} ${res.body}`)
    return res.json() as { today: string; unique_users_7d: number; unique_users_30d: number }
  }
  const check = async (t: Test, label: string) => {
    const o = await overview()
    t.equal(o.unique_users_7d, await naive(app, project, addDays(o.today, -6)), `${label}: 7 days`)
    t.equal(o.unique_users_30d, await naive(app, project, addDays(o.today, -29)), `${label}: 30 days`)
    t.same(await rollupMismatches(app, project), [], `${label}: every day's rollup is exact`)
    return o
  }

  // Users on several days, some inside 7 days, some only inside 30, some older than 30.
  const first: Event[] = []
  for (let u = 0; u < 40; u++) {
    for (const back of [u % 45, (u * 7) % 45, 40 + (u % 5)]) {
      first.push(ev('daily_use', `u${u}`, `${addDays('2026-06-15', -back)}T${String(u % 24).padStart(2, '0')}:15:00Z`))
    }
    first.push(ev('signup', `u${u}`, '2026-05-01T08:00:00Z'))
  }
  await ingest(app, ws.keys.ingest, first)
  const o1 = await check(t, 'first batch')
  t.ok(o1.unique_users_7d > 0 && o1.unique_users_30d > o1.unique_users_7d && o1.unique_users_30d < 40, 'the scenario spans the windows')

  await t.test('re-ingesting the same uuids changes nothing', async (t) => {
    const again = await ingest(app, ws.keys.ingest, first)
    t.same(again, { accepted: 0, duplicates: first.length })
    const o = await check(t, 're-ingestion')
    t.same([o.unique_users_7d, o.unique_users_30d], [o1.unique_users_7d, o1.unique_users_30d])
  })

  await t.test('older events for known users do not move them; newer ones do', async (t) => {
    await ingest(app, ws.keys.ingest, [
      ev('daily_use', 'u3', '2026-04-01T10:00:00Z'), // older than every day u3 has
      ev('daily_use', 'u41', '2026-05-20T10:00:00Z'), // a new user, inside 30 days only
      ev('daily_use', 'u5', '2026-06-14T23:59:59Z'), // moves u5 into 7 days
      ev('daily_use', 'u6', '2026-06-15T00:00:00Z'),
      ev('daily_use', 'u6', '2026-06-13T00:00:00Z'), // the same batch: only the latest counts
    ])
    await check(t, 'moves')
  })

  await t.test('an event stamped tomorrow (ahead of today) keeps the user counted', async (t) => {
    const before = await overview()
    await ingest(app, ws.keys.ingest, [ev('daily_use', 'u7', '2026-06-16T06:00:00Z'), ev('daily_use', 'u500', '2026-06-16T06:00:00Z')])
    const o = await check(t, 'ahead of today')
    t.ok(o.unique_users_7d >= before.unique_users_7d + 1, 'the new user counts')
  })

  await t.test('a time-zone change re-derives the days, and the counts with them', async (t) => {
    // Kiribati is UTC+14: events late in the UTC day fall on the next local day.
    const res = await app.inject({ method: 'PATCH', url: `/v1/projects/${project}`, headers: bearer(ws.keys.service), payload: { timezone: 'Pacific/Kiritimati' } })
    t.equal(res.statusCode, 200, res.body)
    await check(t, 'UTC+14')
    await ingest(app, ws.keys.ingest, [ev('daily_use', 'u8', '2026-06-15T11:00:00Z'), ev('daily_use', 'u9', '2026-06-08T09:30:00Z')])
    await check(t, 'UTC+14, after more events')
    const back = await app.inject({ method: 'PATCH', url: `/v1/projects/${project}`, headers: bearer(ws.keys.service), payload: { timezone: 'America/Los_Angeles' } })
    t.equal(back.statusCode, 200, back.body)
    await check(t, 'UTC-7')
  })

  await t.test('the day moves on: the same rollup, a later today', async (t) => {
    clock.set('2026-06-20T12:00:00Z')
    await check(t, 'five days later')
    clock.set('2026-07-20T12:00:00Z')
    const o = await check(t, 'a month later')
    t.equal(o.unique_users_30d, 0, 'nobody is active any more')
    clock.set('2026-06-15T12:00:00Z')
  })

  await t.test('concurrent batches with overlapping users', async (t) => {
    const batches = Array.from({ length: 8 }, (_, b) =>
      Array.from({ length: 60 }, (_, i) => ev('daily_use', `c${(i * 7 + b) % 50}`, `${addDays('2026-06-15', -((i + b) % 20))}T1${b}:00:00Z`))
    )
    const results = await Promise.all(batches.map((batch) => ingest(app, ws.keys.ingest, batch)))
    t.equal(results.reduce((s, r) => s + r.accepted, 0), 8 * 60)
    await check(t, 'concurrent')
  })

  await t.test("another project's rollups are its own, and go with it", async (t) => {
    const other = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Other', slug: `other-${randomUUID().slice(0, 6)}` })
    await app.db.execute(sql`
      insert into user_activity (project_id, distinct_id, last_active_day) values (${other.id}, 'x1', '2026-06-14'), (${other.id}, 'x2', '2026-06-10')`)
    const kept = async (id: string) =>
      rowsOf<{ n: number }>(await app.db.execute(sql`select coalesce(sum(users), 0)::int as n from user_activity_days where project_id = ${id}`))[0]!.n
    t.equal(await kept(other.id), 2)
    await app.db.execute(sql`delete from projects where id = ${other.id}`)
    t.equal(await kept(other.id), 0, 'no rows left behind by the cascade')
    await check(t, 'after the other project is gone')
  })
})
