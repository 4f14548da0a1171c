// Tags (issue 28): made on first use, any case naming the same tag, validation, at most 20 per
// opportunity, rename (a taken name is a conflict) and delete, counts, history entries and
// webhook messages, version preconditions (REST If-Match → 412), merged opportunities refused,
// the same results over REST, /v1/tools and MCP; and the listing by tag (with the other
// filters), its pages, cursors and totals exactly the full listing filtered.
import t from 'tap'
import { sql } from '../../db/orm.ts'
import { bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { checkFiltered, mcp, queued, rest } from '../helpers/triage.ts'

const NOW = '2026-11-20T12:00:00.000Z'

t.test('tags', async (t) => {
  const clock = fixedClock(NOW)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const project = ws.project.id
  const base = `/api/v1/mcp/projects/${project}`
  const h = bearer(ws.keys.mcp)
  await app.repos.webhooks.create({ workspaceId: ws.workspace.id, projectId: project, url: 'http://127.0.0.1:9/hook', events: ['opportunity.tagged', 'tag.renamed', 'tag.deleted'], description: '', secret: 'whsec_c2VjcmV0', createdBy: ws.user.id, now: new Date(NOW) })

  const submit = async (n: number, extra: Record<string, string> = {}, k = h, p = project) => {
    const res = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${p}/opportunities`, headers: k, payload: { contribution_type: n % 2 ? 'content_idea' : 'partnership', key_information: `Lead ${n}${n % 3 ? '' : ' pricing'}`, reason: 'r', suggested_action: 'a', ...extra } })
    if (res.statusCode !== 201) throw new Error(res.body)
    return res.json().event_id as string
  }
  const tag = (id: string, body: object, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url: `${base}/opportunities/${id}/tags`, headers: { ...h, ...headers }, payload: body })
  const get = async (id: string) => (await app.inject({ method: 'GET', url: `${base}/opportunities/${id}`, headers: h })).json()
  const history = async (id: string) => (await app.inject({ method: 'GET', url: `${base}/opportunities/${id}/history`, headers: h })).json().items
  const tags = async () => (await app.inject({ method: 'GET', url: `${base}/tags`, headers: h })).json().items

  const [a, b, c] = [await submit(1), await submit(2), await submit(3)]

  t.test('made on first use; any case names the same tag; names trimmed', async (t) => {
    let res = await tag(a, { add: ['Pricing', ' enterprise ', 'PRICING'] })
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), { event_id: a, tags: ['enterprise', 'Pricing'], version: 2 })
    t.equal(res.headers.etag, '"2"')
    res = await tag(b, { add: ['pricing'] })
    t.same(res.json(), { event_id: b, tags: ['Pricing'], version: 2 }, 'the existing tag, as it is named')
    t.same(await tags(), [{ name: 'enterprise', opportunities: 1 }, { name: 'Pricing', opportunities: 2 }])
    t.match(await get(a), { tags: ['enterprise', 'Pricing'], version: 2 })
    t.match(await history(a), [{ action: 'tag', actor: { id: ws.user.id }, before: { tags: [] }, after: { tags: ['enterprise', 'Pricing'] }, changed_at: NOW }])
    const msgs = await queued(app, project, 'opportunity.tagged')
    t.equal(msgs.length, 2)
    t.match(msgs.find((m) => m.data.event_id === a)!.data, { event_id: a, tags: ['enterprise', 'Pricing'], version: 2, tagging: { actor: { id: ws.user.id }, before: { tags: [] }, after: { tags: ['enterprise', 'Pricing'] } } })
  })

  t.test('nothing to change: no version, no history, no message', async (t) => {
    const res = await tag(a, { add: ['pricing'], remove: ['no such tag'] })
    t.same(res.json(), { event_id: a, tags: ['enterprise', 'Pricing'], version: 2 })
    t.equal((await history(a)).length, 1)
    t.equal((await queued(app, project, 'opportunity.tagged')).length, 2)
  })

  t.test('remove; bad input is a 400 that changes nothing', async (t) => {
    let res = await tag(b, { remove: ['PRICING'] })
    t.same(res.json(), { event_id: b, tags: [], version: 3 })
    t.match((await history(b)).at(-1), { action: 'tag', before: { tags: ['Pricing'] }, after: { tags: [] } })
    const bad: [object, string][] = [
      [{}, ''],
      [{ add: [] }, 'add'],
      [{ add: ['  '] }, 'add[0]'],
      [{ add: ['x'.repeat(41)] }, 'add[0]'],
      [{ add: ['tab\there'] }, 'add[0]'],
      [{ add: ['ok', 'Shared'], remove: ['x', 'shared'] }, 'remove[1]'],
      [{ add: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'add'],
    ]
    for (const [body, field] of bad) {
      res = await tag(b, body)
      t.equal(res.statusCode, 400, JSON.stringify(body))
      t.same(res.json().error.details.map((d: { path: string }) => d.path), [field], JSON.stringify(body))
    }
    t.match(await get(b), { tags: [], version: 3 })
    t.same((await tags()).map((x: { name: string }) => x.name), ['enterprise', 'Pricing'], 'no tag made')
  })

  t.test('at most 20 tags on an opportunity', async (t) => {
    let res = await tag(c, { add: Array.from({ length: 19 }, (_, i) => `t${i}`) })
    t.equal(res.json().tags.length, 19)
    res = await tag(c, { add: ['pricing', 'one more'] })
    t.equal(res.statusCode, 400)
    t.match(res.json().error, { code: 'invalid_arguments', details: [{ path: 'add', message: 'would make 21 tags (at most 20)' }] })
    t.match(await get(c), { version: 2 })
    t.notOk((await tags()).some((x: { name: string }) => x.name === 'one more'), 'nothing made')
    res = await tag(c, { add: ['pricing'], remove: ['t0'] })
    t.same(res.json().tags.length, 19)
    res = await tag(c, { remove: Array.from({ length: 19 }, (_, i) => `t${i}`) })
    t.same(res.json().tags, ['Pricing'])
  })

  t.test('a stale version: REST If-Match 412, a tool call 409; nothing changed', async (t) => {
    const version = (await get(a)).version
    let res = await tag(a, { add: ['late'] }, { 'if-match': `"${version - 1}"` })
    t.equal(res.statusCode, 412)
    t.equal(res.json().error.code, 'precondition_failed')
    t.equal(res.headers.etag, `"${version}"`)
    const tool = await rest(app, ws.keys.service, 'tag_opportunity', { project, event_id: a, add: ['late'], if_version: version - 1 })
    t.equal(tool.status, 409)
    t.match(tool.body.error, { code: 'conflict', details: [{ path: 'if_version' }] })
    t.match(await get(a), { version, tags: ['enterprise', 'Pricing'] })
    res = await tag(a, { add: ['late'] }, { 'if-match': `"${version}"` })
    t.same(res.json(), { event_id: a, tags: ['enterprise', 'late', 'Pricing'], version: version + 1 })
    res = await tag(a, { remove: ['late'] })
    t.equal(res.statusCode, 200)
  })

  t.test('a merged opportunity is refused (409), a missing one 404, another workspace\'s 404', async (t) => {
    const m = await submit(4)
    await app.db.execute(sql`update opportunities set merged_into = ${a} where id = ${m}`)
    let res = await tag(m, { add: ['pricing'] })
    t.equal(res.statusCode, 409)
    t.match(res.json().error.message, `is merged into ${a}; unmerge it first`)
    res = await tag(m, { add: ['pricing'] }, { 'if-match': '"1"' })
    t.equal(res.statusCode, 409, 'merged, even at its version')
    t.match(await get(m), { tags: [], version: 1 })
    res = await tag('opp_doesnotexist000', { add: ['x'] })
    t.equal(res.statusCode, 404)
    const theirs = await submit(1, {}, bearer(other.keys.mcp), other.project.id)
    res = await tag(theirs, { add: ['x'] })
    t.equal(res.statusCode, 404)
    // A merged opportunity's tags count nowhere: tag it behind the API, then list.
    await app.db.execute(sql`insert into opportunity_tags (opportunity_id, tag_id, project_id, received_at) select o.id, t.id, o.project_id, o.received_at from opportunities o, tags t where o.id = ${m} and t.project_id = o.project_id and t.name = 'enterprise'`)
    t.same((await tags()).find((x: { name: string }) => x.name === 'enterprise'), { name: 'enterprise', opportunities: 1 })
  })

  t.test('rename: a taken name is a conflict; every carrier gets a version, a history entry; one tag.renamed', async (t) => {
    const before = { a: (await get(a)).version, c: (await get(c)).version }
    let res = await app.inject({ method: 'PATCH', url: `${base}/tags/pricing`, headers: h, payload: { new_name: 'ENTERPRISE' } })
    t.equal(res.statusCode, 409)
    t.match(res.json().error, { code: 'conflict', details: [{ path: 'new_name' }] })
    t.same({ a: (await get(a)).version, c: (await get(c)).version }, before, 'nothing changed')
    res = await app.inject({ method: 'PATCH', url: `${base}/tags/nope`, headers: h, payload: { new_name: 'x' } })
    t.equal(res.statusCode, 404)
    res = await app.inject({ method: 'PATCH', url: `${base}/tags/pricing`, headers: h, payload: { new_name: ' Price ' } })
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), { name: 'Price', previous_name: 'pricing', opportunities: 2 })
    t.match(await get(a), { tags: ['enterprise', 'Price'], version: before.a + 1 })
    t.match(await get(c), { tags: ['Price'], version: before.c + 1 })
    t.match((await history(a)).at(-1), { action: 'tag', before: { tags: ['enterprise', 'Pricing'] }, after: { tags: ['enterprise', 'Price'] } })
    t.match(await queued(app, project, 'tag.renamed'), [{ data: { name: 'Price', previous_name: 'Pricing', opportunities: 2, actor: { id: ws.user.id } } }])
    // A change of case alone; the same name again changes nothing.
    res = await app.inject({ method: 'PATCH', url: `${base}/tags/price`, headers: h, payload: { new_name: 'price' } })
    t.same(res.json(), { name: 'price', previous_name: 'price', opportunities: 2 })
    res = await app.inject({ method: 'PATCH', url: `${base}/tags/PRICE`, headers: h, payload: { new_name: 'price' } })
    t.same(res.json(), { name: 'price', previous_name: 'PRICE', opportunities: 0 })
    t.equal((await queued(app, project, 'tag.renamed')).length, 2)
    t.match(await get(a), { tags: ['enterprise', 'price'], version: before.a + 2 })
  })

  t.test('the listing by tag, with the other filters: pages and cursors exact', async (t) => {
    // 30 more, some at the same instant (ties), tagged in a pattern.
    for (let i = 10; i < 40; i++) {
      clock.set(`2026-11-2${i % 4}T10:00:0${i % 2}Z`)
      const id = await submit(i)
      if (i % 3 === 0) await tag(id, { add: ['hot'] })
      if (i % 4 === 0) await tag(id, { add: ['Hot', 'q4'] })
      if (i % 5 === 0) await app.inject({ method: 'PATCH', url: `${base}/opportunities/${id}/review`, headers: h, payload: { status: 'reviewing' } })
    }
    clock.set(NOW)
    const has = (name: string) => (o: { tags: string[] }) => o.tags.some((x) => x.toLowerCase() === name)
    t.equal((await checkFiltered(t, app, ws.keys.mcp, project, 'tag=hot', has('hot'))).length, 14)
    await checkFiltered(t, app, ws.keys.mcp, project, 'tag=HOT', has('hot'), 4)
    await checkFiltered(t, app, ws.keys.mcp, project, 'tag=q4&status=reviewing', (o) => has('q4')(o) && o.status === 'reviewing', 1)
    await checkFiltered(t, app, ws.keys.mcp, project, 'tag=hot&type=partnership', (o) => has('hot')(o) && o.contribution_type === 'partnership', 2)
    await checkFiltered(t, app, ws.keys.mcp, project, 'tag=hot&q=pricing', (o) => has('hot')(o) && o.key_information.includes('pricing'), 2)
    await checkFiltered(t, app, ws.keys.mcp, project, 'tag=price&evaluation=all', has('price'))
    t.same(await checkFiltered(t, app, ws.keys.mcp, project, 'tag=no%20such%20tag', () => false), [], 'an unknown tag: an empty page')
    // The merged one carries enterprise but is in no listing.
    t.equal((await checkFiltered(t, app, ws.keys.mcp, project, 'tag=enterprise', has('enterprise'))).length, 1)
    // The export takes the same filter.
    const csv = await app.inject({ method: 'GET', url: `${base}/opportunities?tag=q4&status=reviewing&format=csv`, headers: h })
    t.equal(csv.statusCode, 200)
    const list = (await app.inject({ method: 'GET', url: `${base}/opportunities?tag=q4&status=reviewing&page_size=100`, headers: h })).json()
    t.equal(csv.body.trim().split('\n').length - 1, list.total, 'the CSV has the listing\'s rows')
    t.ok(list.items.every((o: { event_id: string }) => csv.body.includes(o.event_id)))
  })

  t.test('delete: off every opportunity, each a version and a history entry; one tag.deleted', async (t) => {
    const carriers = (await app.inject({ method: 'GET', url: `${base}/opportunities?tag=hot&page_size=100`, headers: h })).json().items as { event_id: string; version: number; tags: string[] }[]
    t.equal(carriers.length, 14)
    const res = await app.inject({ method: 'DELETE', url: `${base}/tags/HOT`, headers: h })
    t.equal(res.statusCode, 200, res.body)
    t.same(res.json(), { name: 'hot', deleted: true, opportunities: 14 })
    for (const o of carriers.slice(0, 3)) {
      const now = await get(o.event_id)
      t.same(now.tags, o.tags.filter((x) => x !== 'hot'))
      t.equal(now.version, o.version + 1)
      t.match((await history(o.event_id)).at(-1), { action: 'tag', before: { tags: o.tags }, after: { tags: o.tags.filter((x) => x !== 'hot') } })
    }
    t.match(await queued(app, project, 'tag.deleted'), [{ data: { name: 'hot', opportunities: 14, actor: { id: ws.user.id } } }])
    t.equal((await app.inject({ method: 'DELETE', url: `${base}/tags/hot`, headers: h })).statusCode, 404)
    t.same((await app.inject({ method: 'GET', url: `${base}/opportunities?tag=hot`, headers: h })).json().items, [])
  })

  t.test('the same results over REST, /v1/tools and MCP; a viewer may not tag', async (t) => {
    const key = ws.keys.service
    const viaRest = (await app.inject({ method: 'GET', url: `${base}/tags`, headers: h })).json()
    t.same((await rest(app, key, 'list_tags', { project })).body.result, viaRest)
    t.same((await mcp(app, key, 'list_tags', { project })).body.result, viaRest)
    const restTag = (await tag(a, { add: ['enterprise'] })).json()
    t.same((await rest(app, key, 'tag_opportunity', { project, event_id: a, add: ['enterprise'] })).body.result, restTag)
    t.same((await mcp(app, key, 'tag_opportunity', { project, event_id: a, add: ['enterprise'] })).body.result, restTag)
    const merged = await mcp(app, key, 'tag_opportunity', { project, event_id: (await app.inject({ method: 'GET', url: `${base}/opportunities?page_size=1`, headers: h })).json().items[0].event_id, add: ['x'], if_version: 1000 })
    t.equal(merged.status, 409)
    const restError = await rest(app, key, 'rename_tag', { project, name: 'price', new_name: 'Enterprise' })
    t.same(await mcp(app, key, 'rename_tag', { project, name: 'price', new_name: 'Enterprise' }), restError)
    t.equal(restError.status, 409)
  })
})
