// The rollups that ingestion maintains (issue 14 made that statement cheaper) against a naive
// count of the raw events: duplicates inside and across batches, resends, concurrent batches
// (with retention applied while they run), refused batches, out-of-order days; and a project's
// deletion taking its event rows along. Retention's cells (issue 29) are held to the naive
// definition over the raw events: first day f of a start event per user; a day cell per later
// day of a return event, a week cell per later ISO week with one.
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { compareRollups } from '../helpers/ingestion.ts'
import { rowsOf } from '../../db/client.ts'
import { sql } from '../../db/orm.ts'

const NOW = '2026-11-20T12:00:00.000Z'

interface Ev {
  event: string
  distinct_id: string
  timestamp: string
  uuid: string
}

t.test('rollups equal a naive count of the raw events', async (t) => {
  const app = await buildTestApp(t, { now: fixedClock(NOW) })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const post = (events: unknown) => app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events } })
  const query = async <T>(q: ReturnType<typeof sql>) => rowsOf<T>(await app.db.execute(q))

  /** Every rollup against a naive count of the raw events (test/helpers/ingestion.ts). */
  const compare = (t: Test, label: string) => compareRollups(t, label, app.db, project)

  const ev = (event: string, user: string, timestamp: string): Ev => ({ event, distinct_id: user, timestamp, uuid: randomUUID() })

  t.test('duplicates inside a batch and across batches count once', async (t) => {
    const a = ev('daily_use', 'ann', '2026-11-20T08:00:00Z')
    const b = ev('signup', 'ann', '2026-11-20T08:00:00Z')
    let res = await post([a, a, { ...a, uuid: a.uuid.toUpperCase() }, b, b])
    t.same(res.json(), { accepted: 2, duplicates: 3 })
    res = await post([b, a, ev('daily_use', 'ann', '2026-11-20T09:00:00Z')])
    t.same(res.json(), { accepted: 1, duplicates: 2 })
    t.equal(await compare(t, 'after duplicates'), 3)
  })

  t.test('an earlier day arriving late does not move a last active day back', async (t) => {
    await post([ev('daily_use', 'bob', '2026-11-19T10:00:00Z')])
    await post([ev('daily_use', 'bob', '2026-11-12T10:00:00Z'), ev('daily_use', 'bob', '2026-11-12T11:00:00Z')])
    const [row] = await query<{ day: string }>(sql`select last_active_day::text as day from user_activity where project_id = ${project} and distinct_id = 'bob'`)
    t.equal(row!.day, '2026-11-19')
    await post([ev('daily_use', 'bob', '2026-11-20T10:00:00Z')])
    const [moved] = await query<{ day: string }>(sql`select last_active_day::text as day from user_activity where project_id = ${project} and distinct_id = 'bob'`)
    t.equal(moved!.day, '2026-11-20')
    await compare(t, 'after late days')
  })

  t.test('a batch with one bad event changes nothing', async (t) => {
    const before = await compare(t, 'before the refused batch')
    const res = await post([ev('daily_use', 'cat', '2026-11-20T08:00:00Z'), ev('signup', 'cat', 'not a time'), ev('signup', 'dan', '2026-11-20T08:00:00Z')])
    t.equal(res.statusCode, 400)
    t.equal(await compare(t, 'after the refused batch'), before)
  })

  t.test('random batches, resends and concurrent batches', async (t) => {
    // A small deterministic generator: the same cases on every run.
    let seed = 14
    const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
    const names = ['daily_use', 'daily_use', 'daily_use', 'signup', 'page_view']
    const before = await compare(t, 'before random batches')
    const sent: Ev[] = []
    const batchOf = (n: number) => Array.from({ length: n }, () => {
      // A quarter are resends of earlier events (same uuid), the rest new, over 6 days and 12 users.
      if (sent.length && rand() < 0.25) return sent[Math.floor(rand() * sent.length)]!
      const day = 15 + Math.floor(rand() * 6)
      const e = ev(names[Math.floor(rand() * names.length)]!, `u${Math.floor(rand() * rand() * 12)}`, `2026-11-${day}T${String(Math.floor(rand() * 24)).padStart(2, '0')}:30:00Z`)
      sent.push(e)
      return e
    })
    let accepted = 0
    for (let round = 0; round < 6; round++) {
      const batches = Array.from({ length: 4 }, () => batchOf(1 + Math.floor(rand() * 60)))
      // The first batch of every round is sent twice at once as well: a client retry racing itself.
      // Retention is applied while they run: what it folds in must not depend on what it saw.
      const [results] = await Promise.all([Promise.all([...batches, batches[0]!].map(post)), app.repos.retention.fold(project, 7)])
      t.same(results.map((r) => r.statusCode), [200, 200, 200, 200, 200])
      accepted += results.reduce((n, r) => n + (r.json() as { accepted: number }).accepted, 0)
    }
    const distinct = new Set(sent.map((e) => e.uuid)).size
    const stored = await compare(t, 'after random batches')
    t.equal(accepted, distinct, 'every distinct uuid accepted exactly once')
    t.equal(stored, before + distinct, 'stored once each')
  })

  t.test('a batch is queued for retention as one row, and folded whole', async (t) => {
    await compare(t, 'before')
    const queued = async () => (await query<{ rows: number; sightings: number; marked: number }>(sql`
      select count(*)::int as rows, coalesce(sum(cardinality(distinct_ids)), 0)::int as sightings,
             (select count(*) from daily_event_users d where d.project_id = ${project} and d.batch in (select id from retention_queue where project_id = ${project}))::int as marked
      from retention_queue where project_id = ${project}`))[0]!
    // Three first sightings (one a duplicate of the batch's own), then two (one already seen).
    await post([ev('daily_use', 'kim', '2026-11-18T08:00:00Z'), ev('daily_use', 'kim', '2026-11-18T09:00:00Z'), ev('signup', 'kim', '2026-11-18T08:00:00Z'), ev('daily_use', 'lee', '2026-11-18T08:00:00Z')])
    await post([ev('daily_use', 'kim', '2026-11-18T10:00:00Z'), ev('daily_use', 'kim', '2026-11-19T08:00:00Z'), ev('page_view', 'lee', '2026-11-17T08:00:00Z')])
    await post([ev('daily_use', 'kim', '2026-11-19T11:00:00Z')]) // no first sighting: nothing queued
    t.same(await queued(), { rows: 2, sightings: 5, marked: 5 }, 'one queue row per batch with first sightings, each of its rows marked with it')
    const apply = async (n: number) => (await query<{ n: number }>(sql`select retention_apply(${project}, ${n}) as n`))[0]!.n
    t.equal(await apply(1), 3, 'a slice takes a whole batch, even past its limit')
    t.same(await queued(), { rows: 1, sightings: 2, marked: 2 })
    t.equal(await apply(1), 2)
    t.equal(await apply(1), 0, 'nothing left')
    await compare(t, 'after folding batch by batch')
  })

  t.test('the background fold empties the queue of every project', async (t) => {
    const other = await seedWorkspace(app)
    await post([ev('daily_use', 'fay', '2026-11-20T08:00:00Z'), ev('signup', 'fay', '2026-11-19T08:00:00Z')])
    await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(other.keys.ingest), payload: { events: [ev('signup', 'gus', '2026-11-20T08:00:00Z')] } })
    t.same((await app.repos.retention.queuedProjects()).sort(), [project, other.project.id].sort(), 'both projects have rows queued')
    t.equal(await app.retention.foldQueued(), 3, 'three first sightings folded')
    t.same(await app.repos.retention.queuedProjects(), [], 'none left')
    await compare(t, 'after the background fold')
  })

  t.test("a project's deletion deletes its events and first sightings", async (t) => {
    await post([ev('daily_use', 'eve', '2026-11-20T08:00:00Z')])
    const count = async () => (await query<{ n: number }>(sql`
      select ((select count(*) from events where project_id = ${project}) +
              (select count(*) from daily_event_users where project_id = ${project}) +
              (select count(*) from daily_event_counts where project_id = ${project}) +
              (select count(*) from user_activity where project_id = ${project}) +
              (select count(*) from retention_cells where project_id = ${project}) +
              (select count(*) from retention_cohorts where project_id = ${project}))::int as n`))[0]!.n
    await post([ev('signup', 'eve', '2026-11-20T09:00:00Z')])
    await app.repos.retention.fold(project)
    await post([ev('daily_use', 'eve', '2026-11-21T08:00:00Z')])
    t.ok((await query<{ n: number }>(sql`select count(*)::int as n from retention_queue where project_id = ${project}`))[0]!.n > 0, 'something still queued for retention')
    t.ok(await count() > 0)
    await app.db.execute(sql`delete from projects where id = ${project}`)
    t.equal(await count(), 0)
    t.equal((await query<{ n: number }>(sql`select count(*)::int as n from retention_queue where project_id = ${project}`))[0]!.n, 0, 'its retention queue too')
  })
})
