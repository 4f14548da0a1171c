// search_signals: ranked full-text search over a project's opportunities and memories, with
// bold snippets, kinds, limit, web-search syntax, review access and project isolation.
import t from 'tap'
import { addMember, bearer, buildTestApp, expectStatus, fixedClock, seedWorkspace } from '../helpers/app.ts'

interface Hit {
  kind: 'opportunity' | 'memory'
  id: string
  title: string
  snippet: string
  rank: number
  at: string
}

const minute = (m: number) => `2026-11-20T09:${String(m).padStart(2, '0')}:00.000Z`

t.test('search_signals', async (t) => {
  const clock = fixedClock(minute(0))
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const h = bearer(ws.keys.service)
  const project = ws.project.id

  const submit = async (m: number, body: Record<string, string>, key = ws.keys.mcp, ref = project) => {
    clock.set(minute(m))
    const res = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${ref}/opportunities`, headers: bearer(key), payload: body })
    expectStatus(t, res, 201)
    return res.json().event_id as string
  }
  const remember = async (m: number, content: string, tags: string[] = [], key = ws.keys.service, ref = project) => {
    clock.set(minute(m))
    const res = await app.inject({ method: 'POST', url: `/v1/projects/${ref}/memories`, headers: bearer(key), payload: { content, tags } })
    expectStatus(t, res, 201)
    return res.json().id as string
  }
  const search = async (args: Record<string, unknown>, key = ws.keys.service) => {
    const res = await app.inject({ method: 'POST', url: '/v1/tools/search_signals', headers: bearer(key), payload: { project, ...args } })
    expectStatus(t, res, 200)
    return res.json().result as { query: string; searched: string[]; results: Hit[] }
  }
  const ids = (r: { results: Hit[] }) => r.results.map((x) => x.id)

  // "webinar" four times, three times, once, once; "podcast" and "newsletter" elsewhere.
  const memMany = await remember(1, 'Webinar checklist: record the webinar, send the webinar replay, follow up after the webinar', ['events', 'checklist'])
  const oppThree = await submit(2, {
    contribution_type: 'partnership',
    key_information: 'Co-host a webinar with Acme; their last webinar drew 2000 people',
    reason: 'Webinar audiences convert well',
    suggested_action: 'Email their partnerships lead',
  })
  const memOnce = await remember(3, 'Our webinar in March converted poorly')
  const oppOnce = await submit(4, {
    contribution_type: 'newsletter_swap',
    key_information: 'A newsletter with 40k readers offers a swap; mention our webinar',
    reason: 'Similar audience',
    suggested_action: 'Reply with our media kit',
  })
  const oppPodcast = await submit(5, {
    contribution_type: 'potential_user_opportunity',
    key_information: 'A podcast host invited our founder',
    reason: 'Reach developers',
    suggested_action: 'Book a recording slot',
  })
  // Noise elsewhere: another project of this workspace and another workspace.
  const second = await app.inject({ method: 'POST', url: '/v1/projects', headers: h, payload: { slug: 'second', name: 'Second' } })
  await remember(6, 'A webinar webinar webinar webinar webinar in another project', [], ws.keys.service, second.json().id)
  await submit(7, { contribution_type: 'partnership', key_information: 'Webinar with a foreign workspace', reason: 'webinar', suggested_action: 'webinar' }, other.keys.mcp, other.project.id)
  await remember(8, 'Webinar notes of another workspace', [], other.keys.service, other.project.id)

  t.test('finds opportunities and memories, ranked by how much they match', async (t) => {
    const r = await search({ query: 'webinar' })
    t.equal(r.query, 'webinar')
    t.same(r.searched, ['opportunity', 'memory'])
    t.same(ids(r).slice(0, 2), [memMany, oppThree], 'four mentions, then three')
    t.same(ids(r).slice(2).sort(), [memOnce, oppOnce].sort(), 'then the single mentions')
    t.equal(r.results.length, 4, 'nothing from another project or workspace')
    const [many, three, once1, once2] = r.results as [Hit, Hit, Hit, Hit]
    t.ok(many.rank > three.rank, `${many.rank} > ${three.rank}`)
    t.ok(three.rank > once1.rank, `${three.rank} > ${once1.rank}`)
    t.equal(once1.rank, once2.rank, 'equal matches rank equally')
    // Ties go to the newer one.
    t.same([once1.id, once2.id], [oppOnce, memOnce])
    for (const hit of r.results) {
      t.type(hit.rank, 'number')
      t.ok(hit.rank > 0)
      t.match(hit.snippet, /\*\*webinar\*\*/i, `${hit.id} snippet marks the match`)
    }
    t.same(r.results.find((x) => x.id === memOnce), {
      kind: 'memory',
      id: memOnce,
      title: 'memory',
      // ts_headline drops short words (≤ 3 letters) at the edges: "Our" is not shown.
      snippet: 'Our **webinar** in March converted poorly',
      rank: once1.rank,
      at: minute(3),
    })
    t.match(r.results.find((x) => x.id === memMany), { kind: 'memory', title: 'events, checklist', at: minute(1) })
    t.match(r.results.find((x) => x.id === oppThree), { kind: 'opportunity', title: 'partnership', at: minute(2) })
    t.match(r.results.find((x) => x.id === oppThree)!.snippet, /host a \*\*webinar\*\* with Acme; their last \*\*webinar\*\* drew 2000 people — \*\*Webinar\*\* audiences/)
  })

  t.test('words match by stem and across fields', async (t) => {
    t.same(ids(await search({ query: 'webinars' })).length, 4, 'plural finds singular')
    t.same(ids(await search({ query: 'converting' })).sort(), [oppThree, memOnce].sort(), 'convert, converted')
    t.same(ids(await search({ query: 'partnerships lead' })), [oppThree], 'suggested_action is searched')
    t.same(ids(await search({ query: 'potential_user_opportunity' })), [oppPodcast], 'the type is searched')
    t.same(ids(await search({ query: 'checklist' })), [memMany])
  })

  t.test('kinds restricts what is searched', async (t) => {
    let r = await search({ query: 'webinar', kinds: ['memory'] })
    t.same(r.searched, ['memory'])
    t.same(ids(r), [memMany, memOnce])
    t.ok(r.results.every((x) => x.kind === 'memory'))
    r = await search({ query: 'webinar', kinds: ['opportunity'] })
    t.same(r.searched, ['opportunity'])
    t.same(ids(r), [oppThree, oppOnce])
    r = await search({ query: 'webinar', kinds: ['memory', 'opportunity'] })
    t.same(r.searched, ['memory', 'opportunity'])
    t.equal(r.results.length, 4)
  })

  t.test('limit', async (t) => {
    let r = await search({ query: 'webinar', limit: 1 })
    t.same(ids(r), [memMany])
    r = await search({ query: 'webinar', limit: 2 })
    t.same(ids(r), [memMany, oppThree])
    r = await search({ query: 'webinar', limit: 50 })
    t.equal(r.results.length, 4)
    const res = await app.inject({ method: 'POST', url: '/v1/tools/search_signals', headers: h, payload: { project, query: 'webinar', limit: 51 } })
    t.equal(res.statusCode, 400)
  })

  t.test('web-search syntax: "phrases", -exclusions, or', async (t) => {
    t.same(ids(await search({ query: '"webinar replay"' })), [memMany])
    t.same(ids(await search({ query: '"replay webinar"' })), [], 'a phrase keeps its order')
    t.same(ids(await search({ query: '"last webinar"' })), [oppThree])
    let r = await search({ query: 'webinar -march' })
    t.same(ids(r).sort(), [memMany, oppThree, oppOnce].sort())
    // An exclusion filters, and the rest still ranks: as `webinar` alone ranks the same hits.
    const alone = await search({ query: 'webinar' })
    const rankOf = (res: typeof r, id: string) => res.results.find((h) => h.id === id)?.rank
    for (const id of [memMany, oppThree, oppOnce]) t.equal(rankOf(r, id), rankOf(alone, id), `${id}: ranked as without the exclusion`)
    t.ok(r.results.every((h) => h.rank > 0), 'no hit ranks 0')
    t.same(ids(r), [memMany, oppThree, oppOnce], 'most matches first')
    r = await search({ query: 'webinar -march -newsletter -acme' })
    t.same(ids(r), [memMany])
    r = await search({ query: 'podcast or newsletter' })
    t.same(ids(r).sort(), [oppPodcast, oppOnce].sort())
    t.same(ids(await search({ query: 'podcast webinar' })), [], 'words without or must all match')
    t.same(ids(await search({ query: 'zzzqqq' })), [])
    // An exclusion alone matches everything without the word.
    t.same(ids(await search({ query: '-webinar' })), [oppPodcast])
    // Stop words only, or punctuation only: no match, never an error.
    for (const query of ['the and of', '!!! & | :* ()', '"']) {
      const res = await app.inject({ method: 'POST', url: '/v1/tools/search_signals', headers: h, payload: { project, query } })
      t.equal(res.statusCode, 200, query)
      t.same(res.json().result.results, [], query)
    }
  })

  t.test('without review access only memories are searched', async (t) => {
    const viewer = await addMember(app, project, 'viewer')
    let r = await search({ query: 'webinar' }, viewer.keys.service)
    t.same(r.searched, ['memory'])
    t.same(ids(r), [memMany, memOnce])
    r = await search({ query: 'webinar', kinds: ['opportunity'] }, viewer.keys.service)
    t.same(r, { query: 'webinar', searched: [], results: [] })
    const reviewer = await addMember(app, project, 'reviewer')
    r = await search({ query: 'webinar' }, reviewer.keys.service)
    t.same(r.searched, ['opportunity', 'memory'])
    t.equal(r.results.length, 4)
  })

  t.test('another project is searched by selecting it', async (t) => {
    const r = await search({ project: 'second', query: 'webinar' })
    t.equal(r.results.length, 1)
    t.equal(r.results[0]!.kind, 'memory')
    const theirs = await search({ project: other.project.id, query: 'webinar' }, other.keys.service)
    t.equal(theirs.results.length, 2)
    const res = await app.inject({ method: 'POST', url: '/v1/tools/search_signals', headers: h, payload: { project: other.project.id, query: 'webinar' } })
    t.equal(res.statusCode, 404)
  })
})
