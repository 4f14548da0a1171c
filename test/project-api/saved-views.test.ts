// Saved views (issue 28): save (and replace by name, any case), list (own, then shared), delete
// (its owner; a project owner for a shared one), over REST (/api/v1/mcp/projects/:p/views), as
// tools (/v1/tools) and over MCP, with the same results and errors; bad filters are a 400
// naming the field, and nothing changes.
import t from 'tap'
import { addMember, addProject, bearer, buildTestApp, expectStatus, fixedClock, PUBLIC_URL, seedWorkspace } from '../helpers/app.ts'
import { createKey } from '../../bin/admin.ts'

const NOW = '2026-11-20T12:00:00.000Z'
const clock = fixedClock(NOW)
const app = await buildTestApp(t, { now: clock })
const ws = await seedWorkspace(app)
const other = await seedWorkspace(app)
const second = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Second', slug: 'second' })
const reviewer = await addMember(app, ws.project.id, 'reviewer', 'rev@example.com')
const viewer = await addMember(app, ws.project.id, 'viewer', 'viewer@example.com')
const project = ws.project.id

type Key = { mcp: string; service: string }
const owner: Key = ws.keys
const base = (ref: string) => `/api/v1/mcp/projects/${ref}/views`
const rest = {
  list: (key: Key = owner, ref = project) => app.inject({ method: 'GET', url: base(ref), headers: bearer(key.mcp) }),
  save: (payload: object, key: Key = owner, ref = project) => app.inject({ method: 'POST', url: base(ref), headers: bearer(key.mcp), payload }),
  remove: (id: string, key: Key = owner, ref = project) => app.inject({ method: 'DELETE', url: `${base(ref)}/${id}`, headers: bearer(key.mcp) }),
}
/** POST /v1/tools/:name: the status and body. */
const tool = (name: string, args: object, key: Key = owner) =>
  app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key.service), payload: { project, ...args } })
/** A tools/call over MCP (2025-11-25): the result as JSON text (structuredContent) or the error body. */
async function mcp(name: string, args: object, key: Key = owner) {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { host: new URL(PUBLIC_URL).host, ...bearer(key.mcp), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { project, ...args } } },
  })
  const result = res.json().result as { isError?: boolean; content: { text: string }[] }
  return { isError: result.isError === true, text: result.content[0]!.text }
}
const names = (res: { json(): { items: { name: string }[] } }) => res.json().items.map((v) => v.name)

t.test('save_view creates (201), and the same name in any case replaces it (200) in one statement', async (t) => {
  const res = await rest.save({ name: '  Pending partnerships ', filters: { type: 'partnership', status: 'pending' }, shared: true })
  expectStatus(t, res, 201)
  const view = res.json()
  t.match(view, { view_id: /^view_[0-9A-Za-z]{20}$/, name: 'Pending partnerships', filters: { type: 'partnership', status: 'pending' }, shared: true, owner: { id: ws.user.id, email: ws.user.email }, mine: true, created_at: NOW, updated_at: NOW, created: true })
  t.same(Object.keys(view.filters).sort(), ['status', 'type'], 'only what was sent: no default filled in')

  clock.set('2026-11-20T12:05:00.000Z')
  const again = await rest.save({ name: 'PENDING partnerships', filters: { status: 'reviewing', evaluation: 'all', q: 'pricing' } })
  expectStatus(t, again, 200)
  t.same(again.json(), {
    view_id: view.view_id,
    name: 'PENDING partnerships',
    filters: { status: 'reviewing', q: 'pricing' },
    shared: false,
    owner: { id: ws.user.id, email: ws.user.email },
    mine: true,
    created_at: NOW,
    updated_at: '2026-11-20T12:05:00.000Z',
    created: false,
  }, 'the same view: its new name, filters (a filter at `all` left out) and sharing; created_at kept')
  t.same(names(await rest.list()), ['PENDING partnerships'], 'one view, not two')
  clock.set(NOW)
  // Set back for the tests below.
  expectStatus(t, await rest.save({ name: 'Pending partnerships', filters: { type: 'partnership', status: 'pending' }, shared: true }), 200)
})

t.test('list_saved_views: own views first, then those others shared, each by name; private ones stay private', async (t) => {
  expectStatus(t, await rest.save({ name: 'b private', filters: { date: 'today' } }), 201)
  expectStatus(t, await rest.save({ name: 'Reviewer shared', filters: { evaluation: 'useful' }, shared: true }, reviewer.keys), 201)
  expectStatus(t, await rest.save({ name: 'Reviewer private', filters: { status: 'done' } }, reviewer.keys), 201)
  expectStatus(t, await rest.save({ name: 'a viewer private', filters: {} }, viewer.keys), 201)
  // Another project's and another workspace's views are not this project's.
  expectStatus(t, await rest.save({ name: 'Second project', filters: {}, shared: true }, owner, second.id), 201)
  expectStatus(t, await rest.save({ name: 'Elsewhere', filters: {}, shared: true }, other.keys, other.project.id), 201)

  t.same(names(await rest.list()), ['b private', 'Pending partnerships', 'Reviewer shared'])
  t.same((await rest.list()).json().items.map((v: { mine: boolean }) => v.mine), [true, true, false])
  t.same(names(await rest.list(reviewer.keys)), ['Reviewer private', 'Reviewer shared', 'Pending partnerships'])
  t.same(names(await rest.list(viewer.keys)), ['a viewer private', 'Pending partnerships', 'Reviewer shared'])
  const shared = (await rest.list(viewer.keys)).json().items[2]
  t.match(shared, { name: 'Reviewer shared', owner: { id: reviewer.user.id, email: 'rev@example.com' }, mine: false, shared: true, filters: { evaluation: 'useful' } })
  t.same(names(await rest.list(owner, second.id)), ['Second project'])
  t.equal((await rest.list(other.keys, project)).statusCode, 404, 'another workspace cannot reach the project')
})

t.test('sharing needs review access; a viewer saves their own views', async (t) => {
  const res = await rest.save({ name: 'Viewer shares', filters: {}, shared: true }, viewer.keys)
  expectStatus(t, res, 403)
  t.equal(res.json().error.code, 'review_access_required')
  t.notOk(names(await rest.list(viewer.keys)).includes('Viewer shares'), 'nothing saved')
  expectStatus(t, await rest.save({ name: 'Viewer shares', filters: {}, shared: false }, viewer.keys), 201)
})

t.test('a read-only key lists views but saves and deletes none', async (t) => {
  const readOnly: Key = { mcp: (await createKey(app, { email: ws.user.email, kind: 'mcp', readOnly: true })).key, service: (await createKey(app, { email: ws.user.email, kind: 'service', readOnly: true })).key }
  const before = (await rest.list()).body
  expectStatus(t, await rest.list(readOnly), 200)
  t.equal((await rest.list(readOnly)).body, before)
  const saved = await rest.save({ name: 'Read-only', filters: {} }, readOnly)
  expectStatus(t, saved, 403)
  t.equal(saved.json().error.code, 'forbidden')
  const id = (await rest.list()).json().items[0].view_id
  expectStatus(t, await rest.remove(id, readOnly), 403)
  expectStatus(t, await tool('delete_saved_view', { view_id: id }, readOnly), 403)
  t.equal((await rest.list()).body, before, 'nothing changed')
})

t.test('bad filters and names: a 400 naming the field, and nothing saved', async (t) => {
  const before = names(await rest.list())
  const cases: [object, string][] = [
    [{ name: 'x', filters: { status: 'open' } }, 'filters.status'],
    [{ name: 'x', filters: { type: 'Not A Type' } }, 'filters.type'],
    [{ name: 'x', filters: { q: '' } }, 'filters.q'],
    [{ name: 'x', filters: { page: 2 } }, 'filters.page'],
    [{ name: 'x', filters: { after: 'abc' } }, 'filters.after'],
    [{ name: 'x', filters: { sort: 'newest' } }, 'filters.sort'],
    [{ name: 'x', filters: 'status=pending' }, 'filters'],
    [{ name: 'x' }, 'filters'],
    [{ filters: {} }, 'name'],
    [{ name: '', filters: {} }, 'name'],
    [{ name: '    ', filters: {} }, 'name'],
    [{ name: 'x'.repeat(81), filters: {} }, 'name'],
    [{ name: 'two\nlines', filters: {} }, 'name'],
    [{ name: 'x', filters: {}, shared: 'yes' }, 'shared'],
  ]
  for (const [payload, field] of cases) {
    for (const res of [await rest.save(payload), await tool('save_view', payload)]) {
      expectStatus(t, res, 400)
      t.equal(res.json().error.code, 'invalid_arguments')
      t.same(res.json().error.details.map((d: { path: string }) => d.path), [field], `${JSON.stringify(payload).slice(0, 60)} names ${field}`)
    }
  }
  expectStatus(t, await rest.save({ name: 'x'.repeat(80), filters: {} }), 201)
  t.same(names(await rest.list()), ['b private', 'Pending partnerships', 'x'.repeat(80), 'Reviewer shared'], 'only the 80-character name was saved (own views first)')
  t.same(before, ['b private', 'Pending partnerships', 'Reviewer shared'])
  expectStatus(t, await rest.remove((await rest.list()).json().items.find((v: { name: string }) => v.name.length === 80).view_id), 200)
})

t.test('delete_saved_view: its owner; a project owner for a shared view; others cannot, and cannot see private ones', async (t) => {
  const mine = (await rest.save({ name: 'To delete', filters: {} }, reviewer.keys)).json()
  const theirs = (await rest.save({ name: 'Private of the viewer', filters: {} }, viewer.keys)).json()
  const shared = (await rest.save({ name: 'Owner shared', filters: {}, shared: true })).json()

  let res = await rest.remove(theirs.view_id, reviewer.keys)
  expectStatus(t, res, 404)
  t.equal(res.json().error.code, 'not_found', 'another member\'s private view is not found')
  res = await rest.remove(theirs.view_id, owner)
  expectStatus(t, res, 404)
  t.equal(res.json().error.code, 'not_found', 'not even by a project owner')
  res = await rest.remove(shared.view_id, reviewer.keys)
  expectStatus(t, res, 403)
  t.equal(res.json().error.code, 'forbidden', 'a shared view of another member is seen, not deleted')
  res = await rest.remove(mine.view_id, owner, second.id)
  expectStatus(t, res, 404)
  t.ok(names(await rest.list(reviewer.keys)).includes('To delete'), 'still there')

  res = await rest.remove(mine.view_id, reviewer.keys)
  expectStatus(t, res, 200)
  t.same(res.json(), { view_id: mine.view_id, deleted: true })
  expectStatus(t, await rest.remove(mine.view_id, reviewer.keys), 404)
  // A project owner deletes a shared view of another member (the project's list is theirs to keep tidy).
  const reviewerShared = (await rest.list(owner)).json().items.find((v: { name: string }) => v.name === 'Reviewer shared')
  expectStatus(t, await rest.remove(reviewerShared.view_id, owner), 200)
  t.notOk(names(await rest.list(reviewer.keys)).includes('Reviewer shared'))
  expectStatus(t, await rest.remove(theirs.view_id, viewer.keys), 200)
  expectStatus(t, await rest.remove(shared.view_id, owner), 200)
  const bad = await rest.remove('opp_2x7Kq9LmVb4Nc8Rt1Yw3')
  expectStatus(t, bad, 400)
  t.same(bad.json().error.details.map((d: { path: string }) => d.path), ['view_id'])
})

t.test('the same results and errors over REST, /v1/tools and MCP', async (t) => {
  const args = { name: 'Same everywhere', filters: { status: 'pending', q: 'pricing' }, shared: true }
  const viaRest = await rest.save(args)
  expectStatus(t, viaRest, 201)
  const viaTool = await tool('save_view', args)
  expectStatus(t, viaTool, 200)
  const viaMcp = await mcp('save_view', args)
  t.notOk(viaMcp.isError)
  const replaced = { ...viaRest.json(), created: false }
  t.same(viaTool.json().result, replaced, '/v1/tools: the same view (replaced)')
  t.equal(viaMcp.text, JSON.stringify(viaTool.json().result), 'MCP: byte-identical to /v1/tools')

  const list = await rest.list()
  const listTool = await tool('list_saved_views', {})
  const listMcp = await mcp('list_saved_views', {})
  t.equal(JSON.stringify(listTool.json().result), list.body, '/v1/tools list = REST list')
  t.equal(listMcp.text, list.body, 'MCP list = REST list')

  const invalid = { name: 'x', filters: { status: 'open' } }
  const errRest = await rest.save(invalid)
  const errTool = await tool('save_view', invalid)
  const errMcp = await mcp('save_view', invalid)
  t.ok(errMcp.isError)
  t.same(errTool.json(), errRest.json())
  t.same(JSON.parse(errMcp.text), errRest.json())
  t.match(errRest.json().error, { code: 'invalid_arguments', details: [{ path: 'filters.status' }] })

  const id = viaRest.json().view_id
  const missing = 'view_000000000000000000AA'
  const delRest = await rest.remove(missing)
  const delTool = await tool('delete_saved_view', { view_id: missing })
  const delMcp = await mcp('delete_saved_view', { view_id: missing })
  t.same(delTool.json(), delRest.json())
  t.same(JSON.parse(delMcp.text), delRest.json())
  const deleted = await mcp('delete_saved_view', { view_id: id })
  t.same(JSON.parse(deleted.text), { view_id: id, deleted: true })
  t.notOk(names(await rest.list()).includes('Same everywhere'))
})

t.test('a saved view\'s filters are list_opportunities\' arguments', async (t) => {
  await app.repos.opportunities.submit({ projectId: project, submittedBy: ws.user.id, contributionType: 'partnership', keyInformation: 'A pricing partnership', reason: 'r', suggestedAction: 'a', receivedAt: app.now() })
  await app.repos.opportunities.submit({ projectId: project, submittedBy: ws.user.id, contributionType: 'lead', keyInformation: 'Another lead', reason: 'r', suggestedAction: 'a', receivedAt: app.now() })
  const view = (await rest.save({ name: 'Partnerships', filters: { type: 'partnership' } })).json()
  const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/opportunities?${new URLSearchParams(view.filters)}`, headers: bearer(owner.mcp) })
  expectStatus(t, res, 200)
  t.same(res.json().items.map((o: { contribution_type: string }) => o.contribution_type), ['partnership'])
})

t.test('filters the listing gains (tag, assignee) are saved with no change to saved views', async (t) => {
  const res = await rest.save({ name: 'Mine, tagged', filters: { tag: 'pricing', assignee: 'me', status: 'pending' } })
  expectStatus(t, res, 201)
  t.same(res.json().filters, { tag: 'pricing', assignee: 'me', status: 'pending' })
  const bad = await rest.save({ name: 'Bad tag', filters: { tag: 'x'.repeat(41) } })
  expectStatus(t, bad, 400)
  t.same(bad.json().error.details.map((d: { path: string }) => d.path), ['filters.tag'])
  const listing = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/opportunities?${new URLSearchParams(res.json().filters)}`, headers: bearer(owner.mcp) })
  expectStatus(t, listing, 200)
})
