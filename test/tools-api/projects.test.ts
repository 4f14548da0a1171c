// Projects over REST: create (201, the creator owns it), list, read by id and slug, partial
// PATCH, slug uniqueness, bounds, time zones, roles and workspaces, and the re-derivation of
// the daily metrics when the time zone changes.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { addMember, bearer, buildTestApp, expectStatus, fixedClock, seedWorkspace } from '../helpers/app.ts'

const NOW = '2026-11-20T12:00:00.000Z'
const TINY = '2026-11-20T12:05:00.000Z'
const LATER = '2026-11-20T13:30:00.000Z'

t.test('projects', async (t) => {
  const clock = fixedClock(NOW)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const h = bearer(ws.keys.service)
  const create = (payload: Record<string, unknown>, headers: Record<string, string> = h) => app.inject({ method: 'POST', url: '/v1/projects', headers, payload })
  const get = (ref: string, headers: Record<string, string> = h) => app.inject({ method: 'GET', url: `/v1/projects/${ref}`, headers })
  const patch = (ref: string, payload: unknown, headers: Record<string, string> = h) =>
    app.inject({ method: 'PATCH', url: `/v1/projects/${ref}`, headers, payload: payload as object })
  const list = async (headers: Record<string, string> = h) => {
    const res = await app.inject({ method: 'GET', url: '/v1/projects', headers })
    expectStatus(t, res, 200)
    return res.json().items as { id: string; slug: string; role: string }[]
  }

  const full = {
    slug: 'acme-app',
    name: 'Acme App',
    description: 'Invoices for freelancers',
    website: 'https://acme.example',
    audience: 'Freelance designers',
    value_proposition: 'Get paid in one click',
    goals: ['100 paying users', 'launch on PH'],
    channels: ['SEO', 'newsletter'],
    stage: 'beta',
    timezone: 'Europe/Berlin',
  }
  let acme: Record<string, unknown> & { id: string }

  t.test('POST /v1/projects creates a project owned by its creator', async (t) => {
    const res = await create(full)
    expectStatus(t, res, 201)
    acme = res.json()
    t.match(acme.id, /^prj_[0-9A-Za-z]+$/)
    t.same(acme, { id: acme.id, ...full, role: 'owner', created_at: NOW, updated_at: NOW })

    clock.set(TINY)
    const minimal = await create({ slug: 'tiny', name: 'Tiny' })
    expectStatus(t, minimal, 201)
    t.same(minimal.json(), {
      id: minimal.json().id,
      slug: 'tiny',
      name: 'Tiny',
      description: '',
      website: '',
      audience: '',
      value_proposition: '',
      goals: [],
      channels: [],
      stage: '',
      timezone: 'UTC',
      created_at: TINY,
      updated_at: TINY,
      role: 'owner',
    })
    clock.set(NOW)

    // Oldest first (the bootstrap project is stamped by the database clock, so it is left out
    // of the order check).
    const items = await list()
    t.same(items.filter((p) => p.id !== ws.project.id).map((p) => [p.id, p.slug, p.role]), [
      [acme.id, 'acme-app', 'owner'],
      [minimal.json().id, 'tiny', 'owner'],
    ])
    t.match(items.find((p) => p.id === ws.project.id), { slug: ws.project.slug, role: 'owner' })
    t.equal(items.length, 3)
    t.same(items.find((p) => p.id === acme.id), acme, 'the listing carries the whole card')
    // The other workspace sees none of it.
    t.same((await list(bearer(other.keys.service))).map((p) => p.id), [other.project.id])
  })

  t.test('a member who creates a project owns it; others are not members of it', async (t) => {
    const viewer = await addMember(app, ws.project.id, 'viewer')
    const vh = bearer(viewer.keys.service)
    const res = await create({ slug: 'viewer-side', name: 'Side project' }, vh)
    expectStatus(t, res, 201)
    t.equal(res.json().role, 'owner')
    t.same((await list(vh)).map((p) => [p.slug, p.role]).sort(), [[ws.project.slug, 'viewer'], ['viewer-side', 'owner']])
    const byOwner = await get('viewer-side')
    t.equal(byOwner.statusCode, 404, 'the workspace owner is no member of it')
    const edit = await patch('viewer-side', { stage: 'idea' }, vh)
    expectStatus(t, edit, 200)
    t.equal(edit.json().stage, 'idea')
  })

  t.test('GET /v1/projects/:project by id and by slug', async (t) => {
    const byId = await get(acme.id)
    expectStatus(t, byId, 200)
    t.same(byId.json(), acme)
    const bySlug = await get('acme-app')
    expectStatus(t, bySlug, 200)
    t.same(bySlug.json(), acme)
    for (const ref of ['prj_doesnotexist', 'no-such-slug', other.project.id]) {
      const res = await get(ref)
      t.equal(res.statusCode, 404, ref)
      t.equal(res.json().error.code, 'not_found')
    }
    t.equal((await get(acme.id, {})).statusCode, 401)
    t.equal((await get(acme.id, bearer(ws.keys.mcp))).statusCode, 401, 'the tools API takes service keys')
  })

  t.test('PATCH changes only the sent fields', async (t) => {
    clock.set(LATER)
    const res = await patch(acme.id, { goals: ['1000 paying users'] })
    expectStatus(t, res, 200)
    t.same(res.json(), { ...acme, goals: ['1000 paying users'], updated_at: LATER })
    t.same((await get('acme-app')).json(), res.json(), 'stored')

    // One more field at a time, each leaving the rest alone; an empty list or string clears.
    clock.set('2026-11-20T14:00:00.000Z')
    const two = await patch('acme-app', { channels: [], website: '' })
    expectStatus(t, two, 200)
    t.same(two.json(), { ...acme, goals: ['1000 paying users'], channels: [], website: '', updated_at: '2026-11-20T14:00:00.000Z' })
    // value_proposition maps to its own column.
    const vp = await patch('acme-app', { value_proposition: 'Paid in one click, no chasing' })
    t.equal(vp.json().value_proposition, 'Paid in one click, no chasing')
    t.equal(vp.json().audience, full.audience)
    t.equal(vp.json().created_at, NOW, 'created_at never moves')
    clock.set(NOW)
  })

  t.test('PATCH needs a non-empty body of card fields', async (t) => {
    const before = (await get(acme.id)).json()
    for (const [what, body, path] of [
      ['empty object', {}, ''],
      ['unknown field', { owner: 'me' }, 'owner'],
      ['id is not editable', { id: 'prj_other' }, 'id'],
      ['created_at is not editable', { created_at: NOW }, 'created_at'],
      ['role is not editable', { role: 'viewer' }, 'role'],
      ['wrong type', { goals: 'more users' }, 'goals'],
      ['null', { description: null }, 'description'],
    ] as const) {
      const res = await patch(acme.id, body)
      t.equal(res.statusCode, 400, what)
      t.equal(res.json().error.code, 'invalid_arguments', what)
      t.same(res.json().error.details.map((d: { path: string }) => d.path), [path], what)
    }
    const noBody = await app.inject({ method: 'PATCH', url: `/v1/projects/${acme.id}`, headers: h })
    t.equal(noBody.statusCode, 400)
    t.same((await get(acme.id)).json(), before, 'nothing changed')
  })

  t.test('slugs: unique per workspace, URL-safe', async (t) => {
    let res = await create({ slug: 'acme-app', name: 'Copy' })
    t.equal(res.statusCode, 409)
    t.same(res.json().error, { code: 'conflict', message: "The slug 'acme-app' is taken in this workspace.", details: [{ path: 'slug', message: 'is taken' }] })
    res = await patch('tiny', { slug: 'acme-app' })
    t.equal(res.statusCode, 409)
    t.equal(res.json().error.code, 'conflict')
    t.same(res.json().error.details, [{ path: 'slug', message: 'is taken' }])
    t.equal((await get('tiny')).statusCode, 200, 'tiny kept its slug')
    // Keeping one's own slug is no conflict.
    res = await patch('acme-app', { slug: 'acme-app' })
    expectStatus(t, res, 200)
    // Another workspace may use the same slug.
    res = await create({ slug: 'acme-app', name: 'Their Acme' }, bearer(other.keys.service))
    expectStatus(t, res, 201)
    t.not(res.json().id, acme.id)
    t.equal((await get('acme-app')).json().id, acme.id, 'each workspace resolves its own slug')

    for (const slug of ['Acme', 'acme app', '-acme', 'acme-', 'acme_app', '', 'a'.repeat(65), 'ümlaut']) {
      res = await create({ slug, name: 'Bad' })
      t.equal(res.statusCode, 400, `create ${JSON.stringify(slug)}`)
      t.same(res.json().error.details.map((d: { path: string }) => d.path), ['slug'], `create ${JSON.stringify(slug)}`)
      res = await patch(acme.id, { slug })
      t.equal(res.statusCode, 400, `patch ${JSON.stringify(slug)}`)
    }
    for (const slug of ['a', 'a1', '1-2-3', 'x'.repeat(64)]) {
      res = await create({ slug, name: 'Good' })
      t.equal(res.statusCode, 201, `create ${slug}`)
    }

    // Renaming the slug moves the project: the new slug reaches it, the old one is free.
    res = await patch('tiny', { slug: 'tiny-renamed' })
    expectStatus(t, res, 200)
    t.equal(res.json().slug, 'tiny-renamed')
    t.equal((await get('tiny')).statusCode, 404)
    t.equal((await get('tiny-renamed')).json().id, res.json().id)
  })

  t.test('time zones are IANA names', async (t) => {
    let res = await patch(acme.id, { timezone: 'Mars/Olympus' })
    t.equal(res.statusCode, 400)
    t.equal(res.json().error.code, 'invalid_arguments')
    t.same(res.json().error.details, [{ path: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin' }])
    res = await create({ slug: 'mars', name: 'Mars', timezone: 'Mars/Olympus' })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details, [{ path: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin' }])
    t.equal((await get('mars')).statusCode, 404, 'not created')
    res = await patch(acme.id, { timezone: '' })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details.map((d: { path: string }) => d.path), ['timezone'])
    t.equal((await get(acme.id)).json().timezone, 'Europe/Berlin')

    res = await patch(acme.id, { timezone: 'America/New_York' })
    expectStatus(t, res, 200)
    t.equal(res.json().timezone, 'America/New_York')
    res = await create({ slug: 'ny', name: 'NY', timezone: 'America/New_York' })
    expectStatus(t, res, 201)
    t.equal(res.json().timezone, 'America/New_York')
  })

  t.test('bounds', async (t) => {
    const check = async (body: Record<string, unknown>, status: number, path?: string) => {
      const res = await patch(acme.id, body)
      t.equal(res.statusCode, status, `${Object.keys(body)[0]}: ${res.statusCode === status ? status : res.body.slice(0, 300)}`)
      if (path !== undefined) t.same(res.json().error.details.map((d: { path: string }) => d.path), [path])
    }
    await check({ name: 'n'.repeat(200) }, 200)
    await check({ name: 'n'.repeat(201) }, 400, 'name')
    await check({ name: '' }, 400, 'name')
    await check({ goals: Array.from({ length: 50 }, (_, i) => `goal ${i}`) }, 200)
    await check({ goals: Array.from({ length: 51 }, (_, i) => `goal ${i}`) }, 400, 'goals')
    await check({ goals: ['g'.repeat(501)] }, 400, 'goals[0]')
    await check({ goals: [''] }, 400, 'goals[0]')
    await check({ channels: Array.from({ length: 51 }, (_, i) => `c${i}`) }, 400, 'channels')
    await check({ description: 'd'.repeat(5000) }, 200)
    await check({ description: 'd'.repeat(5001) }, 400, 'description')
    await check({ stage: 's'.repeat(101) }, 400, 'stage')
    const res = await create({ slug: 'long-name', name: 'n'.repeat(201) })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details, [{ path: 'name', message: 'must NOT have more than 200 characters' }])
    const many = await create({ slug: 'many-goals', name: 'Many', goals: Array.from({ length: 51 }, (_, i) => `g${i}`) })
    t.equal(many.statusCode, 400)
    t.same(many.json().error.details, [{ path: 'goals', message: 'must NOT have more than 50 items' }])
    const missing = await create({ slug: 'no-name' })
    t.equal(missing.statusCode, 400)
    t.same(missing.json().error.details, [{ path: 'name', message: 'is required' }])
  })

  t.test('only owners change the card; other workspaces see nothing', async (t) => {
    const viewer = await addMember(app, acme.id, 'viewer')
    const reviewer = await addMember(app, acme.id, 'reviewer')
    const coOwner = await addMember(app, acme.id, 'owner')
    const before = (await get(acme.id)).json()
    for (const [who, key] of [['viewer', viewer.keys.service], ['reviewer', reviewer.keys.service]] as const) {
      const read = await get(acme.id, bearer(key))
      expectStatus(t, read, 200)
      t.same(read.json(), { ...before, role: who }, `${who} reads the card with their role`)
      const res = await patch(acme.id, { stage: 'growth' }, bearer(key))
      t.equal(res.statusCode, 403, who)
      t.equal(res.json().error.code, 'forbidden', who)
      t.match(res.json().error.message, /owner/)
    }
    t.same((await get(acme.id)).json(), before, 'unchanged')
    const res = await patch(acme.id, { stage: 'growth' }, bearer(coOwner.keys.service))
    expectStatus(t, res, 200)
    t.equal(res.json().stage, 'growth')
    t.equal(res.json().role, 'owner')

    const oh = bearer(other.keys.service)
    for (const ref of [acme.id, ws.project.id]) {
      const read = await get(ref, oh)
      t.equal(read.statusCode, 404)
      t.equal(read.json().error.code, 'not_found')
      const write = await patch(ref, { stage: 'x' }, oh)
      t.equal(write.statusCode, 404)
      t.equal(write.json().error.code, 'not_found')
    }
    t.equal((await get(acme.id)).json().stage, 'growth')
  })

  t.test('changing the time zone re-derives the daily metrics', async (t) => {
    // 12:00Z is 04:00 in Los Angeles (PST, UTC-8): "today" is 2026-11-20 in both zones.
    clock.set(NOW)
    const project = ws.project.id
    const ingest = async (events: { event: string; distinct_id: string; timestamp: string }[]) => {
      const res = await app.inject({
        method: 'POST',
        url: '/v1/events',
        headers: bearer(ws.keys.ingest),
        payload: { events: events.map((e) => ({ ...e, uuid: randomUUID() })) },
      })
      expectStatus(t, res, 200)
      t.same(res.json(), { accepted: events.length, duplicates: 0 })
    }
    await ingest([
      { event: 'signup', distinct_id: 'ann', timestamp: '2026-11-20T03:00:00Z' }, // UTC 20th, LA 19th 19:00
      { event: 'daily_use', distinct_id: 'ann', timestamp: '2026-11-20T07:30:00Z' }, // UTC 20th, LA 19th 23:30
      { event: 'daily_use', distinct_id: 'bob', timestamp: '2026-11-20T09:00:00Z' }, // UTC 20th, LA 20th 01:00
      { event: 'signup', distinct_id: 'bob', timestamp: '2026-11-19T06:00:00Z' }, // UTC 19th, LA 18th 22:00
      { event: 'daily_use', distinct_id: 'ann', timestamp: '2026-11-19T20:00:00Z' }, // UTC 19th, LA 19th 12:00
    ])
    const zero = { registered_users: 0, daily_use_users: 0, active_users: 0, signup_events: 0, daily_use_events: 0 }
    const week = (records: Record<string, Partial<typeof zero>>) =>
      ['2026-11-14', '2026-11-15', '2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20'].map((date) => ({ date, ...zero, ...records[date] }))
    const dailyOps = async () => {
      const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/daily-ops`, headers: bearer(ws.keys.mcp) })
      expectStatus(t, res, 200)
      return res.json()
    }
    const utc = week({
      '2026-11-19': { registered_users: 1, signup_events: 1, daily_use_users: 1, active_users: 1, daily_use_events: 1 },
      '2026-11-20': { registered_users: 1, signup_events: 1, daily_use_users: 2, active_users: 2, daily_use_events: 2 },
    })
    t.same(await dailyOps(), { project, timezone: 'UTC', window: '7d', from: '2026-11-14', to: '2026-11-20', days: utc, previous: null })

    const res = await patch(project, { timezone: 'America/Los_Angeles' })
    expectStatus(t, res, 200)
    t.equal(res.json().timezone, 'America/Los_Angeles')
    const la = week({
      '2026-11-18': { registered_users: 1, signup_events: 1 },
      '2026-11-19': { registered_users: 1, signup_events: 1, daily_use_users: 1, active_users: 1, daily_use_events: 2 },
      '2026-11-20': { daily_use_users: 1, active_users: 1, daily_use_events: 1 },
    })
    t.same(await dailyOps(), { project, timezone: 'America/Los_Angeles', window: '7d', from: '2026-11-14', to: '2026-11-20', days: la, previous: null })

    // The per-event summary moved with it.
    const summary = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${project}/daily-event-summary`, headers: bearer(ws.keys.mcp) })
    t.same(summary.json().days.slice(-3), [
      { date: '2026-11-18', events: [{ event: 'signup', count: 1, unique_users: 1 }] },
      { date: '2026-11-19', events: [{ event: 'daily_use', count: 2, unique_users: 1 }, { event: 'signup', count: 1, unique_users: 1 }] },
      { date: '2026-11-20', events: [{ event: 'daily_use', count: 1, unique_users: 1 }] },
    ])

    // New events land on the new zone's days; unique users stay exact across old and new.
    await ingest([
      { event: 'daily_use', distinct_id: 'ann', timestamp: '2026-11-20T05:00:00Z' }, // LA 19th 21:00: ann again
      { event: 'daily_use', distinct_id: 'cat', timestamp: '2026-11-20T05:00:00Z' }, // LA 19th: a new user
    ])
    const la2 = week({
      '2026-11-18': { registered_users: 1, signup_events: 1 },
      '2026-11-19': { registered_users: 1, signup_events: 1, daily_use_users: 2, active_users: 2, daily_use_events: 4 },
      '2026-11-20': { daily_use_users: 1, active_users: 1, daily_use_events: 1 },
    })
    t.same((await dailyOps()).days, la2)

    // Changing something else does not touch the metrics; back to UTC re-derives again.
    await patch(project, { stage: 'launched' })
    t.same((await dailyOps()).days, la2)
    const back = await patch(project, { timezone: 'UTC' })
    expectStatus(t, back, 200)
    t.same((await dailyOps()).days, week({
      '2026-11-19': { registered_users: 1, signup_events: 1, daily_use_users: 1, active_users: 1, daily_use_events: 1 },
      '2026-11-20': { registered_users: 1, signup_events: 1, daily_use_users: 3, active_users: 3, daily_use_events: 4 },
    }))
  })
})
