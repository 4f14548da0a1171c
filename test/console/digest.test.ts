// The console's Digest page over HTTP: linked from the project page, an owner sets, pauses and
// deletes the schedule (a refused form is a flash and changes nothing), the preview shows the
// digest's numbers, a viewer reads both without the form.
import t from 'tap'
import { addMember, buildTestApp, fixedClock, ingestEvents, seedWorkspace } from '../helpers/app.ts'
import { Agent } from './helpers.ts'

t.test('console digest', async (t) => {
  const clock = fixedClock('2026-11-20T12:00:00.000Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  await ingestEvents(app, ws.keys.ingest, [['signup', 'A', '2026-11-19T08:00:00Z'], ['signup', 'B', '2026-11-19T09:00:00Z'], ['signup', 'C', '2026-11-18T09:00:00Z']])
  const page = `/console/projects/${ws.project.slug}/digest`
  const owner = new Agent(app, '10.0.9.1')
  await owner.signIn(ws.user.email, ws.user.password)

  t.match((await owner.get(`/console/projects/${ws.project.slug}`)).body, `href="${page}"`, 'the project page links to it')
  const empty = await owner.get(page)
  t.equal(empty.statusCode, 200)
  t.match(empty.body, /No digest is scheduled/)
  t.match(empty.body, /data-form="schedule"/)
  t.match(empty.body, /<section class="card kpi" data-kpi="registrations">[\s\S]*?data-field="value">2<[\s\S]*?▲ 100 %[\s\S]*?data-field="previous">1</, 'the preview: 2 registrations against 1')

  const saved = await owner.submit(page, page, { frequency: 'weekly', hour: '8', weekday: '1', enabled: 'on' })
  t.equal(saved.statusCode, 303)
  t.equal(saved.headers.location, page)
  t.match(await app.repos.digests.find(ws.project.id), { frequency: 'weekly', hour: 8, weekday: 1, enabled: true })
  const shown = await owner.get(page)
  t.match(shown.body, /The digest schedule is saved\./)
  t.match(shown.body, /Every Monday at 08:00/)

  // A refused form: a flash naming the field; the schedule stays.
  const refused = await owner.submit(page, page, { frequency: 'daily', hour: '25', enabled: 'on' })
  t.equal(refused.statusCode, 303)
  t.match((await owner.get(page)).body, /The schedule was not saved: hour must be &lt;= 23/)
  t.match(await app.repos.digests.find(ws.project.id), { frequency: 'weekly', hour: 8 })

  // Unchecked: paused. The weekday of a daily form is left out.
  await owner.submit(page, page, { frequency: 'daily', hour: '18', weekday: '3' })
  t.match(await app.repos.digests.find(ws.project.id), { frequency: 'daily', hour: 18, weekday: null, enabled: false })
  t.match((await owner.get(page)).body, /Every day at 18:00[\s\S]*paused/)

  const viewer = await addMember(app, ws.project.id, 'viewer')
  const reader = new Agent(app, '10.0.9.2')
  await reader.signIn(viewer.user.email, viewer.user.password)
  const read = await reader.get(page)
  t.equal(read.statusCode, 200)
  t.match(read.body, /Every day at 18:00/)
  t.notMatch(read.body, /data-form="schedule"/, 'no form for a viewer')
  t.match(read.body, /Only the project's owners change the schedule/)
  const forbidden = await reader.submit(page, page, { frequency: 'daily', hour: '9', enabled: 'on' })
  t.equal(forbidden.statusCode, 303)
  t.match((await reader.get(page)).body, /needs the owner role/)
  t.match(await app.repos.digests.find(ws.project.id), { hour: 18 })

  const weekly = await owner.get(`${page}?frequency=weekly`)
  t.match(weekly.body, /data-field="period">2026-11-13 – 2026-11-19, against 2026-11-06 – 2026-11-12/)

  const deleted = await owner.submit(page, `${page}/delete`, {})
  t.equal(deleted.statusCode, 303)
  t.notOk(await app.repos.digests.find(ws.project.id))
  t.match((await owner.get(page)).body, /The digest schedule is deleted/)
})
