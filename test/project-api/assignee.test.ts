// Assignees (issue 28): a member of the project by email, user id or `me`, or null; a non-member
// (another project's, another workspace's, removed, unknown) is a 400; a version and a history
// entry per change, an opportunity.assigned message, no-op assignments write nothing; version
// preconditions (REST If-Match → 412); merged opportunities refused; the same results over REST,
// /v1/tools and MCP; a member's removal (from the project, from the workspace) clears their
// assignments there in its own transaction; and the listing by assignee (email, id, me, none),
// with the other filters and tags: pages, cursors and totals exactly the full listing filtered.
import t from 'tap'
import { sql } from '../../db/orm.ts'
import { addMember, addProject, bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { checkFiltered, mcp, queued, rest } from '../helpers/triage.ts'

const NOW = '2026-11-20T12:00:00.000Z'

t.test('assignees', async (t) => {
  const clock = fixedClock(NOW)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const project = ws.project.id
  const base = `/api/v1/mcp/projects/${project}`
  const h = bearer(ws.keys.mcp)
  await app.repos.webhooks.create({ workspaceId: ws.workspace.id, projectId: project, url: 'http://127.0.0.1:9/hook', events: ['opportunity.assigned'], description: '', secret: 'whsec_c2VjcmV0', createdBy: ws.user.id, now: new Date(NOW) })
  const ana = await addMember(app, project, 'reviewer', 'ana@example.test')
  const ben = await addMember(app, project, 'viewer', 'ben@example.test')
  const second = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Second', slug: 'second' })
  const elsewhere = await addMember(app, second.id, 'reviewer', 'cy@example.test')

  const submit = async (n: number) => {
    const res = await app.inject({ method: 'POST', url: `${base}/opportunities`, headers: h, payload: { contribution_type: n % 2 ? 'content_idea' : 'partnership', key_information: `Lead ${n}${n % 3 ? '' : ' pricing'}`, reason: 'r', suggested_action: 'a' } })
    if (res.statusCode !== 201) throw new Error(res.body)
    return res.json().event_id as string
  }
  const assign = (id: string, assignee: string | null, headers: Record<string, string> = {}, key = h) =>
    app.inject({ method: 'PUT', url: `${base}/opportunities/${id}/assignee`, headers: { ...key, ...headers }, payload: { assignee } })
  const get = async (id: string) => (await app.inject({ method: 'GET', url: `${base}/opportunities/${id}`, headers: h })).json()
  const history = async (id: string) => (await app.inject({ method: 'GET', url: `${base}/opportunities/${id}/history`, headers: h })).json().items

  const [a, b, c] = [await submit(1), await submit(2), await submit(3)]

  t.test('by email (any case), by id, `me`, null; each a version, a history entry, a message', async (t) => {
    let res = await assign(a, ' ANA@example.test ')
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), { event_id: a, assignee: { id: ana.user.id, email: 'ana@example.test' }, version: 2 })
    t.equal(res.headers.etag, '"2"')
    res = await assign(a, ben.user.id)
    t.same(res.json(), { event_id: a, assignee: { id: ben.user.id, email: 'ben@example.test' }, version: 3 }, 'a viewer may be given one')
    res = await assign(a, 'me')
    t.same(res.json().assignee, { id: ws.user.id, email: ws.user.email })
    res = await assign(a, null)
    t.same(res.json(), { event_id: a, assignee: null, version: 5 })
    t.match(await get(a), { assignee: null, version: 5 })
    t.same((await history(a)).map((e: { action: string; before: unknown; after: unknown }) => [e.action, e.before, e.after]), [
      ['assign', { assignee: null }, { assignee: 'ana@example.test' }],
      ['assign', { assignee: 'ana@example.test' }, { assignee: 'ben@example.test' }],
      ['assign', { assignee: 'ben@example.test' }, { assignee: ws.user.email }],
      ['assign', { assignee: ws.user.email }, { assignee: null }],
    ])
    const msgs = await queued(app, project, 'opportunity.assigned')
    t.equal(msgs.length, 4)
    t.ok(msgs.some((m) => m.data.version === 2 && m.data.assignee.email === 'ana@example.test' && m.data.assignment.before.assignee === null && m.data.assignment.after.assignee === 'ana@example.test' && m.data.assignment.actor.id === ws.user.id))
  })

  t.test('the same assignee again writes nothing', async (t) => {
    await assign(b, 'ana@example.test')
    const res = await assign(b, ana.user.id)
    t.same(res.json(), { event_id: b, assignee: { id: ana.user.id, email: 'ana@example.test' }, version: 2 })
    t.equal((await history(b)).length, 1)
    t.same((await assign(c, null)).json(), { event_id: c, assignee: null, version: 1 })
    t.equal((await history(c)).length, 0)
  })

  t.test('not a member of this project: a 400 naming `assignee`, nothing changed', async (t) => {
    for (const who of ['cy@example.test', elsewhere.user.id, other.user.email, other.user.id, 'nobody@example.test', 'usr_doesnotexist000']) {
      const res = await assign(c, who)
      t.equal(res.statusCode, 400, who)
      t.match(res.json().error, { code: 'invalid_arguments', details: [{ path: 'assignee', message: 'is not a member of this project' }] }, who)
    }
    const bad = await app.inject({ method: 'PUT', url: `${base}/opportunities/${c}/assignee`, headers: h, payload: {} })
    t.equal(bad.statusCode, 400)
    t.match(await get(c), { assignee: null, version: 1 })
    t.equal((await history(c)).length, 0)
  })

  t.test('stale version: 412 over REST, 409 as a tool; merged: 409; missing: 404', async (t) => {
    let res = await assign(c, 'ana@example.test', { 'if-match': '"7"' })
    t.equal(res.statusCode, 412)
    t.equal(res.headers.etag, '"1"')
    const tool = await rest(app, ws.keys.service, 'assign_opportunity', { project, event_id: c, assignee: 'me', if_version: 3 })
    t.match(tool, { status: 409, body: { error: { code: 'conflict', details: [{ path: 'if_version', message: 'is 3, but the opportunity is now at version 1' }] } } })
    t.match(await get(c), { assignee: null, version: 1 })
    res = await assign(c, 'ana@example.test', { 'if-match': '"1"' })
    t.equal(res.statusCode, 200)
    const m = await submit(4)
    await app.db.execute(sql`update opportunities set merged_into = ${a} where id = ${m}`)
    res = await assign(m, 'me')
    t.equal(res.statusCode, 409)
    t.match(res.json().error.message, `is merged into ${a}; unmerge it first`)
    t.match(await get(m), { assignee: null, version: 1 })
    t.equal((await assign('opp_doesnotexist000', 'me')).statusCode, 404)
    t.equal((await assign(m, 'me', {}, bearer(ben.keys.mcp))).statusCode, 403, 'a viewer may not assign')
  })

  t.test('the same results over REST, /v1/tools and MCP', async (t) => {
    const key = ws.keys.service
    const viaRest = (await assign(b, 'ana@example.test')).json()
    t.same((await rest(app, key, 'assign_opportunity', { project, event_id: b, assignee: 'ana@example.test' })).body.result, viaRest)
    t.same((await mcp(app, key, 'assign_opportunity', { project, event_id: b, assignee: ana.user.id })).body.result, viaRest)
    const restError = await rest(app, key, 'assign_opportunity', { project, event_id: b, assignee: 'cy@example.test' })
    t.same(await mcp(app, key, 'assign_opportunity', { project, event_id: b, assignee: 'cy@example.test' }), restError)
    const list = (await app.inject({ method: 'GET', url: `${base}/opportunities?assignee=ana@example.test`, headers: h })).json()
    t.same((await rest(app, key, 'list_opportunities', { project, assignee: 'ana@example.test' })).body.result, list)
    t.same((await mcp(app, key, 'list_opportunities', { project, assignee: ana.user.id })).body.result, list)
  })

  t.test('the listing by assignee, with the other filters and tags: pages and cursors exact', async (t) => {
    const whos = ['ana@example.test', ben.user.id, 'me', null]
    for (let i = 10; i < 40; i++) {
      clock.set(`2026-11-2${i % 3}T10:00:0${i % 2}Z`)
      const id = await submit(i)
      const who = whos[i % 5]
      if (who !== undefined) await assign(id, who)
      if (i % 4 === 0) await app.inject({ method: 'POST', url: `${base}/opportunities/${id}/tags`, headers: h, payload: { add: ['hot'] } })
      if (i % 7 === 0) await app.inject({ method: 'PATCH', url: `${base}/opportunities/${id}/review`, headers: h, payload: { status: 'reviewing' } })
    }
    clock.set(NOW)
    const is = (id: string | null) => (o: { assignee: { id: string } | null }) => (o.assignee?.id ?? null) === id
    t.ok((await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=ana@example.test', is(ana.user.id))).length > 6)
    await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=ANA@EXAMPLE.TEST', is(ana.user.id), 4)
    await checkFiltered(t, app, ws.keys.mcp, project, `assignee=${ben.user.id}`, is(ben.user.id))
    await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=me', is(ws.user.id), 2)
    const none = await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=none', is(null), 5)
    t.ok(none.length > 10)
    await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=none&status=reviewing', (o) => is(null)(o) && o.status === 'reviewing', 1)
    await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=ana@example.test&type=partnership&q=pricing', (o) => is(ana.user.id)(o) && o.contribution_type === 'partnership' && o.key_information.includes('pricing'), 1)
    await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=me&tag=hot', (o) => is(ws.user.id)(o) && o.tags.includes('hot'), 1)
    await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=none&tag=hot&status=pending', (o) => is(null)(o) && o.tags.includes('hot') && o.status === 'pending', 2)
    t.same(await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=nobody@example.test', () => false), [], 'an unknown email: an empty page')
    // The merged one (assigned behind the API) is in no listing.
    await app.db.execute(sql`update opportunities set assignee_user_id = ${ana.user.id} where merged_into is not null`)
    await checkFiltered(t, app, ws.keys.mcp, project, 'assignee=ana@example.test', is(ana.user.id))
    const csv = await app.inject({ method: 'GET', url: `${base}/opportunities?assignee=none&tag=hot&format=csv`, headers: h })
    t.equal(csv.statusCode, 200)
    const list = (await app.inject({ method: 'GET', url: `${base}/opportunities?assignee=none&tag=hot&page_size=100`, headers: h })).json()
    t.equal(csv.body.trim().split('\n').length - 1, list.total, 'the CSV export takes the same filters')
  })

  t.test('a member removed from the project, or the workspace, leaves their assignments there', async (t) => {
    const anaHas = (await app.inject({ method: 'GET', url: `${base}/opportunities?assignee=${ana.user.id}&page_size=100`, headers: h })).json().items as { event_id: string; version: number }[]
    t.ok(anaHas.length > 5)
    // Ana is in the second project too, with an assignment there that stays.
    await app.repos.users.setMembership({ userId: ana.user.id, projectId: second.id, role: 'reviewer' })
    const there = (await rest(app, ws.keys.service, 'submit_opportunity', { project: second.id, contribution_type: 'partnership', key_information: 'x', reason: 'r', suggested_action: 'a' })).body.result.event_id
    t.equal((await rest(app, ws.keys.service, 'assign_opportunity', { project: second.id, event_id: there, assignee: 'ana@example.test' })).status, 200)
    const before = (await queued(app, project, 'opportunity.assigned')).length
    const res = await rest(app, ws.keys.service, 'remove_member', { email: 'ana@example.test', from_project: project })
    t.equal(res.status, 200, JSON.stringify(res.body))
    t.same((await app.inject({ method: 'GET', url: `${base}/opportunities?assignee=${ana.user.id}`, headers: h })).json().total, 0)
    const first = await get(anaHas[0]!.event_id)
    t.match(first, { assignee: null, version: anaHas[0]!.version + 1 })
    t.match((await history(anaHas[0]!.event_id)).at(-1), { action: 'assign', actor: { id: ws.user.id }, before: { assignee: 'ana@example.test' }, after: { assignee: null } })
    const all = await queued(app, project, 'opportunity.assigned')
    const msgs = all.filter((m) => m.data.assignment.before.assignee === 'ana@example.test' && m.data.assignment.after.assignee === null)
    t.equal(all.length - before, anaHas.length + 1, 'one message each (the merged one too)')
    t.equal(msgs.length, anaHas.length + 1)
    t.ok(msgs.every((m) => m.data.assignee === null && m.data.assignment.actor.id === ws.user.id))
    t.match((await rest(app, ws.keys.service, 'get_opportunity', { project: second.id, event_id: there })).body.result, { assignee: { id: ana.user.id } }, 'the other project\'s stays')
    // From the workspace: the rest goes.
    const gone = await rest(app, ws.keys.service, 'remove_member', { email: 'ana@example.test' })
    t.equal(gone.status, 200, JSON.stringify(gone.body))
    t.match((await rest(app, ws.keys.service, 'get_opportunity', { project: second.id, event_id: there })).body.result, { assignee: null, version: 3 })
    t.equal((await assign(c, 'ana@example.test')).statusCode, 400, 'a removed member is no assignee')
  })
})
