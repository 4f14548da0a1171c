// The console's downloads: the board's and the metrics page's "Download CSV" links carry the
// current filters (plain links, no script) and stream the same CSV as the API, as the
// signed-in user with that user's access; no session goes to the sign-in page.
import t from 'tap'
import { addMember, bearer, buildTestApp, fixedClock, ingestEvents, seedWorkspace } from '../helpers/app.ts'
import { Agent } from '../console/helpers.ts'
import { csvObjects } from './csv.ts'

const decode = (href: string) => href.replaceAll('&amp;', '&')

t.test('console downloads', async (t) => {
  const clock = fixedClock('2026-11-18T08:00:00Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const slug = ws.project.slug
  const api = `/api/v1/mcp/projects/${slug}`
  for (let i = 0; i < 12; i++) {
    const res = await app.inject({
      method: 'POST',
      url: `${api}/opportunities`,
      headers: bearer(ws.keys.mcp),
      payload: { contribution_type: i % 2 ? 'partnership' : 'content_idea', key_information: i === 3 ? '=SUM(1,2) "x"' : `idea ${i}`, reason: 'r', suggested_action: 's' },
    })
    if (res.statusCode !== 201) throw new Error(res.body)
  }
  await ingestEvents(app, ws.keys.ingest, [['signup', 'u1', '2026-11-17T09:00:00Z'], ['daily_use', 'u1', '2026-11-18T07:00:00Z']])
  const owner = new Agent(app)
  await owner.signIn(ws.user.email, ws.user.password)

  t.test('the board links to the CSV of its filters', async (t) => {
    const board = await owner.get(`/console/projects/${slug}/opportunities?view=list&type=partnership&q=idea&page=2&page_size=10`)
    t.equal(board.statusCode, 200)
    const href = /<a class="button" href="([^"]+)" download>Download CSV<\/a>/.exec(board.body)?.[1]
    t.ok(href, 'a Download CSV link')
    const url = new URL(decode(href!), 'http://x')
    t.equal(url.pathname, `/console/projects/${slug}/opportunities.csv`)
    t.same(Object.fromEntries(url.searchParams), { type: 'partnership', date: 'all', evaluation: 'all', status: 'all', q: 'idea' }, 'the filters, not the page')
    const res = await owner.get(decode(href!))
    t.equal(res.statusCode, 200, res.body.slice(0, 200))
    t.equal(res.headers['content-type'], 'text/csv; charset=utf-8')
    t.equal(res.headers['content-disposition'], `attachment; filename="${slug}-opportunities-2026-11-18.csv"`)
    const same = await app.inject({ method: 'GET', url: `${api}/opportunities?type=partnership&q=idea&format=csv`, headers: bearer(ws.keys.mcp) })
    t.equal(res.body, same.body, 'the same CSV as the API')
    t.equal(csvObjects(res.body).length, 5)
    const all = await owner.get(`/console/projects/${slug}/opportunities.csv`)
    t.equal(csvObjects(all.body).length, 12)
    t.match(all.body, '"\'=SUM(1,2) ""x"""', 'neutralised and quoted')
    const blank = await owner.get(`/console/projects/${slug}/opportunities.csv?type=&q=%20%20&status=all&view=board`)
    t.equal(csvObjects(blank.body).length, 12, 'empty fields (as a form sends them) and board-only fields are ignored')
  })

  t.test('the metrics page links to the daily numbers of its window', async (t) => {
    for (const window of ['7d', '30d']) {
      const page = await owner.get(`/console/projects/${slug}/metrics?window=${window}`)
      t.equal(page.statusCode, 200)
      const href = /<a class="button" href="([^"]+)" download>Download CSV<\/a>/.exec(page.body)?.[1]
      t.equal(href, `/console/projects/${slug}/metrics.csv?window=${window}`)
      const res = await owner.get(href!)
      t.equal(res.statusCode, 200)
      t.equal(res.headers['content-disposition'], `attachment; filename="${ws.project.id}-daily-ops-2026-11-18.csv"`)
      const rows = csvObjects(res.body)
      t.equal(rows.length, window === '7d' ? 7 : 30)
      t.same(rows.at(-2), { date: '2026-11-17', registered_users: '1', daily_use_users: '0', active_users: '0', signup_events: '1', daily_use_events: '0' })
      const events = /<a class="button" href="([^"]+)" download>Download events CSV<\/a>/.exec(page.body)?.[1]
      t.equal(events, `/console/projects/${slug}/event-summary.csv?window=${window}`)
      const summary = await owner.get(events!)
      t.same(csvObjects(summary.body), [
        { date: '2026-11-17', event: 'signup', count: '1', unique_users: '1' },
        { date: '2026-11-18', event: 'daily_use', count: '1', unique_users: '1' },
      ])
    }
  })

  t.test('bad filters: an error page, no file', async (t) => {
    for (const url of [`/console/projects/${slug}/opportunities.csv?status=nope`, `/console/projects/${slug}/metrics.csv?window=1y`]) {
      const res = await owner.get(url)
      t.equal(res.statusCode, 400, url)
      t.match(res.headers['content-type'], /^text\/html/)
      t.notOk(res.headers['content-disposition'])
    }
  })

  t.test('access: the signed-in user\'s, and none without a session', async (t) => {
    const anon = new Agent(app)
    const res = await anon.get(`/console/projects/${slug}/opportunities.csv`)
    t.equal(res.statusCode, 302)
    t.match(res.headers.location, /^\/console\/login/)
    t.notOk(res.headers['content-disposition'])
    const viewer = await addMember(app, ws.project.id, 'viewer')
    const asViewer = new Agent(app)
    await asViewer.signIn(viewer.user.email, viewer.user.password)
    const refused = await asViewer.get(`/console/projects/${slug}/opportunities.csv`)
    t.equal(refused.statusCode, 403, 'a viewer cannot export opportunities')
    t.notOk(refused.headers['content-disposition'])
    const metrics = await asViewer.get(`/console/projects/${slug}/metrics.csv?window=7d`)
    t.equal(metrics.statusCode, 200, 'but can export metrics')
    const other = await seedWorkspace(app)
    const stranger = new Agent(app)
    await stranger.signIn(other.user.email, other.user.password)
    // (Their own project has the same slug: the id names ours.)
    const hidden = await stranger.get(`/console/projects/${ws.project.id}/opportunities.csv`)
    t.equal(hidden.statusCode, 404, 'another workspace: not found')
    t.notOk(hidden.headers['content-disposition'])
  })
})
