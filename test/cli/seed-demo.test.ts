// `admin seed-demo`: its demo opportunities fit their types and vary (each type's texts from that
// type's pool, none repeated more than twice, a spread of statuses with fitting evaluations and
// notes), it reports progress a line per phase, and a second run adds nothing.
import t from 'tap'
import { eq, inArray, sql } from '../../db/orm.ts'
import { events, opportunities, reviewHistory } from '../../db/schema.ts'
import { rowsOf } from '../../db/client.ts'
import { DEMO_POOLS, DEMO_TYPES, REVIEW_NOTES, demoOpportunities } from '../../bin/demo-data.ts'
import { DEMO_DECISION_DAYS_AGO, DEMO_OPPORTUNITIES, demoEvents, seedProject } from '../../bin/seed-demo.ts'
import { localDate } from '../../core/time.ts'
import { main } from '../../bin/cli.ts'
import { bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'

const MAX_REPEATS = 2

function countsOf(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>()
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1)
  return counts
}

t.test('the demo pools: one per type, no text shared between types', async (t) => {
  const all = DEMO_TYPES.flatMap((type) => DEMO_POOLS[type].flatMap((l) => [l.info, l.reason, l.action]))
  t.equal(new Set(all).size, all.length, 'every text of every pool is distinct')
  for (const type of DEMO_TYPES) t.ok(DEMO_POOLS[type].length >= 6, `${type}: ${DEMO_POOLS[type].length} leads`)
})

t.test('demo opportunities fit their types and vary', async (t) => {
  const demo = demoOpportunities('prj_test', DEMO_OPPORTUNITIES)
  t.equal(demo.length, DEMO_OPPORTUNITIES)
  for (const o of demo) t.ok((DEMO_POOLS[o.type] as readonly unknown[]).includes(o.lead), `#${o.index}: the ${o.type} text comes from the ${o.type} pool`)
  for (const [field, values] of [['key_information', demo.map((o) => o.lead.info)], ['reason', demo.map((o) => o.lead.reason)], ['suggested_action', demo.map((o) => o.lead.action)]] as const) {
    const worst = Math.max(...countsOf(values).values())
    t.ok(worst <= MAX_REPEATS, `${field}: no text more than ${MAX_REPEATS} times (worst ${worst})`)
    t.ok(countsOf(values).size >= 30, `${field}: ${countsOf(values).size} different texts`)
  }
  t.same(new Set(demo.map((o) => o.type)), new Set(DEMO_TYPES), 'every type is used')

  const finals = demo.map((o) => o.steps.at(-1)?.status ?? 'pending')
  const spread = countsOf(finals)
  for (const status of ['pending', 'reviewing', 'contacted', 'adopted', 'ignored', 'done']) t.ok(spread.get(status), `some end ${status} (${spread.get(status) ?? 0})`)
  t.ok(spread.get('pending')! < DEMO_OPPORTUNITIES / 2, 'less than half are still pending')
  for (const o of demo) {
    const last = o.steps.at(-1)
    if (!last) continue
    if (last.status === 'ignored') t.equal(last.evaluation, 'not_useful', `#${o.index}: ignored is not useful`)
    if (last.status === 'adopted' || last.status === 'done') t.equal(last.evaluation, 'useful', `#${o.index}: ${last.status} was useful`)
    for (const step of o.steps) t.ok(REVIEW_NOTES[step.status as keyof typeof REVIEW_NOTES].includes(step.note), `#${o.index}: the note fits ${step.status}`)
  }
  const notes = demo.flatMap((o) => o.steps.map((s) => s.note))
  t.ok(countsOf(notes).size >= 12, `${countsOf(notes).size} different review notes`)
  t.same(demoOpportunities('prj_test', DEMO_OPPORTUNITIES), demo, 'deterministic')
})

t.test('seedProject: the data lands, with review history and progress a line per phase; a re-run adds nothing', async (t) => {
  // Early in the day: most of today's office hours are still to come.
  const clock = fixedClock('2026-03-10T02:00:00.000Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = { id: ws.project.id, slug: ws.project.slug, timezone: 'UTC' }
  const lines: string[] = []
  const first = await seedProject(app, project, ws.user.id, (line) => lines.push(line))
  t.equal(first.opportunities, DEMO_OPPORTUNITIES)
  t.ok(first.reviewed > DEMO_OPPORTUNITIES / 2, `${first.reviewed} reviewed`)
  t.ok(first.events > 1000, `${first.events} events`)
  t.ok(lines.length >= 4 && lines.length <= 10, `${lines.length} progress lines, not one per row`)
  t.match(lines.join('\n'), /^opportunities: 60 new of 60 \(\d+ reviewed/m)
  t.match(lines.join('\n'), /^memories: 3 new$/m)
  t.match(lines.join('\n'), /^events: 100% \(\d+ new so far\)$/m)

  const rows = await app.db.select().from(opportunities).where(eq(opportunities.projectId, project.id))
  t.equal(rows.length, DEMO_OPPORTUNITIES)
  for (const row of rows) {
    const pool = DEMO_POOLS[row.contributionType as keyof typeof DEMO_POOLS]
    t.ok(pool?.some((l) => l.info === row.keyInformation && l.reason === row.reason && l.action === row.suggestedAction), `${row.contributionType}: its own pool's text`)
  }
  t.ok(Math.max(...countsOf(rows.map((r) => r.keyInformation)).values()) <= MAX_REPEATS, 'stored texts vary')
  t.ok(new Set(rows.map((r) => r.status)).size >= 5, 'a spread of statuses is stored')
  const history = await app.db.select().from(reviewHistory).where(inArray(reviewHistory.opportunityId, rows.map((r) => r.id)))
  t.ok(history.length > first.reviewed, `${history.length} history entries: several steps for some`)
  t.ok(rows.filter((r) => r.status !== 'pending').every((r) => r.reviewNote !== ''), 'every reviewed one has a note')

  // Triage left as a team leaves it: every one tagged by its type, in-progress ones assigned, a comment.
  const leads = await app.repos.opportunities.list(project.id, { type: 'all', status: 'all', evaluation: 'all', tag: 'lead', page: 1, pageSize: 100 })
  t.equal(leads.total, rows.filter((r) => r.contributionType === 'potential_user_opportunity').length, 'the listing by tag finds every demo lead')
  t.ok(leads.items.every((o) => o.tags.includes('lead')), 'each carries its tag')
  const mine = await app.repos.opportunities.list(project.id, { type: 'all', status: 'all', evaluation: 'all', assignee: ws.user.id, page: 1, pageSize: 100 })
  t.ok(mine.total > 0 && mine.items.every((o) => o.assignee?.id === ws.user.id && ['reviewing', 'contacted'].includes(o.status)), `${mine.total} in progress are assigned to the owner`)
  t.equal(rowsOf<{ n: number }>(await app.db.execute(sql`select count(*)::int as n from comments where project_id = ${project.id}`))[0]!.n, 1, 'one comment')

  const [latest] = await app.db.select({ at: sql<string>`max(${events.occurredAt})::text` }).from(events).where(eq(events.projectId, project.id))
  t.ok(new Date(latest!.at).getTime() <= clock().getTime(), `no event after now (the latest: ${latest!.at})`)

  // Users come back within a day: on most days there are more daily_use events than users.
  const perDay = rowsOf<{ events: number; users: number }>(await app.db.execute(sql`
    select count(*)::int as events, count(distinct distinct_id)::int as users from events
    where project_id = ${project.id} and event = 'daily_use' group by day`))
  t.ok(perDay.filter((d) => d.events > d.users).length > perDay.length / 2, 'daily_use events outnumber its users on most days')

  // The first one that ends adopted was adopted 15 days ago: its impact has 14 closed days either side.
  const showcase = demoOpportunities(project.id, DEMO_OPPORTUNITIES).find((o) => o.steps.at(-1)?.status === 'adopted')!
  const showcaseId = rows.find((r) => r.externalId === `seed-demo-${showcase.index}`)!.id
  t.match(lines.join('\n'), new RegExp(`; ${showcaseId} adopted ${DEMO_DECISION_DAYS_AGO} days ago, its impact on its page$`, 'm'))
  const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project.id}/opportunities/${showcaseId}/impact`, headers: bearer(ws.keys.mcp) })
  t.equal(res.statusCode, 200, res.body.slice(0, 300))
  const impact = res.json()
  t.match(impact, { status: 'adopted', decision: { status: 'adopted', day: '2026-02-23' }, before: { days_counted: 14, days_left_out: 0 }, after: { days_counted: 14, days_left_out: 0 } })
  for (const m of impact.metrics) t.ok(m.before.every((d: { value: number }) => d.value > 0) && m.after.every((d: { value: number }) => d.value > 0), `${m.metric}: events on every day either side`)

  const again = await seedProject(app, project, ws.user.id)
  t.match(again, { opportunities: 0, reviewed: 0, memories: 0, events: 0 }, 'a re-run adds nothing')
})

t.test('demo events are each in their own day of the project\'s zone, never after now: at 00:10 none falls into yesterday', async (t) => {
  for (const [zone, now] of [
    ['UTC', '2026-03-10T00:10:00.000Z'],
    ['UTC', '2026-03-10T23:50:00.000Z'],
    ['Pacific/Kiritimati', '2026-03-09T10:05:00.000Z'], // 00:05 on the 10th there
    ['America/Los_Angeles', '2026-03-10T08:20:00.000Z'], // 01:20 on the 10th there
    ['Asia/Kolkata', '2026-03-10T06:00:00.000Z'],
  ] as const) {
    const at = new Date(now)
    const { events: all } = demoEvents('prj_demo', zone, at)
    const today = localDate(at, zone)
    const misplaced = all.filter((e) => localDate(new Date(e.timestamp), zone) !== e.day)
    t.same(misplaced.slice(0, 3), [], `${zone} at ${now}: every event in its own day (${all.length} events)`)
    t.ok(all.every((e) => new Date(e.timestamp).getTime() <= at.getTime()), `${zone} at ${now}: none after now`)
    t.ok(all.some((e) => e.day === today), `${zone} at ${now}: today has events`)
  }
})

t.test('the command: an unknown project fails with one line', async (t) => {
  let stderr = ''
  const code = await main(['admin', 'seed-demo', '--project', 'no-such-project'], { stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) }, env: { DATABASE_URL: 'memory://' } })
  t.equal(code, 1)
  t.match(stderr, /growthdesk: No project 'no-such-project'\.\n$/)
})
