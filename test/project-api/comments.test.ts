// Comments on an opportunity (issue 28): a comment made over MCP is read back identically over
// REST and /v1/tools; threads one level deep; the 4,000-character limit counted in characters;
// edits and deletions by the author only (a project owner may delete); deleted comments; every
// change in the review history and enqueued for webhooks in its transaction; 404s across
// projects; merged opportunities refused; the version of the opportunity untouched.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { addMember, addProject, bearer, buildTestApp, expectStatus, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { sql } from '../../db/orm.ts'
import { rowsOf } from '../../db/client.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`

interface Comment {
  comment_id: string
  event_id: string
  parent_id: string | null
  author: { id: string; email: string } | null
  body: string
  created_at: string
  edited_at: string | null
  deleted: boolean
}

function client(app: FastifyInstance, key: string, project: string) {
  const json = { ...bearer(key), 'content-type': 'application/json' }
  return {
    async submit(): Promise<string> {
      const res = await app.inject({ method: 'POST', url: `${base(project)}/opportunities`, headers: json, payload: { contribution_type: 'potential_user_opportunity', key_information: 'A lead', reason: 'r', suggested_action: 'a' } })
      if (res.statusCode !== 201) throw new Error(`submit: ${res.statusCode} ${res.body}`)
      return res.json().event_id
    },
    add(eventId: string, payload: Record<string, unknown>, p = project) {
      return app.inject({ method: 'POST', url: `${base(p)}/opportunities/${eventId}/comments`, headers: json, payload: JSON.stringify(payload) })
    },
    list(eventId: string, p = project) {
      return app.inject({ method: 'GET', url: `${base(p)}/opportunities/${eventId}/comments`, headers: bearer(key) })
    },
    async thread(eventId: string): Promise<Comment[]> {
      const res = await this.list(eventId)
      if (res.statusCode !== 200) throw new Error(`list: ${res.statusCode} ${res.body}`)
      return res.json().items
    },
    edit(commentId: string, body: unknown, p = project) {
      return app.inject({ method: 'PATCH', url: `${base(p)}/comments/${commentId}`, headers: json, payload: JSON.stringify({ body }) })
    },
    remove(commentId: string, p = project) {
      return app.inject({ method: 'DELETE', url: `${base(p)}/comments/${commentId}`, headers: bearer(key) })
    },
    async history(eventId: string) {
      const res = await app.inject({ method: 'GET', url: `${base(project)}/opportunities/${eventId}/history`, headers: bearer(key) })
      return res.json().items as { action: string; actor: { id: string } | null; changed_at: string; before: Record<string, unknown>; after: Record<string, unknown> }[]
    },
    async version(eventId: string): Promise<number> {
      return (await app.inject({ method: 'GET', url: `${base(project)}/opportunities/${eventId}`, headers: bearer(key) })).json().version
    },
  }
}

const clock = fixedClock('2026-11-20T10:00:00.000Z')
const app = await buildTestApp(t, { now: clock })
const ws = await seedWorkspace(app)
const reviewer = await addMember(app, ws.project.id, 'reviewer', 'rita@example.test')
const reviewer2 = await addMember(app, ws.project.id, 'reviewer', 'rob@example.test')
const viewer = await addMember(app, ws.project.id, 'viewer', 'vic@example.test')
const owner = client(app, ws.keys.mcp, ws.project.id)
const rita = client(app, reviewer.keys.mcp, ws.project.id)
const rob = client(app, reviewer2.keys.mcp, ws.project.id)
const vic = client(app, viewer.keys.mcp, ws.project.id)

/** A tool called over MCP (2025-11-25) with a project-side key: its structuredContent, or the error text. */
async function mcpCall(key: string, name: string, args: Record<string, unknown>) {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp?toolsets=triage',
    headers: { ...bearer(key), host: '127.0.0.1:3000', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  })
  const result = res.json().result as { structuredContent?: unknown; isError?: boolean; content: { text: string }[] }
  return result
}

/** The messages enqueued for a webhook: [type, data]. */
async function messages(hookId: string): Promise<[string, Comment][]> {
  const { items } = await app.repos.webhooks.deliveries(hookId, { limit: 100, offset: 0 })
  return items.map((d) => [d.type, (d.payload as { data: Comment }).data])
}

t.test('a comment made over MCP is read back identically over REST and /v1/tools', async (t) => {
  const eventId = await owner.submit()
  const made = await mcpCall(reviewer.keys.mcp, 'add_comment', { project: ws.project.slug, event_id: eventId, body: 'Their CTO replied: demo next week.' })
  t.notOk(made.isError, made.content[0]?.text ?? '')
  const comment = made.structuredContent as Comment
  t.match(comment, { comment_id: /^cmt_/, event_id: eventId, parent_id: null, author: { id: reviewer.user.id, email: 'rita@example.test' }, body: 'Their CTO replied: demo next week.', created_at: '2026-11-20T10:00:00.000Z', edited_at: null, deleted: false })
  const rest = await rita.list(eventId)
  expectStatus(t, rest, 200)
  t.strictSame(rest.json(), { event_id: eventId, items: [comment] })
  const tools = await app.inject({ method: 'POST', url: '/v1/tools/list_comments', headers: bearer(ws.keys.service), payload: { project: ws.project.id, event_id: eventId } })
  t.strictSame(tools.json(), { result: { event_id: eventId, items: [comment] } })
  const overMcp = await mcpCall(viewer.keys.mcp, 'list_comments', { project: ws.project.id, event_id: eventId })
  t.equal(overMcp.content[0]!.text, JSON.stringify(rest.json()), 'MCP reads the bytes REST answers')
})

t.test('threads: replies follow their comment, a reply to a reply answers the top-level comment', async (t) => {
  const eventId = await owner.submit()
  clock.set('2026-11-20T11:00:00.000Z')
  const first = (await rita.add(eventId, { body: 'First' })).json() as Comment
  clock.set('2026-11-20T11:01:00.000Z')
  const second = (await rob.add(eventId, { body: 'Second' })).json() as Comment
  clock.set('2026-11-20T11:02:00.000Z')
  const res = await rob.add(eventId, { body: 'Reply to first', parent_id: first.comment_id })
  expectStatus(t, res, 201)
  const reply = res.json() as Comment
  t.equal(reply.parent_id, first.comment_id)
  clock.set('2026-11-20T11:03:00.000Z')
  const nested = (await rita.add(eventId, { body: 'Reply to the reply', parent_id: reply.comment_id })).json() as Comment
  t.equal(nested.parent_id, first.comment_id, 'flattened to the top-level comment')
  const thread = await rita.thread(eventId)
  t.strictSame(thread.map((c) => [c.body, c.parent_id]), [['First', null], ['Reply to first', first.comment_id], ['Reply to the reply', first.comment_id], ['Second', null]])

  // A parent on another opportunity of the project: a 400 naming parent_id; unknown: a 404.
  const elsewhere = await owner.submit()
  const bad = await rita.add(elsewhere, { body: 'x', parent_id: second.comment_id })
  expectStatus(t, bad, 400)
  t.match(bad.json().error, { code: 'invalid_arguments', details: [{ path: 'parent_id' }] })
  const unknown = await rita.add(eventId, { body: 'x', parent_id: 'cmt_doesnotexist000' })
  expectStatus(t, unknown, 404)
  t.equal((await rita.thread(elsewhere)).length, 0, 'nothing written')
})

t.test('the body: 1–4000 characters, counted as characters; white space alone refused; kept as sent', async (t) => {
  const eventId = await owner.submit()
  const ok = await rita.add(eventId, { body: 'x'.repeat(4000) })
  expectStatus(t, ok, 201)
  const tooLong = await rita.add(eventId, { body: 'x'.repeat(4001) })
  expectStatus(t, tooLong, 400)
  t.match(tooLong.json().error, { code: 'invalid_arguments', details: [{ path: 'body', message: 'must NOT have more than 4000 characters' }] })
  // 4000 emoji (two UTF-16 units, four bytes each) and 4000 'é' are 4000 characters.
  for (const char of ['😀', 'é', '中']) {
    const res = await rita.add(eventId, { body: char.repeat(4000) })
    expectStatus(t, res, 201)
    t.equal([...res.json().body].length, 4000, `${char} × 4000 stored whole`)
    expectStatus(t, await rita.add(eventId, { body: char.repeat(4001) }), 400)
  }
  const [row] = rowsOf<{ n: number }>(await app.db.execute(sql`select char_length(body)::int as n from comments where body like '😀%'`))
  t.equal(row!.n, 4000, 'PostgreSQL counts the same 4000')
  expectStatus(t, await rita.add(eventId, { body: '' }), 400)
  const blank = await rita.add(eventId, { body: ' \n\t ' })
  expectStatus(t, blank, 400)
  t.match(blank.json().error, { code: 'invalid_arguments', details: [{ path: 'body', message: 'must contain more than white space' }] })
  const padded = await rita.add(eventId, { body: '  indented\n' })
  t.equal(padded.json().body, '  indented\n', 'not trimmed')
  t.equal((await rita.thread(eventId)).length, 5, 'only the accepted ones')
})

t.test('edit and delete: by the author only (an owner may delete), with history and webhooks', async (t) => {
  const eventId = await owner.submit()
  const hook = await app.repos.webhooks.create({ workspaceId: ws.workspace.id, projectId: ws.project.id, url: 'https://example.com/hook', events: ['comment.created', 'comment.edited', 'comment.deleted'], description: '', secret: 'whsec_c2VjcmV0', createdBy: ws.user.id, now: clock() })
  const version = await owner.version(eventId)
  clock.set('2026-11-20T12:00:00.000Z')
  const made = (await rita.add(eventId, { body: 'Draft' })).json() as Comment

  // Someone else: 403 for an edit and a deletion, nothing changed.
  const notYours = await rob.edit(made.comment_id, 'Hijacked')
  expectStatus(t, notYours, 403)
  t.equal(notYours.json().error.code, 'forbidden')
  expectStatus(t, await rob.remove(made.comment_id), 403)
  // A viewer reads but does not write.
  expectStatus(t, await vic.list(eventId), 200)
  expectStatus(t, await vic.add(eventId, { body: 'Hi' }), 403)
  expectStatus(t, await vic.edit(made.comment_id, 'Hi'), 403)
  t.strictSame(await rita.thread(eventId), [made])

  clock.set('2026-11-20T12:05:00.000Z')
  const edited = await rita.edit(made.comment_id, 'Final')
  expectStatus(t, edited, 200)
  t.strictSame(edited.json(), { ...made, body: 'Final', edited_at: '2026-11-20T12:05:00.000Z' })

  clock.set('2026-11-20T12:10:00.000Z')
  const deleted = await rita.remove(made.comment_id)
  expectStatus(t, deleted, 200)
  t.strictSame(deleted.json(), { ...made, body: '', edited_at: '2026-11-20T12:05:00.000Z', deleted: true })
  t.strictSame(await rita.thread(eventId), [], 'a deleted comment without replies leaves the thread')
  const [stored] = rowsOf<{ body: string }>(await app.db.execute(sql`select body from comments where id = ${made.comment_id}`))
  t.equal(stored!.body, '', 'its text is erased')
  // Deleted: no more edits or deletions (409).
  expectStatus(t, await rita.edit(made.comment_id, 'Again'), 409)
  expectStatus(t, await rita.remove(made.comment_id), 409)

  // An owner deletes another's comment; an owner does not edit it.
  const robs = (await rob.add(eventId, { body: 'Spam' })).json() as Comment
  expectStatus(t, await owner.edit(robs.comment_id, 'Not spam'), 403)
  expectStatus(t, await owner.remove(robs.comment_id), 200)

  const history = await owner.history(eventId)
  t.strictSame(history.map((h) => [h.action, h.actor?.id, h.changed_at, h.before, h.after]), [
    ['comment', reviewer.user.id, '2026-11-20T12:00:00.000Z', { comment_id: null, parent_id: null }, { comment_id: made.comment_id, parent_id: null }],
    ['comment', reviewer.user.id, '2026-11-20T12:05:00.000Z', { comment_id: made.comment_id, edited_at: null }, { comment_id: made.comment_id, edited_at: '2026-11-20T12:05:00.000Z' }],
    ['comment', reviewer.user.id, '2026-11-20T12:10:00.000Z', { comment_id: made.comment_id, deleted: false }, { comment_id: made.comment_id, deleted: true }],
    ['comment', reviewer2.user.id, '2026-11-20T12:10:00.000Z', { comment_id: null, parent_id: null }, { comment_id: robs.comment_id, parent_id: null }],
    ['comment', ws.user.id, '2026-11-20T12:10:00.000Z', { comment_id: robs.comment_id, deleted: false }, { comment_id: robs.comment_id, deleted: true }],
  ])
  t.equal(await owner.version(eventId), version, 'comments leave the opportunity\'s version alone')

  const sent = await messages(hook.id)
  // (Messages of the same moment come in no particular order: compared sorted.)
  const sorted = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort()
  t.strictSame(sorted(sent.map(([type, data]) => [type, data.comment_id, data.event_id, data.body, data.deleted])), sorted([
    ['comment.created', made.comment_id, eventId, 'Draft', false],
    ['comment.edited', made.comment_id, eventId, 'Final', false],
    ['comment.deleted', made.comment_id, eventId, '', true],
    ['comment.created', robs.comment_id, eventId, 'Spam', false],
    ['comment.deleted', robs.comment_id, eventId, '', true],
  ]))
  t.strictSame(sent.find(([type]) => type === 'comment.edited')![1], edited.json(), 'the data is the comment as the API answers it')
})

t.test('a deleted comment keeps its place while it has replies', async (t) => {
  const eventId = await owner.submit()
  clock.set('2026-11-20T13:00:00.000Z')
  const top = (await rita.add(eventId, { body: 'Top' })).json() as Comment
  clock.set('2026-11-20T13:01:00.000Z')
  const reply = (await rob.add(eventId, { body: 'Reply', parent_id: top.comment_id })).json() as Comment
  expectStatus(t, await rita.remove(top.comment_id), 200)
  t.strictSame((await rita.thread(eventId)).map((c) => [c.comment_id, c.body, c.deleted]), [[top.comment_id, '', true], [reply.comment_id, 'Reply', false]])
  const noReply = await rob.add(eventId, { body: 'Another', parent_id: top.comment_id })
  expectStatus(t, noReply, 409)
  // Its last reply deleted: both leave the thread.
  expectStatus(t, await rob.remove(reply.comment_id), 200)
  t.strictSame(await rita.thread(eventId), [])
})

t.test('unknown ids, other projects and workspaces: 404; merged opportunities: 409', async (t) => {
  const eventId = await owner.submit()
  const made = (await rita.add(eventId, { body: 'Mine' })).json() as Comment
  expectStatus(t, await rita.list('opp_doesnotexist000'), 404)
  expectStatus(t, await rita.add('opp_doesnotexist000', { body: 'x' }), 404)
  expectStatus(t, await rita.edit('cmt_doesnotexist000', 'x'), 404)
  expectStatus(t, await rita.remove('cmt_doesnotexist000'), 404)

  // The same owner's second project: the comment id is not found there.
  const second = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Second', slug: 'second' })
  const notHere = await owner.edit(made.comment_id, 'x', second.id)
  expectStatus(t, notHere, 404)
  t.equal(notHere.json().error.message, `Comment '${made.comment_id}' was not found in project 'second'.`)
  expectStatus(t, await owner.remove(made.comment_id, second.id), 404)
  expectStatus(t, await owner.list(eventId, second.id), 404)
  expectStatus(t, await owner.add(eventId, { body: 'x' }, second.id), 404)
  // Another workspace: its own key reaches neither.
  const other = await seedWorkspace(app)
  const stranger = client(app, other.keys.mcp, other.project.id)
  expectStatus(t, await stranger.edit(made.comment_id, 'x'), 404)
  expectStatus(t, await stranger.list(eventId), 404)

  // Merged into another: the thread is read, not written.
  const target = await owner.submit()
  await app.db.execute(sql`update opportunities set merged_into = ${target} where id = ${eventId}`)
  const refused = await rita.add(eventId, { body: 'Late' })
  expectStatus(t, refused, 409)
  t.match(refused.json().error.message, `is merged into '${target}'`)
  expectStatus(t, await rita.edit(made.comment_id, 'Late'), 409)
  expectStatus(t, await rita.remove(made.comment_id), 409)
  t.strictSame(await rita.thread(eventId), [made])
})
