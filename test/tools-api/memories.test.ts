// Memories over REST: add (201), list with full-text query, tag and pagination, partial
// PATCH, DELETE, the 8000-character bound, roles, narrowed keys and other workspaces.
import t from 'tap'
import { addMember, bearer, buildTestApp, expectStatus, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { createKey } from '../../bin/admin.ts'

interface Memory {
  id: string
  project: string
  content: string
  tags: string[]
  source: string
  created_by: string | null
  created_at: string
  updated_at: string
}

/** 2026-11-20T10:0m:00.000Z — one minute per memory, so "newest first" is well defined. */
const minute = (m: number) => `2026-11-20T10:${String(m).padStart(2, '0')}:00.000Z`

t.test('memories', async (t) => {
  const clock = fixedClock(minute(0))
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const h = bearer(ws.keys.service)
  const project = ws.project.id
  const add = (payload: unknown, headers: Record<string, string> = h, ref = project) =>
    app.inject({ method: 'POST', url: `/v1/projects/${ref}/memories`, headers, payload: payload as object })
  const list = (query = '', headers: Record<string, string> = h, ref = project) =>
    app.inject({ method: 'GET', url: `/v1/projects/${ref}/memories${query}`, headers })
  const patch = (id: string, payload?: unknown, headers: Record<string, string> = h) =>
    app.inject({ method: 'PATCH', url: `/v1/memories/${id}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) })
  const remove = (id: string, headers: Record<string, string> = h) => app.inject({ method: 'DELETE', url: `/v1/memories/${id}`, headers })
  const ids = (res: { json(): { items: Memory[] } }) => res.json().items.map((m) => m.id)

  const seeds = [
    { content: 'Pricing page converts best on Tuesdays', tags: ['pricing', 'conversion'], source: 'analytics' },
    { content: 'Annual pricing plans reduce churn by a third', tags: ['pricing'], source: 'finance' },
    { content: 'Newsletter readers sign up twice as often', tags: ['newsletter', 'conversion'], source: '' },
    { content: 'The onboarding email sequence needs a rewrite', tags: [], source: 'support' },
    { content: 'Partners asked for a referral program with pricing tiers', tags: ['partners'], source: 'sales call' },
  ]
  const made: Memory[] = []

  t.test('POST /v1/projects/:project/memories adds a memory (201)', async (t) => {
    for (const [i, seed] of seeds.entries()) {
      clock.set(minute(i + 1))
      const res = await add(seed, h, i % 2 ? ws.project.slug : project)
      expectStatus(t, res, 201)
      const m: Memory = res.json()
      t.match(m.id, /^mem_[0-9A-Za-z]+$/)
      t.same(m, { id: m.id, project, ...seed, created_by: ws.user.email, created_at: minute(i + 1), updated_at: minute(i + 1) })
      made.push(m)
    }
    // tags and source are optional.
    clock.set(minute(9))
    const bare = await add({ content: 'Bare memory' })
    expectStatus(t, bare, 201)
    t.match(bare.json(), { content: 'Bare memory', tags: [], source: '' })
    t.same((await remove(bare.json().id)).json(), { id: bare.json().id, deleted: true })
  })

  t.test('listing: newest first, full-text query, tag, both', async (t) => {
    let res = await list()
    expectStatus(t, res, 200)
    t.same(res.json(), { items: [...made].reverse(), page: 1, page_size: 20, total: 5, total_pages: 1 })

    res = await list('?query=pricing')
    t.same(ids(res), [made[4]!.id, made[1]!.id, made[0]!.id])
    t.equal(res.json().total, 3)
    // Full text with stemming (web-search syntax), not substring matching.
    res = await list('?query=plan')
    t.same(ids(res), [made[1]!.id], 'plan matches plans')
    res = await list(`?query=${encodeURIComponent('"pricing page"')}`)
    t.same(ids(res), [made[0]!.id], 'exact phrase')
    res = await list(`?query=${encodeURIComponent('pricing -churn')}`)
    t.same(ids(res), [made[4]!.id, made[0]!.id], 'exclusion')
    res = await list(`?query=${encodeURIComponent('newsletter or onboarding')}`)
    t.same(ids(res), [made[3]!.id, made[2]!.id], 'or')
    res = await list('?query=zzzqqq')
    t.same(res.json(), { items: [], page: 1, page_size: 20, total: 0, total_pages: 0 })
    // Tags are part of what the query searches.
    res = await list('?query=partners')
    t.same(ids(res), [made[4]!.id])

    res = await list('?tag=conversion')
    t.same(ids(res), [made[2]!.id, made[0]!.id])
    res = await list('?tag=pricing')
    t.same(ids(res), [made[1]!.id, made[0]!.id], 'tag is exact: a memory mentioning pricing without the tag is not listed')
    res = await list('?tag=Pricing')
    t.same(ids(res), [], 'tags are case-sensitive')
    res = await list('?tag=pricing&query=churn')
    t.same(ids(res), [made[1]!.id])
    t.equal(res.json().total, 1)
  })

  t.test('listing: pagination', async (t) => {
    const reversed = [...made].reverse().map((m) => m.id)
    let res = await list('?page_size=2')
    t.same({ ...res.json(), items: ids(res) }, { items: reversed.slice(0, 2), page: 1, page_size: 2, total: 5, total_pages: 3 })
    res = await list('?page_size=2&page=2')
    t.same({ ...res.json(), items: ids(res) }, { items: reversed.slice(2, 4), page: 2, page_size: 2, total: 5, total_pages: 3 })
    res = await list('?page_size=2&page=3')
    t.same({ ...res.json(), items: ids(res) }, { items: reversed.slice(4), page: 3, page_size: 2, total: 5, total_pages: 3 })
    res = await list('?page_size=2&page=4')
    t.same(res.json(), { items: [], page: 4, page_size: 2, total: 5, total_pages: 3 })
    res = await list('?page_size=1&query=pricing&page=2')
    t.same({ ...res.json(), items: ids(res) }, { items: [made[1]!.id], page: 2, page_size: 1, total: 3, total_pages: 3 })
    res = await list('?page_size=100')
    t.equal(res.json().items.length, 5)
    for (const [query, path] of [
      ['?page_size=101', 'page_size'],
      ['?page_size=0', 'page_size'],
      ['?page=0', 'page'],
      ['?page=two', 'page'],
      ['?query=', 'query'],
      ['?tag=', 'tag'],
      ['?sort=new', 'sort'],
    ] as const) {
      res = await list(query)
      t.equal(res.statusCode, 400, query)
      t.equal(res.json().error.code, 'invalid_arguments', query)
      t.same(res.json().error.details.map((d: { path: string }) => d.path), [path], query)
    }
  })

  t.test('PATCH /v1/memories/:id changes only the sent fields', async (t) => {
    const m = made[0]!
    clock.set(minute(20))
    let res = await patch(m.id, { content: 'Pricing page converts best on Tuesdays and Wednesdays' })
    expectStatus(t, res, 200)
    t.same(res.json(), { ...m, content: 'Pricing page converts best on Tuesdays and Wednesdays', updated_at: minute(20) })

    clock.set(minute(21))
    res = await patch(m.id, { tags: ['weekday'] })
    expectStatus(t, res, 200)
    t.same(res.json(), { ...m, content: 'Pricing page converts best on Tuesdays and Wednesdays', tags: ['weekday'], updated_at: minute(21) }, 'tags are replaced, not merged')
    res = await patch(m.id, { tags: [], source: 'dashboard' })
    t.same(res.json(), { ...m, content: 'Pricing page converts best on Tuesdays and Wednesdays', tags: [], source: 'dashboard', updated_at: minute(21) })
    // The listing and the search follow the change.
    t.same(ids(await list('?tag=pricing')), [made[1]!.id])
    t.same(ids(await list('?query=wednesdays')), [m.id])
    t.match((await list()).json().items.find((x: Memory) => x.id === m.id), { source: 'dashboard', created_at: m.created_at })

    const before = res.json()
    for (const [what, body, path] of [
      ['empty object', {}, ''],
      ['unknown field', { pinned: true }, 'pinned'],
      ['id in the body', { id: made[1]!.id }, 'id'],
      ['project in the body', { project: other.project.id }, 'project'],
      ['wrong type', { tags: 'weekday' }, 'tags'],
      ['empty content', { content: '' }, 'content'],
      ['tag with a space', { tags: ['two words'] }, 'tags[0]'],
      ['duplicate tags', { tags: ['a', 'a'] }, 'tags'],
      ['too many tags', { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
    ] as const) {
      res = await patch(m.id, body)
      t.equal(res.statusCode, 400, what)
      t.equal(res.json().error.code, 'invalid_arguments', what)
      t.same(res.json().error.details.map((d: { path: string }) => d.path), [path], what)
    }
    res = await patch(m.id)
    t.equal(res.statusCode, 400, 'no body at all')
    t.equal(res.json().error.code, 'invalid_arguments')
    t.same((await list()).json().items.find((x: Memory) => x.id === m.id), before, 'nothing changed')

    res = await patch('mem_doesnotexist', { content: 'x' })
    t.equal(res.statusCode, 404)
    t.equal(res.json().error.code, 'not_found')
    res = await patch('not-a-memory-id', { content: 'x' })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details.map((d: { path: string }) => d.path), ['id'])
  })

  t.test('content: 8000 characters at most', async (t) => {
    let res = await add({ content: 'a'.repeat(8000) })
    expectStatus(t, res, 201)
    const id = res.json().id
    t.equal(res.json().content.length, 8000)
    // Characters, not bytes or UTF-16 units: 8000 emoji fit.
    res = await add({ content: '😀'.repeat(8000) })
    expectStatus(t, res, 201)
    const emoji = res.json().id
    res = await add({ content: 'a'.repeat(8001) })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details, [{ path: 'content', message: 'must NOT have more than 8000 characters' }])
    res = await patch(id, { content: 'b'.repeat(8001) })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details, [{ path: 'content', message: 'must NOT have more than 8000 characters' }])
    res = await patch(id, { content: 'b'.repeat(8000) })
    expectStatus(t, res, 200)
    t.equal(res.json().content, 'b'.repeat(8000))
    res = await add({ content: 'x', source: 's'.repeat(201) })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details.map((d: { path: string }) => d.path), ['source'])
    res = await add({})
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details, [{ path: 'content', message: 'is required' }])
    t.same((await remove(id)).json(), { id, deleted: true })
    t.same((await remove(emoji)).json(), { id: emoji, deleted: true })
    t.equal((await list()).json().total, 5)
  })

  t.test('DELETE /v1/memories/:id forgets it for good', async (t) => {
    const res = await add({ content: 'A short-lived fact about pricing', tags: ['temp'] })
    const id = res.json().id
    t.equal((await list('?tag=temp')).json().total, 1)
    const search = () => app.inject({ method: 'POST', url: '/v1/tools/search_signals', headers: h, payload: { project, query: 'short-lived fact' } })
    t.same((await search()).json().result.results.map((r: { id: string }) => r.id), [id])
    const del = await remove(id)
    expectStatus(t, del, 200)
    t.same(del.json(), { id, deleted: true })
    for (const again of [await remove(id), await patch(id, { content: 'back' })]) {
      t.equal(again.statusCode, 404)
      t.equal(again.json().error.code, 'not_found')
    }
    t.equal((await list('?tag=temp')).json().total, 0)
    t.same((await search()).json().result.results, [], 'no longer searchable')
    t.equal((await remove('mem_doesnotexist')).statusCode, 404)
    t.equal((await remove('bogus')).statusCode, 400)
  })

  t.test('roles: viewers read, reviewers and owners write', async (t) => {
    const viewer = await addMember(app, project, 'viewer')
    const reviewer = await addMember(app, project, 'reviewer')
    const vh = bearer(viewer.keys.service)
    const rh = bearer(reviewer.keys.service)
    const m = made[2]!
    const before = (await list()).json()

    let res = await list('', vh)
    expectStatus(t, res, 200)
    t.same(res.json(), before, 'a viewer lists the same memories')
    res = await list('?query=newsletter&tag=conversion', vh)
    t.same(ids(res), [m.id])
    for (const [what, r] of [
      ['add', await add({ content: 'viewer note' }, vh)],
      ['update', await patch(m.id, { content: 'viewer edit' }, vh)],
      ['delete', await remove(m.id, vh)],
    ] as const) {
      t.equal(r.statusCode, 403, `viewer ${what}`)
      t.equal(r.json().error.code, 'review_access_required', `viewer ${what}`)
    }
    t.same((await list()).json(), before, 'nothing changed')

    // A read-only key of a reviewer acts as a viewer.
    const readOnly = await createKey(app, { email: reviewer.user.email, kind: 'service', readOnly: true })
    res = await patch(m.id, { content: 'read-only edit' }, bearer(readOnly.key))
    t.equal(res.statusCode, 403)
    res = await add({ content: 'read-only note' }, bearer(readOnly.key))
    t.equal(res.statusCode, 403)

    clock.set(minute(30))
    res = await add({ content: 'Reviewer note on newsletter timing', tags: ['newsletter'] }, rh)
    expectStatus(t, res, 201)
    t.equal(res.json().created_by, reviewer.user.email)
    const theirs = res.json().id
    res = await patch(m.id, { source: 'reviewer' }, rh)
    expectStatus(t, res, 200)
    t.equal(res.json().source, 'reviewer')
    t.equal(res.json().created_by, ws.user.email, 'the author stays the author')
    // The owner may change or forget a reviewer's memory, and the reviewer the owner's.
    res = await patch(theirs, { tags: ['newsletter', 'timing'] })
    expectStatus(t, res, 200)
    res = await remove(theirs, rh)
    t.same(res.json(), { id: theirs, deleted: true })
  })

  t.test('memories of projects one cannot reach are not found', async (t) => {
    const m = made[3]!
    const oh = bearer(other.keys.service)
    for (const [what, res] of [
      ['patch', await patch(m.id, { content: 'hijack' }, oh)],
      ['delete', await remove(m.id, oh)],
      ['list', await list('', oh)],
      ['add', await add({ content: 'plant' }, oh)],
    ] as const) {
      t.equal(res.statusCode, 404, `other workspace: ${what}`)
      t.equal(res.json().error.code, 'not_found', what)
    }
    // Their memories are equally invisible the other way round.
    const planted = await add({ content: 'their memory' }, oh, other.project.id)
    expectStatus(t, planted, 201)
    t.equal((await patch(planted.json().id, { content: 'mine now' })).statusCode, 404)
    t.equal((await remove(planted.json().id)).statusCode, 404)

    // Same workspace, but no member of the memory's project.
    const second = await app.inject({ method: 'POST', url: '/v1/projects', headers: h, payload: { slug: 'second', name: 'Second' } })
    const outsider = await addMember(app, second.json().id, 'owner')
    t.equal((await patch(m.id, { content: 'x' }, bearer(outsider.keys.service))).statusCode, 404)
    t.equal((await remove(m.id, bearer(outsider.keys.service))).statusCode, 404)
    t.equal((await list('', bearer(outsider.keys.service))).statusCode, 404)

    // A key narrowed to one project reaches no memory of another.
    const narrowed = await createKey(app, { email: ws.user.email, kind: 'service', project: second.json().id })
    t.equal((await patch(m.id, { content: 'x' }, bearer(narrowed.key))).statusCode, 404)
    t.equal((await list('', bearer(narrowed.key))).statusCode, 404)

    t.match((await list()).json().items.find((x: Memory) => x.id === m.id), { content: seeds[3]!.content }, 'unchanged')
  })
})
