// Saved views in the console: the part the board includes (links to the board with each view's
// filters, the current one marked, the save form, delete buttons for one's own), saving the
// current filters and deleting, through the operations; CSRF required; another member's
// private view never shown nor deletable.
import t from 'tap'
import { addMember, bearer, buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { Agent, csrfOf } from './helpers.ts'
import { savedViewsFor } from '../../routes/console/saved-views.ts'

const app = await buildTestApp(t)
const ws = await seedWorkspace(app)
const reviewer = await addMember(app, ws.project.id, 'reviewer')
const viewer = await addMember(app, ws.project.id, 'viewer')
const slug = ws.project.slug
const page = `/console/projects/${slug}/views`
const owner = new Agent(app)
await owner.signIn(ws.user.email, ws.user.password)
const other = new Agent(app)
await other.signIn(reviewer.user.email, reviewer.user.password)
const looker = new Agent(app)
await looker.signIn(viewer.user.email, viewer.user.password)

const views = async (key = ws.keys.mcp) => (await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/views`, headers: bearer(key) })).json().items as { view_id: string; name: string; filters: Record<string, string>; shared: boolean }[]
/** The hidden fields of the save form on a page. */
const hidden = (html: string) => Object.fromEntries([...(/<form[^>]*class="save-view"[\s\S]*?<\/form>/.exec(html)?.[0] ?? '').matchAll(/type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]))

t.test('saving the current filters: a flash, then the board with the view\'s filters', async (t) => {
  const shown = await owner.get(`${page}?status=pending&type=partnership&evaluation=all&q=`)
  t.equal(shown.statusCode, 200)
  t.match(shown.body, /No saved views yet/)
  const fields = hidden(shown.body)
  t.same({ ...fields, _csrf: 'x' }, { _csrf: 'x', back: `${page}?status=pending&type=partnership&evaluation=all&q=`, type: 'partnership', status: 'pending' }, 'the current filters that narrow, as hidden fields')
  t.match(shown.body, /name="shared"/, 'an owner may share')

  const res = await owner.post(page, { ...fields, name: 'Pending partnerships', shared: 'on' })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `/console/projects/${slug}/opportunities?type=partnership&status=pending`)
  const board = await owner.get(res.headers.location as string)
  t.equal(board.statusCode, 200, 'the link opens the board')
  t.match(board.body, /View “Pending partnerships” saved, shared with the project\./)
  t.match(await views(), [{ name: 'Pending partnerships', filters: { type: 'partnership', status: 'pending' }, shared: true }])
})

t.test('the part lists own and shared views, links each to the board, marks the current one', async (t) => {
  const csrf = csrfOf((await other.get(page)).body)
  t.equal((await other.post(page, { _csrf: csrf, name: 'My private', status: 'done' })).statusCode, 303)
  const mine = await owner.get(`${page}?type=partnership&status=pending`)
  t.match(mine.body, /<li data-view-id="view_[0-9A-Za-z]+" class="on">\s*<a href="\/console\/projects\/[^"]+\/opportunities\?type=partnership&amp;status=pending" aria-current="true">Pending partnerships<\/a>/)
  t.notMatch(mine.body, /My private/, 'another member\'s private view is not shown')
  const theirs = await other.get(page)
  t.match(theirs.body, /My private/)
  t.match(theirs.body, new RegExp(`Pending partnerships</a>\\s*<span class="muted small">shared by ${ws.user.email.replace(/[.]/g, '\\.')}`))
  t.notMatch(theirs.body, /aria-current/, 'no view is current on the unfiltered page')
  // One Delete button, for their own view only (the owner's shared one is not theirs to delete).
  t.equal([...theirs.body.matchAll(/aria-label="Delete the view ([^"]+)"/g)].map((m) => m[1]).join(), 'My private')
  // The function the board calls gives the same.
  t.type(savedViewsFor, 'function')
})

t.test('a viewer saves a view of their own, and is not offered sharing (nor may share)', async (t) => {
  const shown = await looker.get(page)
  t.notMatch(shown.body, /name="shared"/)
  const res = await looker.post(page, { _csrf: csrfOf(shown.body), name: 'Viewer shares', shared: 'on' })
  t.equal(res.statusCode, 303)
  t.match((await looker.get(page)).body, /View not saved: This needs review access|Sharing a view with project/)
  t.notOk((await views(viewer.keys.mcp)).some((v) => v.name === 'Viewer shares'))
  t.equal((await looker.post(page, { _csrf: csrfOf(shown.body), name: 'Viewer own', date: 'today' })).statusCode, 303)
  t.ok((await views(viewer.keys.mcp)).some((v) => v.name === 'Viewer own'))
})

t.test('bad input: a flash naming the field, nothing saved, back where it came from', async (t) => {
  const shown = await owner.get(page)
  const before = await views()
  const res = await owner.post(page, { _csrf: csrfOf(shown.body), back: page, name: 'Bad', status: 'open' })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, page)
  t.match((await owner.get(page)).body, /View not saved: filters\.status must be one of/)
  const blank = await owner.post(page, { _csrf: csrfOf(shown.body), back: 'https://evil.example/', name: '  ' })
  t.equal(blank.headers.location, `/console/projects/${slug}/opportunities`, 'a foreign back is not followed')
  t.same(await views(), before)
})

t.test('CSRF is required', async (t) => {
  const before = await views()
  t.equal((await owner.post(page, { name: 'No token' })).statusCode, 403)
  t.equal((await owner.post(page, { _csrf: 'forged', name: 'Forged token' })).statusCode, 403)
  const id = before[0]!.view_id
  t.equal((await owner.post(`${page}/${id}/delete`, { back: page })).statusCode, 403)
  t.same(await views(), before, 'nothing changed')
})

t.test('delete: one\'s own; another member\'s private view is not found; back to the page', async (t) => {
  const theirs = (await views(reviewer.keys.mcp)).find((v) => v.name === 'My private')!
  const shown = await owner.get(page)
  let res = await owner.post(`${page}/${theirs.view_id}/delete`, { _csrf: csrfOf(shown.body), back: page })
  t.equal(res.statusCode, 303)
  t.match((await owner.get(page)).body, /View not deleted: View &#39;view_[0-9A-Za-z]+&#39; was not found/)
  t.ok((await views(reviewer.keys.mcp)).some((v) => v.name === 'My private'), 'still there')

  const shared = (await views()).find((v) => v.name === 'Pending partnerships')!
  res = await other.post(`${page}/${shared.view_id}/delete`, { _csrf: csrfOf((await other.get(page)).body), back: page })
  t.match((await other.get(page)).body, /View not deleted: View &#39;view_[0-9A-Za-z]+&#39; is another member&#39;s/)

  res = await other.post(`${page}/${theirs.view_id}/delete`, { _csrf: csrfOf((await other.get(page)).body), back: page })
  t.equal(res.headers.location, page)
  t.match((await other.get(page)).body, /View deleted\./)
  t.notOk((await views(reviewer.keys.mcp)).some((v) => v.name === 'My private'))
})
