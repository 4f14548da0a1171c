// The alerts' day-close sweep runs by itself when the background workers are on: an app that
// starts after the project's day has closed evaluates its alerts without being asked (the other
// suites build apps with the workers off and drive the sweep with app.alerts.evaluateDue()).
import t from 'tap'
import { buildTestApp, fixedClock, ingestEvents, seedWorkspace, testDatabase } from '../helpers/app.ts'

t.test('started with the workers, the sweep evaluates the alerts of a closed day', async (t) => {
  const database = await testDatabase(t)
  const clock = fixedClock('2026-03-18T20:00:00.000Z')
  const first = await buildTestApp(t, { database, now: clock })
  const ws = await seedWorkspace(first)
  const alert = await first.repos.alerts.create({ projectId: ws.project.id, name: 'Quiet day', metric: 'daily_users', event: null, condition: 'below', threshold: 2, createdBy: ws.user.id, now: clock() }, 50)
  await ingestEvents(first, ws.keys.ingest, [['daily_use', 'a@example.com', '2026-03-17T12:00:00Z'], ['daily_use', 'b@example.com', '2026-03-17T12:00:00Z'], ['daily_use', 'c@example.com', '2026-03-18T12:00:00Z']])
  await first.alerts.settled()
  t.match(await first.repos.alerts.find(ws.project.id, alert!.id), { state: 'ok', lastValue: 2 }, 'the 17th closed with 2 users')
  await first.close()

  // The 18th has closed (one user); this instance runs the workers and sweeps at start.
  clock.set('2026-03-19T00:05:00.000Z')
  const second = await buildTestApp(t, { database, now: clock, config: { webhooks: { enabled: true, allowPrivateNetworks: true } } })
  await second.ready()
  const deadline = Date.now() + 10_000
  let row = await second.repos.alerts.find(ws.project.id, alert!.id)
  while (row?.state !== 'firing' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    row = await second.repos.alerts.find(ws.project.id, alert!.id)
  }
  t.match(row, { state: 'firing', lastValue: 1, lastEvaluatedAt: new Date('2026-03-19T00:05:00.000Z') }, 'fired for the 18th, unasked')
  const { items } = await second.repos.alerts.events(ws.project.id, { limit: 10, offset: 0 })
  t.match(items, [{ kind: 'triggered', day: '2026-03-18', value: 1 }])
})
