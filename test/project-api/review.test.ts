// PATCH /api/v1/mcp/projects/:project_id/opportunities/:event_id/review: partial updates,
// validation, 404s across projects and workspaces, history, and concurrent reviews.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { addProject, bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`
const STATUSES = ['pending', 'reviewing', 'contacted', 'adopted', 'ignored', 'done'] as const

interface Review {
  event_id: string
  evaluation: string
  status: string
  review_note: string
  review_updated_at: string | null
  version: number
}
interface HistoryItem {
  changed_at: string
  actor: { id: string; email: string } | null
  before: Record<string, string>
  after: Record<string, string>
}

function client(app: FastifyInstance, key: string, project: string) {
  let n = 0
  return {
    async submit(extra: Record<string, unknown> = {}) {
      const res = await app.inject({
        method: 'POST',
        url: `${base(project)}/opportunities`,
        headers: bearer(key),
        payload: { contribution_type: 'potential_user_opportunity', key_information: `Lead ${++n}`, reason: 'r', suggested_action: 'a', ...extra },
      })
      if (res.statusCode !== 201) throw new Error(`submit failed: ${res.statusCode} ${res.body}`)
      return res.json() as Review
    },
    patch(id: string, payload: unknown, p = project) {
      return app.inject({
        method: 'PATCH',
        url: `${base(p)}/opportunities/${id}/review`,
        headers: { ...bearer(key), 'content-type': 'application/json' },
        payload: JSON.stringify(payload),
      })
    },
    async history(id: string): Promise<HistoryItem[]> {
      const res = await app.inject({ method: 'GET', url: `${base(project)}/opportunities/${id}/history`, headers: bearer(key) })
      if (res.statusCode !== 200) throw new Error(`history failed: ${res.statusCode} ${res.body}`)
      return res.json().items
    },
    /** The opportunity as the listing shows it. */
    async get(id: string): Promise<Review> {
      const res = await app.inject({ method: 'GET', url: `${base(project)}/opportunities?page_size=100`, headers: bearer(key) })
      const found = res.json().items.find((o: Review) => o.event_id === id)
      if (!found) throw new Error(`${id} is not listed`)
      const { event_id, evaluation, status, review_note, review_updated_at, version } = found
      return { event_id, evaluation, status, review_note, review_updated_at, version }
    },
  }
}

t.test('opportunity review', async (t) => {
  const clock = fixedClock('2026-11-20T10:00:00Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const c = client(app, ws.keys.mcp, ws.project.id)

  t.test('each field alone changes only itself', async (t) => {
    const { event_id: id } = await c.submit()
    clock.set('2026-11-20T10:01:00Z')
    let res = await c.patch(id, { evaluation: 'useful' })
    t.equal(res.statusCode, 200)
    t.same(res.json(), { event_id: id, evaluation: 'useful', status: 'pending', review_note: '', review_updated_at: '2026-11-20T10:01:00.000Z', version: 2 })

    clock.set('2026-11-20T10:02:00Z')
    res = await c.patch(id, { status: 'reviewing' })
    t.same(res.json(), { event_id: id, evaluation: 'useful', status: 'reviewing', review_note: '', review_updated_at: '2026-11-20T10:02:00.000Z', version: 3 })

    clock.set('2026-11-20T10:03:00Z')
    res = await c.patch(id, { note: 'Asked for a call' })
    t.same(res.json(), { event_id: id, evaluation: 'useful', status: 'reviewing', review_note: 'Asked for a call', review_updated_at: '2026-11-20T10:03:00.000Z', version: 4 })

    res = await c.patch(id, { evaluation: 'not_useful' })
    t.same(res.json().evaluation, 'not_useful')
    t.same(res.json().review_note, 'Asked for a call')
    t.same(res.json().status, 'reviewing')

    // The stored row, read back through the listing, is the same.
    t.same(await c.get(id), { event_id: id, evaluation: 'not_useful', status: 'reviewing', review_note: 'Asked for a call', review_updated_at: '2026-11-20T10:03:00.000Z', version: 5 })

    const history = await c.history(id)
    t.same(history.map((h) => [h.before, h.after]), [
      [{ evaluation: '' }, { evaluation: 'useful' }],
      [{ status: 'pending' }, { status: 'reviewing' }],
      [{ review_note: '' }, { review_note: 'Asked for a call' }],
      [{ evaluation: 'useful' }, { evaluation: 'not_useful' }],
    ])
    t.same(history.map((h) => h.changed_at), ['2026-11-20T10:01:00.000Z', '2026-11-20T10:02:00.000Z', '2026-11-20T10:03:00.000Z', '2026-11-20T10:03:00.000Z'])
    t.ok(history.every((h) => h.actor?.email === ws.user.email && h.actor.id === ws.user.id))
  })

  t.test('fields together, and "" clears the evaluation', async (t) => {
    const { event_id: id } = await c.submit()
    let res = await c.patch(id, { evaluation: 'useful', status: 'contacted', note: 'Sent the demo' })
    t.equal(res.statusCode, 200)
    t.same([res.json().evaluation, res.json().status, res.json().review_note], ['useful', 'contacted', 'Sent the demo'])
    res = await c.patch(id, { evaluation: '' })
    t.same([res.json().evaluation, res.json().status, res.json().review_note], ['', 'contacted', 'Sent the demo'])
    res = await c.patch(id, { evaluation: 'not_useful', note: '' })
    t.same([res.json().evaluation, res.json().status, res.json().review_note], ['not_useful', 'contacted', ''])
    res = await c.patch(id, { status: 'done', evaluation: '' })
    t.same([res.json().evaluation, res.json().status, res.json().review_note], ['', 'done', ''])
    t.same(await c.get(id), { ...res.json() })
    const history = await c.history(id)
    t.same(history.at(-1)!.before, { evaluation: 'not_useful', status: 'contacted' })
    t.same(history.at(-1)!.after, { evaluation: '', status: 'done' })
    // The same value again is still a recorded (no-op) review.
    res = await c.patch(id, { status: 'done' })
    t.equal(res.statusCode, 200)
    t.equal((await c.history(id)).length, 5)
  })

  t.test('status takes all six values, in any order', async (t) => {
    const { event_id: id } = await c.submit()
    for (const status of [...STATUSES].reverse().concat(STATUSES)) {
      const res = await c.patch(id, { status })
      t.equal(res.statusCode, 200, status)
      t.equal(res.json().status, status)
      t.equal((await c.get(id)).status, status)
    }
    t.equal((await c.history(id)).length, 12)
  })

  t.test('invalid bodies are 400 and change nothing', async (t) => {
    const { event_id: id } = await c.submit()
    await c.patch(id, { evaluation: 'useful', status: 'reviewing', note: 'keep me' })
    const before = await c.get(id)
    const cases: [unknown, string[]][] = [
      [{ evaluation: 'maybe' }, ['evaluation']],
      [{ evaluation: 'USEFUL' }, ['evaluation']],
      [{ evaluation: null }, ['evaluation']],
      [{ evaluation: true }, ['evaluation']],
      [{ status: 'closed' }, ['status']],
      [{ status: '' }, ['status']],
      [{ status: ['done'] }, ['status']],
      [{ note: 12 }, ['note']],
      [{ note: null }, ['note']],
      [{ note: 'x'.repeat(2001) }, ['note']],
      [{ note: '😀'.repeat(2001) }, ['note']],
      [{ reviewer: 'me' }, ['reviewer']],
      [{ status: 'done', review_note: 'wrong name' }, ['review_note']],
      [{ status: 'done', event_id: id }, ['event_id']],
      [{ status: 'bogus', evaluation: 'maybe' }, ['evaluation', 'status']],
    ]
    for (const [body, paths] of cases) {
      const res = await c.patch(id, body)
      t.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 60))
      const err = res.json().error
      t.equal(err.code, 'invalid_arguments')
      t.same([...new Set(err.details.map((d: { path: string }) => d.path))].sort(), paths, JSON.stringify(body).slice(0, 60))
    }
    for (const body of [{}, [], 'done', 3, null]) {
      const res = await c.patch(id, body)
      t.equal(res.statusCode, 400, `body ${JSON.stringify(body)}`)
      t.equal(res.json().error.code, 'invalid_arguments', `body ${JSON.stringify(body)}`)
    }
    const broken = await app.inject({
      method: 'PATCH',
      url: `${base(ws.project.id)}/opportunities/${id}/review`,
      headers: { ...bearer(ws.keys.mcp), 'content-type': 'application/json' },
      payload: '{"status":',
    })
    t.equal(broken.statusCode, 400)
    t.equal(broken.json().error.code, 'invalid_json')
    t.same(await c.get(id), before, 'nothing changed')
    t.equal((await c.history(id)).length, 1, 'no rejected review is in the history')
  })

  t.test('note: 2000 characters (code points) of multi-byte text is the limit', async (t) => {
    const { event_id: id } = await c.submit()
    const note = '😀'.repeat(2000)
    t.equal(note.length, 4000) // UTF-16 units
    let res = await c.patch(id, { note })
    t.equal(res.statusCode, 200)
    t.equal(res.json().review_note, note)
    t.equal((await c.get(id)).review_note, note)
    const mixed = 'é'.repeat(999) + '😀'.repeat(1000) + '中'
    t.equal([...mixed].length, 2000)
    res = await c.patch(id, { note: mixed })
    t.equal(res.statusCode, 200)
    t.equal(res.json().review_note, mixed)
    res = await c.patch(id, { note: mixed + 'x' })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details.map((d: { path: string }) => d.path), ['note'])
    res = await c.patch(id, { note: 'a'.repeat(2000) })
    t.equal(res.statusCode, 200)
    t.equal((await c.get(id)).review_note.length, 2000)
  })

  t.test('a note with a NUL character is a 400, not a 500', async (t) => {
    // PostgreSQL text cannot hold \u0000: the registry refuses it before any write.
    const { event_id: id } = await c.submit()
    const res = await c.patch(id, { note: 'before\u0000after' })
    t.not(res.statusCode, 200)
    t.equal(res.statusCode, 400, 'status')
    t.same(res.json().error?.details?.map((d: { path: string }) => d.path), ['note'], 'details')
    t.equal((await c.get(id)).review_note, '', 'nothing stored')
    t.same(await c.history(id), [], 'nothing recorded')
  })

  t.test('unknown and foreign event ids are 404', async (t) => {
    const { event_id: mine } = await c.submit()
    let res = await c.patch('opp_doesnotexist000000', { status: 'done' })
    t.equal(res.statusCode, 404)
    t.equal(res.json().error.code, 'not_found')
    res = await c.patch('not-an-id', { status: 'done' })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details.map((d: { path: string }) => d.path), ['event_id'])

    // Another project of the same workspace.
    const sibling = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Sibling', slug: 'sibling' })
    const sib = client(app, ws.keys.mcp, sibling.id)
    const { event_id: theirs } = await sib.submit()
    res = await c.patch(theirs, { status: 'done' })
    t.equal(res.statusCode, 404, 'an opportunity of a sibling project through this project')
    t.equal(res.json().error.code, 'not_found')
    res = await sib.patch(mine, { status: 'done' })
    t.equal(res.statusCode, 404, 'this project’s opportunity through the sibling')
    const h = await app.inject({ method: 'GET', url: `${base(ws.project.id)}/opportunities/${theirs}/history`, headers: bearer(ws.keys.mcp) })
    t.equal(h.statusCode, 404)

    // Another workspace.
    const other = await seedWorkspace(app)
    const oc = client(app, other.keys.mcp, other.project.id)
    const { event_id: foreign } = await oc.submit()
    res = await c.patch(foreign, { status: 'done' })
    t.equal(res.statusCode, 404)
    t.equal(res.json().error.code, 'not_found')
    res = await c.patch(foreign, { status: 'done' }, other.project.id)
    t.equal(res.statusCode, 404, 'the other workspace’s project through my key')
    t.equal(res.json().error.code, 'not_found')
    res = await oc.patch(mine, { status: 'done' }, ws.project.id)
    t.equal(res.statusCode, 404)

    // None of them changed.
    t.same((await sib.get(theirs)).status, 'pending')
    t.same((await oc.get(foreign)).status, 'pending')
    t.same((await c.get(mine)).status, 'pending')
    t.same(await oc.history(foreign), [])
  })

  t.test('concurrent reviews of different fields never clobber each other', async (t) => {
    const { event_id: id } = await c.submit()
    const statusValues = ['reviewing', 'contacted', 'adopted', 'ignored', 'done', 'reviewing', 'contacted', 'adopted', 'ignored', 'done']
    const notes = Array.from({ length: 10 }, (_, i) => `note ${i}`)
    const bodies = statusValues.flatMap((status, i) => [{ status }, { note: notes[i]! }])
    const results = await Promise.all(bodies.map((b) => c.patch(id, b)))
    t.same(results.map((r) => r.statusCode), bodies.map(() => 200))
    for (const [i, r] of results.entries()) {
      // Each response shows its own change applied, and evaluation (sent by none) untouched.
      const body = bodies[i] as { status?: string; note?: string }
      if (body.status) t.equal(r.json().status, body.status)
      if (body.note) t.equal(r.json().review_note, body.note)
      t.equal(r.json().evaluation, '')
    }

    const history = await c.history(id)
    t.equal(history.length, 20, 'every PATCH recorded exactly once')
    const sentKeys = (b: object) => Object.keys(b).map((k) => (k === 'note' ? 'review_note' : k)).sort()
    // The history is a multiset of exactly the sent changes.
    const asSent = bodies.map((b) => JSON.stringify(Object.entries(b).map(([k, v]) => [k === 'note' ? 'review_note' : k, v]))).sort()
    const recorded = history.map((h) => JSON.stringify(Object.entries(h.after))).sort()
    t.same(recorded, asSent)
    t.ok(history.every((h) => sentKeys(h.before).join() === sentKeys(h.after).join()))
    t.ok(history.every((h) => !('evaluation' in h.after)), 'no one changed evaluation')
    // Serialised: each change's "before" is the previous change's "after" for that field.
    const state: Record<string, string> = { status: 'pending', review_note: '' }
    for (const [i, h] of history.entries()) {
      for (const [field, value] of Object.entries(h.before)) t.equal(value, state[field], `history[${i}].before.${field}`)
      Object.assign(state, h.after)
    }
    const final = await c.get(id)
    t.equal(final.status, state.status, 'final status = the last one applied')
    t.equal(final.review_note, state.review_note, 'final note = the last one applied')
    t.equal(final.evaluation, '')
  })

  t.test('evaluation and note sent concurrently are both kept (10 rounds)', async (t) => {
    clock.set('2026-11-20T12:00:00Z')
    for (let round = 0; round < 10; round++) {
      const { event_id: id } = await c.submit()
      const evaluation = round % 2 ? 'useful' : 'not_useful'
      const [a, b, s] = await Promise.all([
        c.patch(id, { evaluation }),
        c.patch(id, { note: `round ${round}` }),
        c.patch(id, { status: 'reviewing' }),
      ])
      t.same([a!.statusCode, b!.statusCode, s!.statusCode], [200, 200, 200])
      t.same(await c.get(id), {
        event_id: id,
        evaluation,
        status: 'reviewing',
        review_note: `round ${round}`,
        review_updated_at: '2026-11-20T12:00:00.000Z',
        version: 4,
      }, `round ${round}`)
      t.equal((await c.history(id)).length, 3)
    }
  })

  t.test('after all the concurrent reviews, every filtered total matches the rows', async (t) => {
    const list = async (q: string) => (await app.inject({ method: 'GET', url: `${base(ws.project.id)}/opportunities?page_size=100${q}`, headers: bearer(ws.keys.mcp) })).json()
    const everything = await list('')
    t.equal(everything.items.length, everything.total)
    for (const status of STATUSES) {
      for (const evaluation of ['all', 'useful', 'not_useful']) {
        const expected = everything.items.filter((o: Review) => o.status === status && (evaluation === 'all' || o.evaluation === evaluation)).length
        const pg = await list(`&status=${status}&evaluation=${evaluation}`)
        t.equal(pg.total, expected, `${status}/${evaluation}`)
        t.equal(pg.items.length, expected)
      }
    }
  })
  t.end()
})
