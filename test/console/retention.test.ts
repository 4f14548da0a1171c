// The console's retention page over HTTP (app.inject, no browser): signed in only, any member
// of the project (a viewer too), another workspace's project is a 404, the grid is the
// get_retention answer with the user's events escaped, and a bad query is a 400 page saying why.
import t from 'tap'
import { addMember, bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { Agent } from './helpers.ts'

t.test('console retention page', async (t) => {
  const app = await buildTestApp(t, { now: fixedClock('2026-11-20T12:00:00.000Z') })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const page = `/console/projects/${ws.project.slug}/retention`
  const events = [
    { event: 'signup', distinct_id: 'a', timestamp: '2026-11-18T09:00:00Z' },
    { event: 'daily_use', distinct_id: 'a', timestamp: '2026-11-19T09:00:00Z' },
    { event: '<b>x</b>', distinct_id: 'a', timestamp: '2026-11-18T09:00:00Z' },
  ]
  t.equal((await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events } })).statusCode, 200)

  t.test('signed out: to the sign-in page', async (t) => {
    const res = await new Agent(app).get(page)
    t.equal(res.statusCode, 302)
    t.match(res.headers.location, /^\/console\/login/)
  })

  t.test('a viewer sees the grid of get_retention', async (t) => {
    const viewer = await addMember(app, ws.project.id, 'viewer')
    const agent = new Agent(app)
    await agent.signIn(viewer.user.email, viewer.user.password)
    const res = await agent.get(page)
    t.equal(res.statusCode, 200)
    t.match(res.body, /<table class="retention-grid">/)
    t.match(res.body, /title="2026-11-18, day 1: 1 of 1 users \(100%\)">100%</, 'the cohort of 11-18 came back on day 1')
    t.match(res.body, /title="2026-11-18, day 2: not over yet">…</, 'day 2 of 11-18 is today: not over, not 0')
    t.match(res.body, /title="2026-11-19: no new users">·</, 'an empty cohort')
    const week = await agent.get(`${page}?period=week&start_event=%3Cb%3Ex%3C%2Fb%3E`)
    t.equal(week.statusCode, 200)
    t.notMatch(week.body, /<b>x<\/b>/, 'an event name is escaped')
    t.match(week.body, /&lt;b&gt;x&lt;\/b&gt;/)
    t.match(week.body, /Week 4<\/th>/, 'weeks: 4 periods after the cohort\'s own by default')
  })

  t.test('another workspace\'s project is a 404; a bad query a 400 saying why', async (t) => {
    const agent = new Agent(app)
    await agent.signIn(other.user.email, other.user.password)
    // By id: the demo projects of both workspaces have the same slug.
    t.equal((await agent.get(`/console/projects/${ws.project.id}/retention`)).statusCode, 404)
    const owner = new Agent(app)
    await owner.signIn(ws.user.email, ws.user.password)
    const bad = await owner.get(`${page}?return_event=${'x'.repeat(201)}`)
    t.equal(bad.statusCode, 400)
    t.match(bad.body, /return_event/)
  })
})
