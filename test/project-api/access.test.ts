// Who may do what on the project-side API: viewers read metrics but not opportunities,
// reviewers review, other workspaces see nothing (404, never 403), slugs work like ids.
import t from 'tap'
import { eq } from '../../db/orm.ts'
import type { FastifyInstance } from 'fastify'
import { addMember, bearer, buildTestApp, fixedClock, seedWorkspace, writeBehind } from '../helpers/app.ts'
import { createKey } from '../../bin/admin.ts'
import { projects } from '../../db/schema.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`
const sample = { contribution_type: 'partnership', key_information: 'A partner', reason: 'r', suggested_action: 'a' }

t.test('project-side API access', async (t) => {
  const clock = fixedClock('2026-11-20T10:00:00Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  // A slug of its own: both workspaces would otherwise have `demo-project`.
  await writeBehind(app, app.db.update(projects).set({ slug: 'alpha-launch' }).where(eq(projects.id, project)))
  const owner = ws.keys.mcp
  const viewer = await addMember(app, project, 'viewer')
  const reviewer = await addMember(app, project, 'reviewer')
  const other = await seedWorkspace(app)

  const req = (app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH', url: string, key: string, payload?: object) =>
    app.inject({ method, url, headers: bearer(key), ...(payload ? { payload } : {}) })

  const first = await req(app, 'POST', `${base(project)}/opportunities`, owner, { ...sample, external_id: 'first' })
  t.equal(first.statusCode, 201)
  const oppId: string = first.json().event_id
  const ingest = await app.inject({
    method: 'POST',
    url: '/v1/events',
    headers: bearer(ws.keys.ingest),
    payload: { events: [{ event: 'signup', distinct_id: viewer.user.email, timestamp: '2026-11-20T09:00:00Z' }] },
  })
  t.same(ingest.json(), { accepted: 1, duplicates: 0 })

  const reviewOnly = (p: string, id = oppId): [string, 'GET' | 'POST' | 'PATCH', string, object?][] => [
    ['listing', 'GET', `${base(p)}/opportunities`],
    ['review', 'PATCH', `${base(p)}/opportunities/${id}/review`, { status: 'done' }],
    ['submit', 'POST', `${base(p)}/opportunities`, { ...sample, external_id: 'by-someone' }],
    ['history', 'GET', `${base(p)}/opportunities/${id}/history`],
  ]
  const readable = (p: string): [string, string][] => [
    ['overview', `${base(p)}/overview`],
    ['daily-ops', `${base(p)}/daily-ops`],
    ['daily-event-summary', `${base(p)}/daily-event-summary`],
    ['event-stream', `${base(p)}/event-stream`],
  ]

  t.test('a viewer: 403 review_access_required on opportunities, 200 on metrics', async (t) => {
    for (const [name, method, url, payload] of reviewOnly(project)) {
      const res = await req(app, method, url, viewer.keys.mcp, payload)
      t.equal(res.statusCode, 403, name)
      t.equal(res.json().error.code, 'review_access_required', name)
      t.match(res.json().error.message, /review access/, name)
    }
    for (const [name, url] of readable(project)) {
      const res = await req(app, 'GET', url, viewer.keys.mcp)
      t.equal(res.statusCode, 200, name)
    }
    // The viewer's metrics are the project's, and the stream is the viewer's own.
    const ops = (await req(app, 'GET', `${base(project)}/daily-ops`, viewer.keys.mcp)).json()
    t.equal(ops.days.at(-1).signup_events, 1)
    const stream = (await req(app, 'GET', `${base(project)}/event-stream`, viewer.keys.mcp)).json()
    t.equal(stream.distinct_id, viewer.user.email)
    t.same(stream.items.map((e: { event: string }) => e.event), ['signup'])
    // The viewer's attempts changed nothing.
    const list = (await req(app, 'GET', `${base(project)}/opportunities`, owner)).json()
    t.equal(list.total, 1)
    t.equal(list.items[0].status, 'pending')
    t.same((await req(app, 'GET', `${base(project)}/opportunities/${oppId}/history`, owner)).json().items, [])
  })

  t.test('a viewer cannot ingest events either', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: { ...bearer(viewer.keys.mcp), 'x-service-project': project },
      payload: { events: [{ event: 'signup', distinct_id: 'someone', timestamp: '2026-11-20T09:30:00Z' }] },
    })
    t.equal(res.statusCode, 403)
    const ops = (await req(app, 'GET', `${base(project)}/daily-ops`, owner)).json()
    t.equal(ops.days.at(-1).signup_events, 1)
  })

  t.test('a read-only key of the owner acts as a viewer', async (t) => {
    const ro = await createKey(app, { email: ws.user.email, kind: 'mcp', readOnly: true })
    const res = await req(app, 'GET', `${base(project)}/opportunities`, ro.key)
    t.equal(res.statusCode, 403)
    t.equal(res.json().error.code, 'review_access_required')
    t.equal((await req(app, 'GET', `${base(project)}/overview`, ro.key)).statusCode, 200)
  })

  t.test('a reviewer can list, review, submit and read history', async (t) => {
    const [list, review, submit, history] = reviewOnly(project)
    let res = await req(app, list![1], list![2], reviewer.keys.mcp)
    t.equal(res.statusCode, 200)
    t.same(res.json().items.map((o: { event_id: string }) => o.event_id), [oppId])
    res = await req(app, review![1], review![2], reviewer.keys.mcp, review![3])
    t.equal(res.statusCode, 200)
    t.equal(res.json().status, 'done')
    res = await req(app, submit![1], submit![2], reviewer.keys.mcp, submit![3])
    t.equal(res.statusCode, 201)
    t.equal(res.json().created, true)
    res = await req(app, history![1], history![2], reviewer.keys.mcp)
    t.equal(res.statusCode, 200)
    t.equal(res.json().items.length, 1)
    t.same(res.json().items[0].actor, { id: reviewer.user.id, email: reviewer.user.email })
    for (const [name, url] of readable(project)) t.equal((await req(app, 'GET', url, reviewer.keys.mcp)).statusCode, 200, name)
    t.equal((await req(app, 'GET', `${base(project)}/opportunities`, owner)).json().total, 2)
  })

  t.test('another workspace’s key: 404 for this project by id and by slug', async (t) => {
    for (const ref of [project, 'alpha-launch']) {
      for (const [name, method, url, payload] of reviewOnly(ref)) {
        const res = await req(app, method, url, other.keys.mcp, payload)
        t.equal(res.statusCode, 404, `${name} ${ref}`)
        t.equal(res.json().error.code, 'not_found', `${name} ${ref}`)
      }
      for (const [name, url] of readable(ref)) {
        const res = await req(app, 'GET', url, other.keys.mcp)
        t.equal(res.statusCode, 404, `${name} ${ref}`)
        t.equal(res.json().error.code, 'not_found', `${name} ${ref}`)
      }
    }
    // Its ingest key cannot write into this project either.
    const res = await app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: bearer(other.keys.ingest),
      payload: { project, events: [{ event: 'signup', distinct_id: 'intruder', timestamp: '2026-11-20T09:30:00Z' }] },
    })
    t.equal(res.statusCode, 404)
    // … and this project's state is untouched.
    const list = (await req(app, 'GET', `${base(project)}/opportunities`, owner)).json()
    t.equal(list.total, 2)
    t.equal((await req(app, 'GET', `${base(project)}/daily-ops`, owner)).json().days.at(-1).signup_events, 1)
    // A viewer of this workspace is no member of the other project either.
    t.equal((await req(app, 'GET', `${base(other.project.id)}/overview`, viewer.keys.mcp)).statusCode, 404)
  })

  t.test('a slug works like the id, and means the caller’s own project', async (t) => {
    const byId = (await req(app, 'GET', `${base(project)}/opportunities`, owner)).json()
    const bySlug = await req(app, 'GET', `${base('alpha-launch')}/opportunities`, owner)
    t.equal(bySlug.statusCode, 200)
    t.same(bySlug.json(), byId)
    const overview = (await req(app, 'GET', `${base('alpha-launch')}/overview`, owner)).json()
    t.same(overview.project, { id: project, slug: 'alpha-launch', name: 'Demo project', timezone: 'UTC' })
    const patched = await req(app, 'PATCH', `${base('alpha-launch')}/opportunities/${oppId}/review`, owner, { note: 'by slug' })
    t.equal(patched.statusCode, 200)
    t.equal(patched.json().review_note, 'by slug')
    // The same slug in two workspaces: each key reaches its own project.
    t.equal(other.project.slug, 'demo-project')
    await writeBehind(app, app.db.update(projects).set({ slug: 'demo-project' }).where(eq(projects.id, project)))
    const mine = (await req(app, 'GET', `${base('demo-project')}/overview`, owner)).json()
    const theirs = (await req(app, 'GET', `${base('demo-project')}/overview`, other.keys.mcp)).json()
    t.equal(mine.project.id, project)
    t.equal(theirs.project.id, other.project.id)
    await writeBehind(app, app.db.update(projects).set({ slug: 'alpha-launch' }).where(eq(projects.id, project)))
    t.equal((await req(app, 'GET', `${base('no-such-project')}/overview`, owner)).statusCode, 404)
  })

  t.test('credentials: missing, malformed and of the wrong kind are 401', async (t) => {
    const url = `${base(project)}/overview`
    let res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 401)
    t.equal(res.json().error.code, 'unauthorized')
    t.match(res.headers['www-authenticate'], /^Bearer /)
    res = await req(app, 'GET', url, 'gdm_not-a-key')
    t.equal(res.statusCode, 401)
    for (const key of [ws.keys.service, ws.keys.ingest]) {
      res = await req(app, 'GET', url, key)
      t.equal(res.statusCode, 401, key.slice(0, 4))
      t.equal(res.json().error.code, 'unauthorized')
    }
  })
  t.end()
})
