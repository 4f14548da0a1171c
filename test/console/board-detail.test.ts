// One opportunity's page (/console/projects/:project/opportunities/:id): everything it says, its
// review form carrying the version it was shown at (a stale one is refused as on the board), its
// history; another project's id or no id is a 404, a viewer gets no review form.
import t from 'tap'
import { addMember, addProject, bearer, buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { Agent, csrfOf } from './helpers.ts'

const app = await buildTestApp(t)
const ws = await seedWorkspace(app)
const owner = new Agent(app)
await owner.signIn(ws.user.email, ws.user.password)
const slug = encodeURIComponent(ws.project.slug)
const api = `/api/v1/mcp/projects/${ws.project.id}/opportunities`

const submit = async (fields: Record<string, string> = {}) => {
  const res = await app.inject({
    method: 'POST',
    url: api,
    headers: bearer(ws.keys.mcp),
    payload: { contribution_type: 'partner_channel', key_information: 'Newsletter swap with <b>Foo</b> Weekly\nsecond line', reason: 'They have 12k readers.', suggested_action: 'Write to the editor.', ...fields },
  })
  if (res.statusCode !== 201) throw new Error(`submit: ${res.statusCode} ${res.body}`)
  return res.json().event_id as string
}
const fromApi = async (id: string) => (await app.inject({ method: 'GET', url: `${api}?page_size=100`, headers: bearer(ws.keys.mcp) })).json().items.find((o: { event_id: string }) => o.event_id === id)
const detail = (id: string, query = '') => `/console/projects/${slug}/opportunities/${id}${query}`

t.test('the page shows everything the opportunity says, and its history', async (t) => {
  const id = await submit({ source_url: 'https://foo.example/weekly', external_id: 'ext-42' })
  // Many newer ones: the page still finds it.
  for (let i = 0; i < 30; i++) await submit({ key_information: `Newer ${i}` })
  await app.inject({ method: 'PATCH', url: `${api}/${id}/review`, headers: bearer(ws.keys.mcp), payload: { status: 'reviewing', note: 'Asked for rates.' } })
  const res = await owner.get(detail(id))
  t.equal(res.statusCode, 200)
  const html = res.body
  t.match(html, /<h1 class="key-info">Newsletter swap with &lt;b&gt;Foo&lt;\/b&gt; Weekly\nsecond line<\/h1>/, 'the full text, escaped, in the heading')
  t.match(html, /They have 12k readers\./, 'the reason')
  t.match(html, /Write to the editor\./, 'the suggested action')
  t.match(html, /<a href="https:\/\/foo\.example\/weekly" rel="noopener noreferrer nofollow">/, 'the source link')
  t.match(html, /<code>ext-42<\/code>/, 'the external id')
  t.match(html, /<dt>Version<\/dt><dd>2<\/dd>/, 'the version')
  t.match(html, /Asked for rates\./, 'the note')
  t.match(html, new RegExp(`<form method="post" action="/console/projects/${ws.project.slug}/opportunities/${id}/review" class="review-detail">`), 'the review form')
  t.match(html, /name="version" value="2"/, 'carrying the version shown')
  t.match(html, /<option selected>reviewing<\/option>/, 'the status chosen')
  t.match(html, /<table class="cards-narrow history">[\s\S]*status<\/code>: &quot;pending&quot; → &quot;reviewing&quot;/, 'the history, folded in')
  t.match(html, /<section class="tags"[\s\S]*No tags\./, 'its tags: none yet')
  t.match(html, /<section class="assignee"[\s\S]*Nobody/, 'its assignee: nobody yet')
  // The board links every card to it, with the way back.
  const board = await owner.get(`/console/projects/${slug}/opportunities?status=reviewing`)
  t.match(board.body, new RegExp(`<a class="open" href="/console/projects/${ws.project.slug}/opportunities/${id}\\?back=%2Fconsole%2Fprojects%2F${ws.project.slug}%2Fopportunities%3Fstatus%3Dreviewing">`))
  const back = await owner.get(detail(id, `?back=${encodeURIComponent(`/console/projects/${ws.project.slug}/opportunities?status=reviewing`)}`))
  t.match(back.body, new RegExp(`<a href="/console/projects/${ws.project.slug}/opportunities\\?status=reviewing" class="back-to-board">`), 'back to the board as it was')
  const evil = await owner.get(detail(id, `?back=${encodeURIComponent('https://evil.example/')}`))
  t.match(evil.body, new RegExp(`<a href="/console/projects/${ws.project.slug}/opportunities" class="back-to-board">`), 'a foreign back address is not used')
  // The history page links to it.
  t.match((await owner.get(detail(id, '/history'))).body, new RegExp(`href="/console/projects/${ws.project.slug}/opportunities/${id}"`))
})

t.test('another project’s id, an unknown id and no id are 404 pages', async (t) => {
  const other = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Other', slug: `other-${Date.now()}` })
  const theirs = (await app.repos.opportunities.submit({ projectId: other.id, submittedBy: ws.user.id, contributionType: 'lead', keyInformation: 'Not yours here', reason: 'r', suggestedAction: 'a', receivedAt: app.now() })).opportunity.event_id
  for (const id of [theirs, 'opp_doesnotexist0000000', 'bulk-review', 'x']) {
    const res = await owner.get(detail(id))
    t.equal(res.statusCode, 404, id)
    t.match(res.headers['content-type'], /^text\/html/)
    t.notMatch(res.body, /Not yours here/)
  }
  t.equal((await owner.get(`/console/projects/${encodeURIComponent(other.slug)}/opportunities/${theirs}`)).statusCode, 200, 'in its own project it is there')
})

t.test('a viewer gets no review form', async (t) => {
  const id = await submit()
  const viewer = await addMember(app, ws.project.id, 'viewer')
  const agent = new Agent(app, '10.0.0.2')
  await agent.signIn(viewer.user.email, viewer.user.password)
  const res = await agent.get(detail(id))
  t.equal(res.statusCode, 403, 'review access is needed, as for the board')
  t.notMatch(res.body, /review-detail|Newsletter swap/)
})

t.test('the review form: a stale version → the conflict message and no change; fresh → saved', async (t) => {
  const id = await submit()
  const page = await owner.get(detail(id))
  const self = detail(id)
  t.match(page.body, new RegExp(`name="back" value="${self.replace(/[/.]/g, '\\$&')}"`), 'the form returns to this page')
  t.equal((await app.inject({ method: 'PATCH', url: `${api}/${id}/review`, headers: bearer(ws.keys.mcp), payload: { note: 'someone else' } })).statusCode, 200)
  const form = { _csrf: csrfOf(page.body), back: self, orig_evaluation: '', orig_status: 'pending', orig_note: '', evaluation: 'useful', status: 'contacted', note: '', version: '1' }
  const res = await owner.post(`/console/projects/${slug}/opportunities/${id}/review`, form)
  t.equal(res.statusCode, 302)
  t.equal(res.headers.location, `${self}#${id}`, 'back to this page')
  const after = await owner.get(self)
  t.match(after.body, /changed by someone else since you opened the page \(it is now at version 2\)/)
  t.match(await fromApi(id), { status: 'pending', evaluation: '', review_note: 'someone else', version: 2 }, 'nothing changed')
  t.match(after.body, /name="version" value="2"/, 'the page shows it as it is now')
  await owner.post(`/console/projects/${slug}/opportunities/${id}/review`, { ...form, _csrf: csrfOf(after.body), orig_note: 'someone else', note: 'someone else', version: '2' })
  const saved = await owner.get(self)
  t.match(saved.body, /Review saved\./)
  t.match(await fromApi(id), { status: 'contacted', evaluation: 'useful', review_note: 'someone else', version: 3 })
})
