// review_opportunities (one review for several opportunities, all or nothing) over REST and MCP:
// the same results and the same errors on both, nothing changed when one id is not the
// project's, one history entry per opportunity; and list_opportunities' text search `q`.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { addMember, addProject, bearer, buildTestApp, fixedClock, PUBLIC_URL, seedWorkspace } from '../helpers/app.ts'

const NOW = '2026-11-20T12:00:00.000Z'

interface Answer {
  status: number
  body: { result?: any; error?: { code: string; message: string; details?: { path: string; message: string }[] } }
}

/** A tool call over REST: the status and the body. */
async function rest(app: FastifyInstance, key: string, name: string, args: object): Promise<Answer> {
  const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: args })
  return { status: res.statusCode, body: res.json() }
}

/** The same call over MCP (2025-11-25): a result's structuredContent, or an error's JSON text with its status. */
async function mcp(app: FastifyInstance, key: string, name: string, args: object): Promise<Answer> {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { host: new URL(PUBLIC_URL).host, ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  })
  const text = res.body.startsWith('{') ? res.body : /^data: (.*)$/m.exec(res.body)![1]!
  const { result } = JSON.parse(text) as { result: { isError?: boolean; content: { text: string }[]; structuredContent?: unknown } }
  if (!result.isError) return { status: 200, body: { result: result.structuredContent } }
  const body = JSON.parse(result.content[0]!.text) as Answer['body']
  const status = { invalid_arguments: 400, not_found: 404, review_access_required: 403, forbidden: 403 }[body.error!.code] ?? 500
  return { status, body }
}

t.test('review_opportunities', async (t) => {
  const app = await buildTestApp(t, { now: fixedClock(NOW) })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const second = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Second', slug: 'second' })
  const viewer = await addMember(app, ws.project.id, 'viewer')
  const project = ws.project.slug
  const key = ws.keys.service

  const submit = async (p: string, k: string, fields: Record<string, string> = {}) => {
    const res = await rest(app, k, 'submit_opportunity', { project: p, contribution_type: 'partnership', key_information: 'A lead', reason: 'inbound', suggested_action: 'reply', ...fields })
    if (res.status !== 200) throw new Error(`submit: ${JSON.stringify(res.body)}`)
    return res.body.result.event_id as string
  }
  const ids: string[] = []
  for (let i = 0; i < 6; i++) ids.push(await submit(project, key, { key_information: `Lead ${i}` }))
  const secondOpp = await submit(second.slug, key)
  const otherOpp = await submit(other.project.slug, other.keys.service)

  /** Every opportunity of the project as the listing shows it, and every history, by id. */
  const state = async () => {
    const list = (await rest(app, key, 'list_opportunities', { project, page_size: 100 })).body.result
    const histories: Record<string, unknown> = {}
    for (const id of ids) histories[id] = (await rest(app, key, 'get_review_history', { project, event_id: id })).body.result.items
    return { items: list.items, histories }
  }

  t.test('REST and MCP: the same result, in the order given, each with its history entry', async (t) => {
    const [a, b, c, d] = ids as [string, string, string, string]
    // c was reviewed before: its history entry shows its own before.
    t.equal((await rest(app, key, 'review_opportunity', { project, event_id: c, evaluation: 'not_useful' })).status, 200)
    const viaRest = await rest(app, key, 'review_opportunities', { project, event_ids: [c, a], status: 'reviewing', evaluation: 'useful' })
    t.equal(viaRest.status, 200)
    t.same(viaRest.body.result, {
      items: [
        { event_id: c, evaluation: 'useful', status: 'reviewing', review_note: '', review_updated_at: NOW, version: 3 },
        { event_id: a, evaluation: 'useful', status: 'reviewing', review_note: '', review_updated_at: NOW, version: 2 },
      ],
    })
    const viaMcp = await mcp(app, key, 'review_opportunities', { project, event_ids: [b, d], status: 'reviewing', evaluation: 'useful' })
    t.equal(viaMcp.status, 200)
    t.same(viaMcp.body.result, {
      items: [
        { event_id: b, evaluation: 'useful', status: 'reviewing', review_note: '', review_updated_at: NOW, version: 2 },
        { event_id: d, evaluation: 'useful', status: 'reviewing', review_note: '', review_updated_at: NOW, version: 2 },
      ],
    })
    const { histories } = await state()
    const actor = { id: ws.user.id, email: ws.user.email }
    for (const id of [a, b, d]) {
      t.same(histories[id], [{ changed_at: NOW, action: 'review', actor, before: { evaluation: '', status: 'pending' }, after: { evaluation: 'useful', status: 'reviewing' } }], `${id}: one entry`)
    }
    t.same(histories[c], [
      { changed_at: NOW, action: 'review', actor, before: { evaluation: '' }, after: { evaluation: 'not_useful' } },
      { changed_at: NOW, action: 'review', actor, before: { evaluation: 'not_useful', status: 'pending' }, after: { evaluation: 'useful', status: 'reviewing' } },
    ], 'after the single review, the bulk one')
    // Only the sent fields change: a note alone keeps status and evaluation.
    const note = await rest(app, key, 'review_opportunities', { project, event_ids: [a, b], note: 'Called both' })
    t.match(note.body.result.items, [{ event_id: a, status: 'reviewing', evaluation: 'useful', review_note: 'Called both' }, { event_id: b, status: 'reviewing', review_note: 'Called both' }])
    t.same((await state()).histories[a], [
      { changed_at: NOW, action: 'review', actor, before: { evaluation: '', status: 'pending' }, after: { evaluation: 'useful', status: 'reviewing' } },
      { changed_at: NOW, action: 'review', actor, before: { review_note: '' }, after: { review_note: 'Called both' } },
    ])
    // The status counters follow: the listing's totals by status.
    const reviewing = await rest(app, key, 'list_opportunities', { project, status: 'reviewing' })
    t.equal(reviewing.body.result.total, 4)
  })

  t.test('one id not in the project: 404 naming it on both surfaces, and nothing changes', async (t) => {
    const before = await state()
    for (const [label, missing, at] of [
      ['no such opportunity', 'opp_doesnotexist000', 1],
      ["another project's", secondOpp, 2],
      ["another workspace's", otherOpp, 0],
    ] as const) {
      const eventIds = [ids[4]!, ids[5]!]
      eventIds.splice(at, 0, missing)
      const args = { project, event_ids: eventIds, status: 'done' }
      const viaRest = await rest(app, key, 'review_opportunities', args)
      const viaMcp = await mcp(app, key, 'review_opportunities', args)
      t.equal(viaRest.status, 404, label)
      t.equal(viaRest.body.error!.code, 'not_found')
      t.match(viaRest.body.error!.message, missing, `${label}: the message names the missing id`)
      t.notMatch(viaRest.body.error!.message, ids[4]!, 'and not the others')
      t.same(viaRest.body.error!.details, [{ path: `event_ids[${at}]`, message: `'${missing}' was not found in this project` }])
      t.same(viaMcp, viaRest, `${label}: MCP carries the same error`)
    }
    const two = await rest(app, key, 'review_opportunities', { project, event_ids: ['opp_gone1', ids[4]!, 'opp_gone2'], status: 'done' })
    t.equal(two.body.error!.message, `Opportunities 'opp_gone1', 'opp_gone2' were not found in project '${project}'; nothing was changed.`)
    t.same(await state(), before, 'no opportunity and no history changed')
    t.equal((await rest(app, key, 'list_opportunities', { project: second.slug })).body.result.items[0].status, 'pending', "the other project's opportunity is untouched")
  })

  t.test('bad arguments: 400 in the DESIGN §4 shape on both surfaces, nothing changes', async (t) => {
    const before = await state()
    const cases: [string, object, { path: string; message: string }[]][] = [
      ['empty list', { event_ids: [], status: 'done' }, [{ path: 'event_ids', message: 'must NOT have fewer than 1 items' }]],
      ['more than 100', { event_ids: Array.from({ length: 101 }, (_, i) => `opp_n${i}`), status: 'done' }, [{ path: 'event_ids', message: 'must NOT have more than 100 items' }]],
      ['duplicates', { event_ids: [ids[0], ids[1], ids[0]], status: 'done' }, [{ path: 'event_ids', message: 'must NOT have duplicate items (items ## 2 and 0 are identical)' }]],
      ['no review field', { event_ids: [ids[0]] }, [{ path: '', message: 'must have at least one of evaluation, status, note' }]],
      ['missing ids', { status: 'done' }, [{ path: 'event_ids', message: 'is required' }]],
      ['a note too long', { event_ids: [ids[0]], note: 'x'.repeat(2001) }, [{ path: 'note', message: 'must NOT have more than 2000 characters' }]],
    ]
    for (const [label, args, details] of cases) {
      const viaRest = await rest(app, key, 'review_opportunities', { project, ...args })
      t.equal(viaRest.status, 400, label)
      t.equal(viaRest.body.error!.code, 'invalid_arguments', label)
      t.type(viaRest.body.error!.message, 'string')
      t.same(viaRest.body.error!.details, details, label)
      t.same(await mcp(app, key, 'review_opportunities', { project, ...args }), viaRest, `${label}: the same over MCP`)
    }
    t.same(await state(), before, 'nothing changed')
  })

  t.test('a viewer is refused on both surfaces', async (t) => {
    const before = await state()
    const args = { project, event_ids: [ids[0]], status: 'done' }
    const viaRest = await rest(app, viewer.keys.service, 'review_opportunities', args)
    t.equal(viaRest.status, 403)
    t.equal(viaRest.body.error!.code, 'review_access_required')
    t.same(await mcp(app, viewer.keys.service, 'review_opportunities', args), viaRest)
    t.same(await state(), before, 'nothing changed')
  })

  t.test('list_opportunities: text search with q', async (t) => {
    const find = async (q: string, extra: object = {}) => {
      const res = await rest(app, key, 'list_opportunities', { project, q, ...extra })
      t.equal(res.status, 200, q)
      return res.body.result as { items: { event_id: string }[]; total: number }
    }
    const special = await submit(project, key, { contribution_type: 'community_signal', key_information: 'Forum thread: 100% of_users want SSO', reason: 'Seen on Hacker News', suggested_action: 'Post a reply \\ with docs' })
    const expectIds = (page: { items: { event_id: string }[]; total: number }, want: string[], label: string) => {
      t.same(page.items.map((o) => o.event_id).sort(), [...want].sort(), label)
      t.equal(page.total, want.length, `${label}: total`)
    }
    expectIds(await find('forum THREAD'), [special], 'key_information, any case')
    expectIds(await find('hacker news'), [special], 'reason')
    expectIds(await find('REPLY \\ WITH'), [special], 'suggested_action, with a backslash')
    expectIds(await find('community_sig'), [special], 'contribution_type')
    expectIds(await find('100%'), [special], '% is a plain character')
    expectIds(await find('0% of_u'), [special], '_ is a plain character')
    expectIds(await find('%'), [special], 'a lone % matches only a literal %')
    expectIds(await find('_'), [special], 'a lone _ matches only a literal _')
    expectIds(await find('lead'), ids, 'the six leads')
    expectIds(await find('lead', { status: 'reviewing' }), ids.slice(0, 4), 'with a status filter')
    expectIds(await find('lead', { type: 'community_signal' }), [], 'with a type filter')
    expectIds(await find('nothing like this'), [], 'no match')
    const paged = await find('lead', { page_size: 4, page: 2 })
    t.equal(paged.total, 6)
    t.equal(paged.items.length, 2, 'the second page of a search')
  })
})
