import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`

function submit(app: FastifyInstance, key: string, project: string, body: Record<string, unknown>) {
  return app.inject({ method: 'POST', url: `${base(project)}/opportunities`, headers: bearer(key), payload: body })
}

const sample = (n: number, extra: Record<string, unknown> = {}) => ({
  contribution_type: n % 2 ? 'potential_user_opportunity' : 'partnership',
  key_information: `Lead number ${n}`,
  reason: 'Asked about pricing',
  suggested_action: 'Reply with the demo link',
  ...extra,
})

t.test('opportunities: submit, list, review, history', async (t) => {
  const clock = fixedClock('2026-11-20T10:00:00Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const key = ws.keys.mcp
  const project = ws.project.id

  t.test('submission is idempotent by external_id', async (t) => {
    const first = await submit(app, key, project, sample(1, { external_id: 'ext-1', source_url: 'https://example.com/thread' }))
    t.equal(first.statusCode, 201)
    const body = first.json()
    t.match(body.event_id, /^opp_/)
    t.equal(body.status, 'pending')
    t.equal(body.evaluation, '')
    t.equal(body.review_note, '')
    t.equal(body.review_updated_at, null)
    t.equal(body.created, true)
    const again = await submit(app, key, project, sample(1, { external_id: 'ext-1', key_information: 'changed' }))
    t.equal(again.statusCode, 200)
    t.equal(again.json().event_id, body.event_id)
    t.equal(again.json().created, false)
    t.equal(again.json().key_information, 'Lead number 1')
  })

  t.test('submission validates every field', async (t) => {
    const bad = await submit(app, key, project, { contribution_type: 'Bad Type', key_information: '', extra: 1 })
    t.equal(bad.statusCode, 400)
    const err = bad.json().error
    t.equal(err.code, 'invalid_arguments')
    const paths = err.details.map((d: { path: string }) => d.path).sort()
    t.same(paths, ['contribution_type', 'extra', 'key_information', 'reason', 'suggested_action'])
  })

  t.test('listing: defaults, order and page shape', async (t) => {
    for (let i = 2; i <= 5; i++) {
      clock.set(`2026-11-20T10:0${i}:00Z`)
      t.equal((await submit(app, key, project, sample(i))).statusCode, 201)
    }
    const res = await app.inject({ method: 'GET', url: `${base(project)}/opportunities`, headers: bearer(key) })
    t.equal(res.statusCode, 200)
    const page = res.json()
    t.equal(page.page, 1)
    t.equal(page.page_size, 20)
    t.equal(page.total, 5)
    t.equal(page.total_pages, 1)
    t.same(page.items.map((o: { key_information: string }) => o.key_information), ['Lead number 5', 'Lead number 4', 'Lead number 3', 'Lead number 2', 'Lead number 1'])
    t.same(Object.keys(page.items[0]).sort(), [
      'assignee', 'contribution_type', 'evaluation', 'event_id', 'external_id', 'key_information', 'merged_into', 'reason', 'received_at', 'report_count',
      'review_note', 'review_updated_at', 'source_url', 'status', 'suggested_action', 'tags', 'version',
    ])
  })

  t.test('review: only sent fields change, history records before → after', async (t) => {
    const list = (await app.inject({ method: 'GET', url: `${base(project)}/opportunities`, headers: bearer(key) })).json()
    const id = list.items[0].event_id
    const patch = (payload: unknown) =>
      app.inject({ method: 'PATCH', url: `${base(project)}/opportunities/${id}/review`, headers: bearer(key), payload: payload as object })

    clock.set('2026-11-20T11:00:00Z')
    let res = await patch({ evaluation: 'useful' })
    t.equal(res.statusCode, 200)
    t.same(res.json(), { event_id: id, evaluation: 'useful', status: 'pending', review_note: '', review_updated_at: '2026-11-20T11:00:00.000Z', version: 2 })
    res = await patch({ status: 'contacted' })
    t.same(res.json().evaluation, 'useful')
    t.same(res.json().status, 'contacted')
    res = await patch({ note: 'Called them' })
    t.same([res.json().evaluation, res.json().status, res.json().review_note], ['useful', 'contacted', 'Called them'])
    res = await patch({ evaluation: '', status: 'done', note: 'n'.repeat(10) })
    t.same([res.json().evaluation, res.json().status, res.json().review_note], ['', 'done', 'nnnnnnnnnn'])

    const history = (await app.inject({ method: 'GET', url: `${base(project)}/opportunities/${id}/history`, headers: bearer(key) })).json()
    t.equal(history.items.length, 4)
    t.same(history.items[0].before, { evaluation: '' })
    t.same(history.items[0].after, { evaluation: 'useful' })
    t.equal(history.items[0].actor.email, ws.user.email)
    t.same(history.items[3].after, { evaluation: '', status: 'done', review_note: 'nnnnnnnnnn' })
  })
  t.end()
})
