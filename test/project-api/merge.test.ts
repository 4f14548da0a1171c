// Merge and unmerge, lossless (issue 28): merging three opportunities leaves one listed card
// with report_count 3 and all three texts reachable; unmerging one restores it byte for byte
// (its REST read: body and ETag); every change is in the review history with its actor and
// reaches a webhook subscriber; the refusals change nothing; REST, /v1/tools and MCP answer
// alike; two merges of the same source at once: exactly one wins.
import t, { type Test } from 'tap'
import { sql } from '../../db/orm.ts'
import { rowsOf } from '../../db/client.ts'
import { addMember, bearer, buildTestApp, PUBLIC_URL, seedWorkspace, addProject } from '../helpers/app.ts'
import { privateOk, receiver, subscribe } from '../helpers/webhooks.ts'

interface Opp { event_id: string; version: number; report_count: number; merged_into: string | null; key_information: string; [k: string]: unknown }
interface ErrorBody { error: { code: string; message: string; details?: { path: string; message: string }[] } }

const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }

async function setup(t: Test) {
  const app = await buildTestApp(t, { config: privateOk })
  const ws = await seedWorkspace(app)
  const base = `/api/v1/mcp/projects/${ws.project.id}`
  const key = ws.keys.mcp
  let n = 0
  const submit = async (text?: string) => {
    const res = await app.inject({
      method: 'POST',
      url: `${base}/opportunities`,
      headers: bearer(key),
      payload: { contribution_type: 'potential_user_opportunity', key_information: text ?? `Lead ${++n}: wants SSO`, reason: `reason ${n}`, suggested_action: `action ${n}` },
    })
    if (res.statusCode !== 201) throw new Error(res.body)
    const { created: _created, similar: _similar, ...opportunity } = res.json() as Opp & { created: boolean; similar: unknown[] }
    return opportunity as Opp
  }
  const read = (id: string) => app.inject({ method: 'GET', url: `${base}/opportunities/${id}`, headers: bearer(key) })
  const merge = (target: string, sourceIds: string[], ifMatch?: string) =>
    app.inject({ method: 'POST', url: `${base}/opportunities/${target}/merge`, headers: { ...bearer(key), ...(ifMatch ? { 'if-match': ifMatch } : {}) }, payload: { source_ids: sourceIds } })
  const unmerge = (id: string) => app.inject({ method: 'POST', url: `${base}/opportunities/${id}/unmerge`, headers: bearer(key) })
  const merged = (id: string) => app.inject({ method: 'GET', url: `${base}/opportunities/${id}/merged`, headers: bearer(key) })
  const list = async () => (await app.inject({ method: 'GET', url: `${base}/opportunities?page_size=100`, headers: bearer(key) })).json() as { items: Opp[]; total: number }
  const history = async (id: string) => (await app.inject({ method: 'GET', url: `${base}/opportunities/${id}/history`, headers: bearer(key) })).json().items as { action: string; actor: { id: string } | null; before: object; after: object }[]
  /** What must not change when a call is refused: the listing, the reads and histories of `ids`, the queued messages. */
  const state = async (ids: string[]) => ({
    list: await list(),
    reads: await Promise.all(ids.map(async (id) => { const r = await read(id); return { body: r.body, etag: r.headers.etag } })),
    histories: await Promise.all(ids.map(history)),
    messages: rowsOf<{ n: number }>(await app.db.execute(sql`select count(*)::int as n from webhook_deliveries`))[0]!.n,
  })
  return { app, ws, base, key, submit, read, merge, unmerge, merged, list, history, state }
}

t.test('merge three into one, unmerge one: lossless, counted, in the history, announced', async (t) => {
  const { app, ws, submit, read, merge, unmerge, merged, list, history } = await setup(t)
  const rx = await receiver(t)
  await subscribe(app, ws.keys.service, ws.project.id, rx.url, ['opportunity.merged', 'opportunity.unmerged'])
  const target = await submit('Acme wants SSO (from the sales call)')
  const a = await submit('Acme asked for SAML single sign-on')
  const b = await submit('ACME: SSO is a blocker for them')
  // A source with a review history of its own, which it keeps.
  const reviewed = await app.inject({ method: 'PATCH', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/${b.event_id}/review`, headers: bearer(ws.keys.mcp), payload: { status: 'reviewing', note: 'dup?' } })
  t.equal(reviewed.statusCode, 200)
  const beforeB = await read(b.event_id)
  const beforeA = await read(a.event_id)
  const totalBefore = (await list()).total
  t.equal(totalBefore, 3)

  const res = await merge(target.event_id, [a.event_id, b.event_id], '"1"')
  t.equal(res.statusCode, 200, res.body)
  t.equal(res.headers.etag, '"2"', 'the ETag: the target\'s new version')
  const result = res.json() as Opp & { sources: Opp[] }
  t.equal(result.report_count, 3)
  t.equal(result.version, 2)
  t.equal(result.merged_into, null)
  t.same(result.sources.map((s) => s.event_id), [a.event_id, b.event_id], 'the sources, in the order sent')
  t.ok(result.sources.every((s) => s.merged_into === target.event_id))

  // One card listed, with report_count 3; the totals count it once.
  const listed = await list()
  t.same(listed.items.map((o) => o.event_id), [target.event_id], 'only the target is listed')
  t.equal(listed.total, 1, 'the total counts the target only')
  t.equal(listed.items[0]!.report_count, 3)
  // All three texts reachable: the target's, and its sources whole, in merge order.
  const sources = merged(target.event_id)
  const m = (await sources).json() as { event_id: string; items: Opp[] }
  t.equal(m.event_id, target.event_id)
  t.same(m.items.map((o) => o.key_information), ['Acme asked for SAML single sign-on', 'ACME: SSO is a blocker for them'])
  t.same(m.items, result.sources, 'the listing of sources is what the merge answered')
  // A direct read of a source shows merged_into; nothing else of it changed (its version neither).
  const readB = (await read(b.event_id)).json()
  t.same({ ...readB, merged_into: null }, beforeB.json(), 'a source is unchanged but for merged_into')
  t.equal(readB.merged_into, target.event_id)
  t.equal((await read(b.event_id)).headers.etag, beforeB.headers.etag, 'its ETag too')

  // History: 'merge' on the target, 'merged' on each source, with the actor; the sources keep theirs.
  const th = await history(target.event_id)
  t.match(th, [{ action: 'merge', actor: { id: ws.user.id }, before: { report_count: 1 }, after: { report_count: 3, merged: [a.event_id, b.event_id] } }])
  const bh = await history(b.event_id)
  t.match(bh, [{ action: 'review', after: { status: 'reviewing' } }, { action: 'merged', actor: { id: ws.user.id }, before: { merged_into: null }, after: { merged_into: target.event_id } }])

  // Unmerge one: byte for byte as before the merge (REST read: body and ETag), listed again.
  const un = await unmerge(b.event_id)
  t.equal(un.statusCode, 200, un.body)
  const unBody = un.json() as Opp & { unmerged_from: Opp }
  t.equal(unBody.unmerged_from.report_count, 2)
  t.equal(unBody.unmerged_from.version, 3)
  const afterB = await read(b.event_id)
  t.equal(afterB.body, beforeB.body, 'the REST read of the source is byte-identical to before the merge')
  t.equal(afterB.headers.etag, beforeB.headers.etag, 'and so is its ETag')
  const { unmerged_from: _from, ...restored } = unBody
  t.equal(JSON.stringify(restored), beforeB.body, 'the unmerge answers it as it was')
  const relisted = await list()
  t.same(relisted.items.map((o) => o.event_id).sort(), [target.event_id, b.event_id].sort(), 'listed again')
  t.equal(relisted.total, 2)
  t.equal(relisted.items.find((o) => o.event_id === target.event_id)!.report_count, 2)
  t.same(((await merged(target.event_id)).json() as { items: Opp[] }).items.map((o) => o.event_id), [a.event_id])
  t.match(await history(target.event_id), [{ action: 'merge' }, { action: 'unmerge', actor: { id: ws.user.id }, before: { report_count: 3 }, after: { report_count: 2, unmerged: [b.event_id] } }])
  t.match((await history(b.event_id)).at(-1), { action: 'unmerged', actor: { id: ws.user.id }, before: { merged_into: target.event_id }, after: { merged_into: null } })
  // The other source, unmerged too: the target is back at one report.
  t.equal((await unmerge(a.event_id)).statusCode, 200)
  t.equal((await read(a.event_id)).body, beforeA.body)
  t.equal((await list()).total, 3, 'the totals are back')
  t.equal((await read(target.event_id)).json().report_count, 1)

  // Every change reached the subscriber.
  t.equal(await app.webhooks.deliverDue(), 3)
  const bodies = rx.got.map((r) => JSON.parse(r.body) as { type: string; data: Record<string, unknown> })
  const mergedMsg = bodies.find((x) => x.type === 'opportunity.merged')!
  const { merge: mergeInfo, ...mergedData } = mergedMsg.data as { merge: { actor: { id: string }; sources: string[]; history_id: number } }
  t.match(mergeInfo, { actor: { id: ws.user.id }, sources: [a.event_id, b.event_id] })
  t.type(mergeInfo.history_id, 'number')
  const { sources: _s, ...targetAfterMerge } = result
  t.equal(JSON.stringify(mergedData), JSON.stringify(targetAfterMerge), 'opportunity.merged: the target as the merge answered it')
  const unmergedMsgs = bodies.filter((x) => x.type === 'opportunity.unmerged')
  t.same(unmergedMsgs.map((x) => x.data.event_id).sort(), [a.event_id, b.event_id].sort())
  const ofB = unmergedMsgs.find((x) => x.data.event_id === b.event_id)!.data as { unmerge: { actor: { id: string }; target: string } }
  const { unmerge: unmergeInfo, ...unmergedData } = ofB
  t.match(unmergeInfo, { actor: { id: ws.user.id }, target: target.event_id })
  t.equal(JSON.stringify(unmergedData), beforeB.body, 'opportunity.unmerged: the restored opportunity')
})

t.test('refusals: 400, 404, 409 and 412, and nothing changes', async (t) => {
  const { app, ws, submit, merge, unmerge, merged, state, base, key } = await setup(t)
  const [x, y, z, w] = [await submit(), await submit(), await submit(), await submit()]
  const ids = [x.event_id, y.event_id, z.event_id, w.event_id]
  const other = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Other', slug: 'other' })
  const theirs = await app.repos.opportunities.submit({ projectId: other.id, submittedBy: ws.user.id, contributionType: 'potential_user_opportunity', keyInformation: 'k', reason: 'r', suggestedAction: 'a', receivedAt: new Date() })
  await subscribe(app, ws.keys.service, ws.project.id, (await receiver(t)).url, ['opportunity.merged', 'opportunity.unmerged', 'opportunity.reviewed'])
  const before = await state(ids)
  const refused = async (res: Awaited<ReturnType<typeof merge>>, status: number, code: string, paths: string[], message?: RegExp) => {
    t.equal(res.statusCode, status, res.body)
    const body = res.json() as ErrorBody
    t.equal(body.error.code, code)
    t.same(body.error.details?.map((d) => d.path), paths)
    if (message) t.match(body.error.message, message)
    t.same(await state(ids), before, 'nothing changed')
  }
  await refused(await merge(x.event_id, [x.event_id]), 400, 'invalid_arguments', ['source_ids[0]'], /merged into itself/)
  await refused(await merge(x.event_id, [y.event_id, y.event_id]), 400, 'invalid_arguments', ['source_ids'])
  await refused(await merge(x.event_id, []), 400, 'invalid_arguments', ['source_ids'])
  await refused(await merge(x.event_id, Array.from({ length: 21 }, (_, i) => `opp_n${i}`)), 400, 'invalid_arguments', ['source_ids'])
  await refused(await merge(x.event_id, [y.event_id, theirs.opportunity.event_id]), 404, 'not_found', ['source_ids[1]'])
  await refused(await merge(theirs.opportunity.event_id, [y.event_id]), 404, 'not_found', ['event_id'])
  await refused(await merge(x.event_id, [y.event_id], '"7"'), 412, 'precondition_failed', ['If-Match'], /version 1, not 7/)
  await refused(await unmerge(x.event_id), 409, 'conflict', ['event_id'], /not merged/)
  const inBody = await app.inject({ method: 'POST', url: `${base}/opportunities/${x.event_id}/merge`, headers: bearer(key), payload: { source_ids: [y.event_id], if_version: 1 } })
  await refused(inBody, 400, 'invalid_arguments', ['if_version'])
  t.equal((await merged(theirs.opportunity.event_id)).statusCode, 404, 'another project\'s opportunity: not found')

  // y merged into x: then y is neither a source nor a target again, and x is no source while it has y.
  t.equal((await merge(x.event_id, [y.event_id])).statusCode, 200)
  const afterMerge = await state(ids)
  const refusedNow = async (res: Awaited<ReturnType<typeof merge>>, status: number, code: string, paths: string[], message: RegExp) => {
    t.equal(res.statusCode, status, res.body)
    const body = res.json() as ErrorBody
    t.equal(body.error.code, code)
    t.same(body.error.details?.map((d) => d.path), paths)
    t.match(body.error.message, message)
    t.same(await state(ids), afterMerge, 'nothing changed')
  }
  await refusedNow(await merge(z.event_id, [y.event_id]), 409, 'conflict', ['source_ids[0]'], new RegExp(`'${y.event_id}' is merged into '${x.event_id}'`))
  await refusedNow(await merge(y.event_id, [z.event_id]), 409, 'conflict', ['event_id'], new RegExp(`'${y.event_id}' is merged into '${x.event_id}'`))
  await refusedNow(await merge(z.event_id, [w.event_id, x.event_id]), 409, 'conflict', ['source_ids[1]'], /has 1 merged into it/)
  // A merged opportunity is not reviewed (one or in bulk), not even with its right version.
  const patch = await app.inject({ method: 'PATCH', url: `${base}/opportunities/${y.event_id}/review`, headers: { ...bearer(key), 'if-match': '"1"' }, payload: { status: 'done' } })
  await refusedNow(patch, 409, 'conflict', ['event_id'], new RegExp(`is merged into '${x.event_id}'; unmerge it first`))
  const bulk = await app.inject({ method: 'POST', url: '/v1/tools/review_opportunities', headers: bearer(ws.keys.service), payload: { project: ws.project.id, event_ids: [z.event_id, y.event_id], status: 'done', if_versions: [1, 1] } })
  await refusedNow(bulk, 409, 'conflict', ['event_ids[1]'], /merged into another; nothing was changed/)
  // The target moved (the merge bumped it to 2): a merge with its old version is a 412.
  await refusedNow(await merge(x.event_id, [z.event_id], '"1"'), 412, 'precondition_failed', ['If-Match'], /version 2, not 1/)
  t.equal((await merge(x.event_id, [z.event_id], '"2"')).statusCode, 200, 'with the current version it merges')
})

t.test('REST, /v1/tools and MCP (both eras) answer alike', async (t) => {
  const { app, ws, submit, read } = await setup(t)
  const viewer = await addMember(app, ws.project.id, 'viewer')
  const tool = async (name: string, args: object, k = ws.keys.service) => {
    const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(k), payload: { project: ws.project.id, ...args } })
    return { status: res.statusCode, body: res.body }
  }
  const mcp = async (era: '2025-11-25' | '2026-07-28', name: string, args: object) => {
    const modern = era === '2026-07-28'
    const res = await app.inject({
      method: 'POST',
      url: '/mcp?toolsets=triage',
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
    const { result } = JSON.parse(text) as { result: { isError?: boolean; content: { text: string }[] } }
    return { isError: Boolean(result.isError), text: result.content[0]!.text }
  }
  // Four merges of a fresh pair each, one per surface: the same answer but for the ids.
  const answers: string[] = []
  const pairs: (readonly [Opp, Opp])[] = []
  for (let i = 0; i < 4; i++) pairs.push([await submit(`same text ${i}`), await submit(`same dup ${i}`)] as const)
  const mask = (s: string, i: number) => s.replaceAll(pairs[i]![0].event_id, 'T').replaceAll(pairs[i]![1].event_id, 'S').replace(/same (text|dup) \d/g, 'same $1').replace(/"received_at":"[^"]+"/g, '"received_at":…')
  const rest = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/${pairs[0]![0].event_id}/merge`, headers: bearer(ws.keys.mcp), payload: { source_ids: [pairs[0]![1].event_id] } })
  t.equal(rest.statusCode, 200)
  answers.push(mask(rest.body, 0))
  const viaTool = await tool('merge_opportunities', { event_id: pairs[1]![0].event_id, source_ids: [pairs[1]![1].event_id] })
  t.equal(viaTool.status, 200)
  answers.push(mask(JSON.stringify(JSON.parse(viaTool.body).result), 1))
  for (const [i, era] of [[2, '2025-11-25'], [3, '2026-07-28']] as const) {
    const r = await mcp(era, 'merge_opportunities', { event_id: pairs[i]![0].event_id, source_ids: [pairs[i]![1].event_id] })
    t.notOk(r.isError, r.text)
    answers.push(mask(r.text, i))
  }
  t.same(new Set(answers).size, 1, 'one answer on every surface')
  // Reads: byte-identical.
  const target = pairs[0]![0].event_id
  const restList = (await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/${target}/merged`, headers: bearer(ws.keys.mcp) })).body
  t.equal(JSON.stringify(JSON.parse((await tool('list_merged_opportunities', { event_id: target })).body).result), restList)
  t.equal((await mcp('2025-11-25', 'list_merged_opportunities', { event_id: target })).text, restList)
  t.equal((await mcp('2026-07-28', 'list_merged_opportunities', { event_id: target })).text, restList)
  // The same refusal on every surface.
  const source = pairs[0]![1].event_id
  const restErr = (await app.inject({ method: 'PATCH', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/${source}/review`, headers: bearer(ws.keys.mcp), payload: { status: 'done' } })).body
  t.equal(JSON.parse((await tool('review_opportunity', { event_id: source, status: 'done' })).body).error.message, JSON.parse(restErr).error.message)
  const mcpErr = await mcp('2026-07-28', 'unmerge_opportunity', { event_id: target })
  t.ok(mcpErr.isError)
  t.equal(mcpErr.text, (await tool('unmerge_opportunity', { event_id: target })).body)
  // Unmerge on each surface restores the same way.
  const restored = [] as string[]
  restored.push((await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/${pairs[0]![1].event_id}/unmerge`, headers: bearer(ws.keys.mcp) })).body)
  restored.push(JSON.stringify(JSON.parse((await tool('unmerge_opportunity', { event_id: pairs[1]![1].event_id })).body).result))
  restored.push((await mcp('2025-11-25', 'unmerge_opportunity', { event_id: pairs[2]![1].event_id })).text)
  restored.push((await mcp('2026-07-28', 'unmerge_opportunity', { event_id: pairs[3]![1].event_id })).text)
  t.equal(new Set(restored.map(mask)).size, 1, 'one unmerge answer on every surface')
  for (const [, s] of pairs) t.equal((await read(s.event_id)).body, JSON.stringify(s), 'each source is back as it was submitted')
  // A viewer reads the sources, and may not merge.
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/${target}/merged`, headers: bearer(viewer.keys.mcp) })).statusCode, 200)
  const denied = await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities/${target}/merge`, headers: bearer(viewer.keys.mcp), payload: { source_ids: [pairs[0]![1].event_id] } })
  t.equal(denied.statusCode, 403, denied.body)
})

t.test('two merges of the same source into different targets at once: exactly one wins', async (t) => {
  const { submit, merge, read, list, merged } = await setup(t)
  for (let round = 0; round < 5; round++) {
    const [t1, t2, s] = [await submit(), await submit(), await submit()]
    const results = await Promise.all([merge(t1.event_id, [s.event_id]), merge(t2.event_id, [s.event_id])])
    const codes = results.map((r) => r.statusCode).sort()
    t.same(codes, [200, 409], `round ${round}: one merge, one conflict`)
    const winner = results[0]!.statusCode === 200 ? t1 : t2
    const loser = winner === t1 ? t2 : t1
    t.equal((await read(s.event_id)).json().merged_into, winner.event_id)
    t.equal((await read(winner.event_id)).json().report_count, 2)
    t.same((await read(loser.event_id)).json(), loser, 'the loser is untouched')
    t.same(((await merged(loser.event_id)).json() as { items: unknown[] }).items, [])
  }
  // Crossed merges (a into b, b into a) at once: one wins, never a deadlock.
  const [a, b] = [await submit(), await submit()]
  const crossed = await Promise.all([merge(a.event_id, [b.event_id]), merge(b.event_id, [a.event_id])])
  t.same(crossed.map((r) => r.statusCode).sort(), [200, 409])
  const listed = await list()
  t.equal(listed.total, listed.items.length, 'the total is the listed count')
})
