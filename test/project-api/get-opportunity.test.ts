// One opportunity, whole: GET …/opportunities/:event_id and get_opportunity answer the same
// object (the listing's fields, merged or not), with its version as a strong ETag; a GET whose
// If-None-Match names that ETag is a 304 without a body; another project's id is a 404.
import t from 'tap'
import { sql } from '../../db/orm.ts'
import { bearer, buildTestApp, seedWorkspace } from '../helpers/app.ts'

t.test('get one opportunity', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const base = `/api/v1/mcp/projects/${ws.project.id}`
  const created = await app.inject({
    method: 'POST',
    url: `${base}/opportunities`,
    headers: bearer(ws.keys.mcp),
    payload: { contribution_type: 'partnership', key_information: 'A newsletter sells one slot a month', reason: 'Our readers', suggested_action: 'Ask the price', external_id: 'nl-1' },
  })
  t.equal(created.statusCode, 201)
  const { created: _, similar: __, ...submitted } = created.json()
  const get = (id: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url: `${base}/opportunities/${id}`, headers: { ...bearer(ws.keys.mcp), ...headers } })

  const res = await get(submitted.event_id)
  t.equal(res.statusCode, 200)
  t.same(res.json(), submitted, 'the object the submission answered')
  t.same(res.json(), { ...submitted, version: 1, report_count: 1, merged_into: null, tags: [], assignee: null })
  t.equal(res.headers.etag, '"1"', 'the version as a strong ETag')
  const listed = await app.inject({ method: 'GET', url: `${base}/opportunities`, headers: bearer(ws.keys.mcp) })
  t.equal(JSON.stringify(listed.json().items[0]), res.body, 'byte for byte what the listing shows of it')

  const tool = await app.inject({ method: 'POST', url: '/v1/tools/get_opportunity', headers: bearer(ws.keys.service), payload: { project: ws.project.id, event_id: submitted.event_id } })
  t.equal(tool.statusCode, 200)
  t.same(tool.json().result, res.json(), 'the tool answers the same')

  const notModified = await get(submitted.event_id, { 'if-none-match': '"1"' })
  t.equal(notModified.statusCode, 304)
  t.equal(notModified.body, '')
  t.equal(notModified.headers.etag, '"1"')
  t.equal((await get(submitted.event_id, { 'if-none-match': 'W/"1", "7"' })).statusCode, 304, 'a weak comparison, one of a list')

  const reviewed = await app.inject({ method: 'PATCH', url: `${base}/opportunities/${submitted.event_id}/review`, headers: bearer(ws.keys.mcp), payload: { status: 'reviewing' } })
  t.equal(reviewed.statusCode, 200)
  const after = await get(submitted.event_id, { 'if-none-match': '"1"' })
  t.equal(after.statusCode, 200, 'a stale ETag gets the new representation')
  t.equal(after.headers.etag, '"2"')
  t.equal(after.json().status, 'reviewing')

  // A merged opportunity leaves the listing, and a direct read still shows it, with merged_into.
  const second = await app.inject({ method: 'POST', url: `${base}/opportunities`, headers: bearer(ws.keys.mcp), payload: { contribution_type: 'partnership', key_information: 'The same newsletter', reason: 'r', suggested_action: 'a' } })
  await app.db.execute(sql`update opportunities set merged_into = ${submitted.event_id} where id = ${second.json().event_id}`)
  const merged = await get(second.json().event_id)
  t.equal(merged.statusCode, 200)
  t.equal(merged.json().merged_into, submitted.event_id)
  const listing = await app.inject({ method: 'GET', url: `${base}/opportunities`, headers: bearer(ws.keys.mcp) })
  t.same(listing.json().items.map((o: { event_id: string }) => o.event_id), [submitted.event_id], 'the merged one is not listed')
  t.equal(listing.json().total, 1, 'nor counted')

  const missing = await get('opp_doesnotexist1')
  t.equal(missing.statusCode, 404)
  t.equal(missing.json().error.code, 'not_found')
  const foreign = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${other.project.id}/opportunities/${submitted.event_id}`, headers: bearer(other.keys.mcp) })
  t.equal(foreign.statusCode, 404, 'another project\'s opportunity is not found')
  const bad = await get('42')
  t.equal(bad.statusCode, 400)
})
