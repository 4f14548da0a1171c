// No silent overwrite: every opportunity carries a version; the review PATCH takes If-Match
// (412 when it moved, ETag out), the tools take if_version / if_versions (a `conflict`, the same
// body over /v1/tools and both MCP eras); a failed precondition changes nothing, and without one
// the last write wins as before.
import t from 'tap'
import { bearer, buildTestApp, PUBLIC_URL, seedWorkspace } from '../helpers/app.ts'

interface ErrorBody {
  error: { code: string; message: string; details?: { path: string; message: string }[] }
}

const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }

t.test('preconditions on opportunity changes', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const base = `/api/v1/mcp/projects/${ws.project.id}`

  const submit = async () => {
    const res = await app.inject({
      method: 'POST',
      url: `${base}/opportunities`,
      headers: bearer(ws.keys.mcp),
      payload: { contribution_type: 'potential_user_opportunity', key_information: 'A lead', reason: 'r', suggested_action: 'a' },
    })
    t.equal(res.statusCode, 201)
    return res.json() as { event_id: string; version: number }
  }
  const patch = (id: string, payload: object, ifMatch?: string) =>
    app.inject({
      method: 'PATCH',
      url: `${base}/opportunities/${id}/review`,
      headers: { ...bearer(ws.keys.mcp), 'content-type': 'application/json', ...(ifMatch !== undefined ? { 'if-match': ifMatch } : {}) },
      payload: JSON.stringify(payload),
    })
  /** The opportunity as the listing shows it, and its review history: what must not change. */
  const state = async (id: string) => {
    const list = await app.inject({ method: 'GET', url: `${base}/opportunities?page_size=100`, headers: bearer(ws.keys.mcp) })
    const history = await app.inject({ method: 'GET', url: `${base}/opportunities/${id}/history`, headers: bearer(ws.keys.mcp) })
    return { opportunity: list.json().items.find((o: { event_id: string }) => o.event_id === id), history: history.json().items }
  }
  const tool = async (name: string, args: object) => {
    const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(ws.keys.service), payload: { project: ws.project.id, ...args } })
    return { status: res.statusCode, body: res.json() }
  }
  /** A tool call over MCP in one era: the structuredContent, or the error body of an isError result. */
  const mcp = async (era: '2025-11-25' | '2026-07-28', name: string, args: object) => {
    const modern = era === '2026-07-28'
    const res = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        host: new URL(PUBLIC_URL).host,
        ...bearer(ws.keys.service),
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': era,
        ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': name } : {}),
      },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: { project: ws.project.id, ...args }, ...(modern ? { _meta: envelope } : {}) } },
    })
    const text = res.body.startsWith('{') ? res.body : /^data: (.*)$/m.exec(res.body)![1]!
    const { result } = JSON.parse(text) as { result: { isError?: boolean; content: { text: string }[]; structuredContent?: unknown } }
    return result.isError ? { error: JSON.parse(result.content[0]!.text) as ErrorBody } : { result: result.structuredContent as { version: number } }
  }

  t.test('reads and results carry the version; a fresh If-Match proceeds with the next ETag', async (t) => {
    const { event_id: id, version } = await submit()
    t.equal(version, 1, 'a new opportunity is at version 1')
    t.equal((await state(id)).opportunity.version, 1, 'the listing shows it')
    const res = await patch(id, { status: 'reviewing' }, '"1"')
    t.equal(res.statusCode, 200)
    t.equal(res.headers.etag, '"2"', 'ETag = the new version')
    t.equal(res.json().version, 2)
    t.equal((await state(id)).opportunity.version, 2)
  })

  t.test('a stale If-Match is a 412 naming the current version, and changes nothing', async (t) => {
    const { event_id: id } = await submit()
    t.equal((await patch(id, { status: 'reviewing', note: 'first' })).statusCode, 200)
    const before = await state(id)
    t.equal(before.opportunity.version, 2)
    const res = await patch(id, { status: 'done', note: 'overwrite' }, '"1"')
    t.equal(res.statusCode, 412)
    t.equal(res.headers.etag, '"2"', 'the current ETag comes with it')
    const body = res.json() as ErrorBody
    t.equal(body.error.code, 'precondition_failed')
    t.match(body.error.message, /version 2, not 1/)
    t.same(body.error.details, [{ path: 'If-Match', message: 'is 1, but the opportunity is now at version 2' }])
    t.same(await state(id), before, 'the opportunity and its history are unchanged')
  })

  t.test('If-Match: * proceeds when it exists; a missing opportunity is still a 404', async (t) => {
    const { event_id: id } = await submit()
    const res = await patch(id, { evaluation: 'useful' }, '*')
    t.equal(res.statusCode, 200)
    t.equal(res.headers.etag, '"2"')
    const missing = await patch('opp_doesnotexist000000', { evaluation: 'useful' }, '*')
    t.equal(missing.statusCode, 404)
    t.equal(missing.json().error.code, 'not_found')
    const missingTagged = await patch('opp_doesnotexist000000', { evaluation: 'useful' }, '"1"')
    t.equal(missingTagged.statusCode, 404, 'a tag on a missing opportunity: not found, not a 412')
  })

  t.test('a malformed If-Match is a 400 and changes nothing', async (t) => {
    const { event_id: id } = await submit()
    const before = await state(id)
    for (const header of ['1', 'abc', '"abc"', 'W/"1"', '"1", "2"', '"0"', '"01"', '"99999999999"', '', '**']) {
      const res = await patch(id, { status: 'done' }, header)
      t.equal(res.statusCode, 400, `If-Match: ${header}`)
      t.same(res.json().error.details?.map((d: { path: string }) => d.path), ['If-Match'], `If-Match: ${header}`)
    }
    const inBody = await patch(id, { status: 'done', if_version: 1 })
    t.equal(inBody.statusCode, 400, 'REST takes the precondition from If-Match only')
    t.same(inBody.json().error.details.map((d: { path: string }) => d.path), ['if_version'])
    t.same(await state(id), before)
  })

  t.test('without a precondition the last write wins, as before', async (t) => {
    const { event_id: id } = await submit()
    t.equal((await patch(id, { status: 'reviewing' })).statusCode, 200)
    const res = await patch(id, { status: 'done' })
    t.equal(res.statusCode, 200)
    t.equal(res.headers.etag, '"3"')
    t.same([res.json().status, res.json().version], ['done', 3])
  })

  t.test('concurrent reviews with the same If-Match: exactly one wins', async (t) => {
    const { event_id: id } = await submit()
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => patch(id, { note: `reviewer ${i}` }, '"1"')))
    const codes = results.map((r) => r.statusCode).sort()
    t.same(codes, [200, 412, 412, 412, 412, 412, 412, 412])
    const winner = results.find((r) => r.statusCode === 200)!
    const after = await state(id)
    t.equal(after.history.length, 1, 'one change recorded')
    t.equal(after.opportunity.review_note, winner.json().review_note, 'the winner’s note is the one stored')
    t.equal(after.opportunity.version, 2)
    t.ok(results.filter((r) => r.statusCode === 412).every((r) => r.headers.etag === '"2"'))
  })

  t.test('tools: if_version, the same conflict over /v1/tools and both MCP eras', async (t) => {
    const { event_id: id } = await submit()
    const fresh = await tool('review_opportunity', { event_id: id, status: 'reviewing', if_version: 1 })
    t.equal(fresh.status, 200)
    t.equal(fresh.body.result.version, 2)
    const before = await state(id)
    const stale = { event_id: id, status: 'done', if_version: 1 }
    const viaRest = await tool('review_opportunity', stale)
    t.equal(viaRest.status, 409)
    t.equal(viaRest.body.error.code, 'conflict')
    t.same(viaRest.body.error.details, [{ path: 'if_version', message: 'is 1, but the opportunity is now at version 2' }])
    t.same(await mcp('2025-11-25', 'review_opportunity', stale), { error: viaRest.body }, '2025-11-25: the same error body')
    t.same(await mcp('2026-07-28', 'review_opportunity', stale), { error: viaRest.body }, '2026-07-28: the same error body')
    t.same(await mcp('2025-11-25', 'review_opportunity_from_view', stale), { error: viaRest.body }, 'the board view’s tool: the same')
    t.same(await state(id), before, 'nothing changed')
    // The REST route's 412 has the same message.
    const http = await patch(id, { status: 'done' }, '"1"')
    t.equal(http.json().error.message, viaRest.body.error.message)
    // Fresh over MCP too.
    const modern = await mcp('2026-07-28', 'review_opportunity', { event_id: id, status: 'done', if_version: 2 })
    t.equal(modern.result?.version, 3)
  })

  t.test('bulk: if_versions, all or nothing', async (t) => {
    const a = await submit()
    const b = await submit()
    t.equal((await patch(b.event_id, { note: 'moved' })).statusCode, 200)
    const before = [await state(a.event_id), await state(b.event_id)]
    const stale = { event_ids: [a.event_id, b.event_id], status: 'done', if_versions: [1, 1] }
    const res = await tool('review_opportunities', stale)
    t.equal(res.status, 409)
    t.equal(res.body.error.code, 'conflict')
    t.same(res.body.error.details, [{ path: 'if_versions[1]', message: `is 1, but '${b.event_id}' is now at version 2` }])
    t.same(await mcp('2026-07-28', 'review_opportunities', stale), { error: res.body }, 'the same over MCP')
    t.same([await state(a.event_id), await state(b.event_id)], before, 'neither changed')
    const mismatch = await tool('review_opportunities', { ...stale, if_versions: [1] })
    t.equal(mismatch.status, 400)
    t.same(mismatch.body.error.details.map((d: { path: string }) => d.path), ['if_versions'])
    const fresh = await tool('review_opportunities', { ...stale, if_versions: [1, 2] })
    t.equal(fresh.status, 200)
    t.same(fresh.body.result.items.map((o: { version: number; status: string }) => [o.status, o.version]), [['done', 2], ['done', 3]])
    const unconditional = await tool('review_opportunities', { event_ids: [a.event_id, b.event_id], status: 'adopted' })
    t.same(unconditional.body.result.items.map((o: { version: number }) => o.version), [3, 4], 'without if_versions: last write wins')
  })
  t.end()
})
