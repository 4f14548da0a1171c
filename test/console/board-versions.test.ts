// The review board's forms carry the version each opportunity was shown at: a reviewer who lost a
// race is told so and nothing changes; one who did not saves as before.
import t from 'tap'
import { bearer, buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { Agent, csrfOf } from './helpers.ts'

const app = await buildTestApp(t)
const ws = await seedWorkspace(app)
const owner = new Agent(app)
await owner.signIn(ws.user.email, ws.user.password)
const slug = encodeURIComponent(ws.project.slug)
const board = `/console/projects/${slug}/opportunities?view=list`

const submit = async () =>
  (await app.repos.opportunities.submit({ projectId: ws.project.id, submittedBy: ws.user.id, contributionType: 'lead', keyInformation: 'A lead', reason: 'r', suggestedAction: 'a', receivedAt: app.now() })).opportunity.event_id
/** The opportunity through the API, and its history length. */
const state = async (id: string) => {
  const list = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities?page_size=100`, headers: bearer(ws.keys.mcp) })
  const history = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/${id}/history`, headers: bearer(ws.keys.mcp) })
  return { opportunity: list.json().items.find((o: { event_id: string }) => o.event_id === id), history: history.json().items.length }
}
const elsewhere = (id: string, note: string) =>
  app.inject({ method: 'PATCH', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/${id}/review`, headers: bearer(ws.keys.mcp), payload: { note } })

t.test('a single review form: stale → a flash and no change; fresh → saved', async (t) => {
  const id = await submit()
  const page = await owner.get(board)
  const version = new RegExp(`id="${id}"[\\s\\S]*?name="version" value="(\\d+)"`).exec(page.body)?.[1]
  t.equal(version, '1', 'the form carries the version it was rendered with')
  t.equal((await elsewhere(id, 'someone else')).statusCode, 200)
  const before = await state(id)
  const form = { _csrf: csrfOf(page.body), back: board, orig_evaluation: '', orig_status: 'pending', orig_note: '', evaluation: '', status: 'done', note: '', version: version! }
  const res = await owner.post(`/console/projects/${slug}/opportunities/${id}/review`, form)
  t.equal(res.statusCode, 302)
  const after = await owner.get(board)
  t.match(after.body, /changed by someone else since you opened the page \(it is now at version 2\)/)
  t.same(await state(id), before, 'nothing changed')
  // The page now shows version 2: saving from it works.
  const fresh = new RegExp(`id="${id}"[\\s\\S]*?name="version" value="(\\d+)"`).exec(after.body)?.[1]
  t.equal(fresh, '2')
  await owner.post(`/console/projects/${slug}/opportunities/${id}/review`, { ...form, _csrf: csrfOf(after.body), orig_note: 'someone else', note: 'someone else', version: fresh! })
  t.match((await owner.get(board)).body, /Review saved\./)
  t.equal((await state(id)).opportunity.status, 'done')
  t.equal((await state(id)).opportunity.version, 3)
})

t.test('a form without a version: the last write wins, as before', async (t) => {
  const id = await submit()
  const page = await owner.get(board)
  await elsewhere(id, 'someone else')
  await owner.post(`/console/projects/${slug}/opportunities/${id}/review`, { _csrf: csrfOf(page.body), back: board, orig_status: 'pending', status: 'adopted' })
  t.equal((await state(id)).opportunity.status, 'adopted')
})

t.test('the bulk bar: one card moved → nothing changes', async (t) => {
  const a = await submit()
  const b = await submit()
  const page = await owner.get(board)
  t.match(page.body, new RegExp(`name="version_${b}" value="1" form="bulk"`))
  await elsewhere(b, 'moved')
  const before = [await state(a), await state(b)]
  const body = new URLSearchParams({ _csrf: csrfOf(page.body), back: board, status: 'done', [`version_${a}`]: '1', [`version_${b}`]: '1' })
  body.append('event_ids', a)
  body.append('event_ids', b)
  const res = await app.inject({
    method: 'POST',
    url: `/console/projects/${slug}/opportunities/bulk-review`,
    headers: { cookie: [...owner.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
    payload: body.toString(),
  })
  t.equal(res.statusCode, 303)
  t.match((await owner.get(board)).body, /Nothing changed: .*changed by someone else since you opened the page/)
  t.same([await state(a), await state(b)], before)
})

t.test('the board view: each card carries its version, for the keys and drag and drop, and a stale one is refused', async (t) => {
  const id = await submit()
  const page = await owner.get(`/console/projects/${slug}/opportunities`)
  t.match(page.body, new RegExp(`<article class="mini" id="${id}" data-event-id="${id}" data-status="pending" data-evaluation="" data-version="1" data-assignee="">`))
  t.match(page.body, new RegExp(`name="version_${id}" value="1" form="bulk"`), 'and in the bulk bar')
  await elsewhere(id, 'moved')
  // What console.js posts for a key or a drop: the card's fields, its version, the board to return to.
  const back = `/console/projects/${ws.project.slug}/opportunities`
  await owner.post(`/console/projects/${slug}/opportunities/${id}/review`, { _csrf: csrfOf(page.body), back, version: '1', orig_status: 'pending', status: 'adopted' })
  const after = await owner.get(back)
  t.match(after.body, /changed by someone else since you opened the page \(it is now at version 2\)/)
  t.match(after.body, new RegExp(`data-event-id="${id}" data-status="pending" data-evaluation="" data-version="2"`), 'shown as it is now')
  t.equal((await state(id)).opportunity.status, 'pending')
})
