// POST /v1/tools/:name: every operation's own examples (read from the registry, so a new tool
// is called here with no table to edit) — each valid one answers {result}, each invalid one 400
// invalid_arguments naming its field, changing nothing — the operations that are not tools the
// same way through the registry; the exact wording of validation details; some results checked
// in full; the body must be a JSON object (or nothing); and project selection by body, header,
// id and slug, with the body winning and other workspaces invisible.
import t from 'tap'
import { addMember, bearer, buildTestApp, expectStatus, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { allOperations, callArgs, invalidAnswerProblem, World } from '../helpers/examples.ts'
import { changedTables, snapshot } from '../fuzz/state.ts'

const NOW = '2026-11-20T12:00:00.000Z'

interface Detail {
  path: string
  message: string
}

t.test('tool calls over REST', async (t) => {
  const app = await buildTestApp(t, { now: fixedClock(NOW), config: { webhooks: { enabled: false, allowPrivateNetworks: true } } })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const h = bearer(ws.keys.service)
  const call = (name: string, payload?: unknown, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: `/v1/tools/${name}`,
      headers: { ...h, ...headers },
      ...(payload === undefined ? {} : { payload: payload as object }),
    })
  const project = ws.project.id

  // A second project of the same workspace, an opportunity and memories to act on.
  const second = await app.inject({ method: 'POST', url: '/v1/projects', headers: h, payload: { slug: 'second', name: 'Second' } })
  expectStatus(t, second, 201)
  const secondId: string = second.json().id
  const opp = await app.inject({
    method: 'POST',
    url: `/api/v1/mcp/projects/${project}/opportunities`,
    headers: bearer(ws.keys.mcp),
    payload: { contribution_type: 'partnership', key_information: 'Pricing partner wants a bundle', reason: 'inbound', suggested_action: 'call' },
  })
  expectStatus(t, opp, 201)
  const eventId: string = opp.json().event_id
  const memory = await call('add_memory', { project, content: 'Pricing page converts best on Tuesdays', tags: ['pricing'] })
  expectStatus(t, memory, 200)
  const memoryId: string = memory.json().result.id
  const doomed = await call('add_memory', { project, content: 'To be forgotten' })
  const doomedId: string = doomed.json().result.id
  // Webhooks to act on (made directly), and a message of the first.
  const hookOf = () => app.repos.webhooks.create({ workspaceId: ws.workspace.id, projectId: project, url: 'http://127.0.0.1:9/hook', events: ['memory.added'], description: '', secret: 'whsec_c2VjcmV0', createdBy: ws.user.id, now: new Date(NOW) })
  const hookId = (await hookOf()).id
  const doomedHookId = (await hookOf()).id
  const messageId = (await app.repos.webhooks.enqueueOne(hookId, 'webhook.test', {}, new Date(NOW))).id

  /**
   * Some tools' results checked in full, in this order (a review, then its history). Not a list
   * of every tool: every tool is called by its own examples below.
   */
  const results: Record<string, { args: Record<string, unknown>; expect: (r: Record<string, any>) => void }> = {
    create_webhook: {
      args: { project, url: 'http://127.0.0.1:9/new', events: ['memory.added', 'opportunity.reviewed'], description: ' CRM ' },
      expect: (r) => {
        t.match(r, { id: /^whk_/, project, url: 'http://127.0.0.1:9/new', events: ['memory.added', 'opportunity.reviewed'], description: 'CRM', enabled: true, failing: false, created_at: NOW })
        t.match(r.secret, /^whsec_[A-Za-z0-9+/]{32}$/)
      },
    },
    list_webhooks: { args: { project }, expect: (r) => t.ok(r.items.every((w: Record<string, unknown>) => !('secret' in w)) && r.items.some((w: { id: string }) => w.id === hookId)) },
    get_webhook: { args: { id: hookId }, expect: (r) => t.match(r, { id: hookId, project, events: ['memory.added'], previous_secret_expires_at: null }) && t.notOk('secret' in r) },
    update_webhook: { args: { id: hookId, description: 'changed', enabled: false }, expect: (r) => t.match(r, { id: hookId, description: 'changed', enabled: false, updated_at: NOW }) },
    rotate_webhook_secret: {
      args: { id: hookId },
      expect: (r) => t.match(r, { id: hookId, secret: /^whsec_/, previous_secret_expires_at: '2026-11-21T12:00:00.000Z' }),
    },
    test_webhook: { args: { id: hookId }, expect: (r) => t.match(r, { id: /^msg_/, webhook: hookId, type: 'webhook.test', status: 'pending', attempts: 0, next_attempt_at: NOW }) },
    list_webhook_deliveries: { args: { id: hookId, status: 'pending' }, expect: (r) => t.match(r, { total: 2, page: 1, page_size: 20 }) },
    redeliver_webhook: { args: { id: hookId, delivery: messageId }, expect: (r) => t.match(r, { id: messageId, status: 'pending', attempts: 0 }) },
    replay_webhook: { args: { id: hookId, since: '2026-01-01T00:00:00Z' }, expect: (r) => t.same(r, { queued: 0, limit: 1000, next_since: null }) },
    delete_webhook: { args: { id: doomedHookId }, expect: (r) => t.same(r, { id: doomedHookId, deleted: true }) },
    discover_tools: { args: {}, expect: (r) => t.equal(r.total, app.registry.contracts().length) },
    search_signals: {
      args: { project, query: 'pricing' },
      expect: (r) => t.same(r.results.map((x: { kind: string; id: string }) => [x.kind, x.id]).sort(), [['memory', memoryId], ['opportunity', eventId]]),
    },
    list_opportunities: {
      args: { project, status: 'pending', page_size: 5 },
      expect: (r) => t.match(r, { items: [{ event_id: eventId, status: 'pending' }], page: 1, page_size: 5, total: 1, total_pages: 1 }),
    },
    review_opportunity: {
      args: { project, event_id: eventId, status: 'reviewing', note: 'call them' },
      expect: (r) => t.same(r, { event_id: eventId, evaluation: '', status: 'reviewing', review_note: 'call them', review_updated_at: NOW, version: 2 }),
    },
    submit_opportunity: {
      args: { project, contribution_type: 'community_post', key_information: 'A forum thread asks for us', reason: 'demand', suggested_action: 'reply' },
      expect: (r) => t.match(r, { event_id: /^opp_/, contribution_type: 'community_post', status: 'pending', evaluation: '', received_at: NOW, created: true }),
    },
    get_review_history: {
      args: { project, event_id: eventId },
      expect: (r) => t.match(r, { event_id: eventId, items: [{ changed_at: NOW, before: { status: 'pending' }, after: { status: 'reviewing', review_note: 'call them' } }] }),
    },
    review_opportunities: {
      args: { project, event_ids: [eventId], status: 'contacted' },
      expect: (r) => t.same(r, { items: [{ event_id: eventId, evaluation: '', status: 'contacted', review_note: 'call them', review_updated_at: NOW, version: 3 }] }),
    },
    get_overview: { args: { project }, expect: (r) => t.match(r, { project: { id: project, slug: ws.project.slug, timezone: 'UTC' }, today: '2026-11-20' }) },
    get_daily_ops: {
      args: { project, window: '30d' },
      expect: (r) => {
        t.match(r, { project, timezone: 'UTC', window: '30d' })
        t.equal(r.days.length, 30)
        t.equal(r.days.at(-1).date, '2026-11-20')
      },
    },
    get_daily_event_summary: {
      args: { project, window: '7d', event: 'signup' },
      expect: (r) => t.same(r.days.map((d: { date: string }) => d.date), ['2026-11-14', '2026-11-15', '2026-11-16', '2026-11-17', '2026-11-18', '2026-11-19', '2026-11-20']),
    },
    get_event_stream: { args: { project, limit: 5 }, expect: (r) => t.same(r, { distinct_id: ws.user.email, items: [], next_cursor: null, raw_events_since: null }) },
    list_projects: { args: {}, expect: (r) => t.same(r.items.map((p: { id: string; role: string }) => [p.id, p.role]).sort(), [[project, 'owner'], [secondId, 'owner']].sort()) },
    create_project: { args: { slug: 'third', name: 'Third' }, expect: (r) => t.match(r, { id: /^prj_/, slug: 'third', name: 'Third', role: 'owner', timezone: 'UTC' }) },
    get_project: { args: { project }, expect: (r) => t.match(r, { id: project, slug: ws.project.slug, role: 'owner' }) },
    update_project: { args: { project, goals: ['grow'] }, expect: (r) => t.match(r, { id: project, goals: ['grow'] }) },
    list_memories: { args: { project, tag: 'pricing' }, expect: (r) => t.match(r, { items: [{ id: memoryId }], total: 1, page: 1, page_size: 20, total_pages: 1 }) },
    add_memory: { args: { project, content: 'Launch on a Tuesday', tags: ['launch'], source: 'retro' }, expect: (r) => t.match(r, { id: /^mem_/, project, content: 'Launch on a Tuesday', tags: ['launch'], source: 'retro', created_by: ws.user.email }) },
    update_memory: { args: { id: memoryId, tags: ['pricing', 'weekday'] }, expect: (r) => t.match(r, { id: memoryId, content: 'Pricing page converts best on Tuesdays', tags: ['pricing', 'weekday'] }) },
    forget_memory: { args: { id: doomedId }, expect: (r) => t.same(r, { id: doomedId, deleted: true }) },
  }

  // Every operation's examples, in a workspace of their own: the records they name are made there.
  const world = new World(app, await seedWorkspace(app))
  const operations = allOperations(app)
  /** A tool over REST; an operation that is not a tool through the registry, as the console and the CLI reach it. */
  const perform = (op: ReturnType<typeof allOperations>[number], args: Record<string, unknown>) =>
    op.tool === false
      ? world.invoke(op, args)
      : app.inject({ method: 'POST', url: `/v1/tools/${op.name}`, headers: bearer(world.ws.keys.service), payload: callArgs(op, args, world.ws.project.id) })
        .then((res) => ({ status: res.statusCode, body: res.body }))

  t.test('every invalid example: 400 invalid_arguments naming its field, and nothing done', async (t) => {
    const cases = []
    for (const op of operations) {
      for (const example of op.examples.invalid) cases.push({ op, example, args: await world.realize(op, example.args) })
    }
    t.ok(cases.length >= operations.length, `${cases.length} invalid examples`)
    const before = await snapshot(app)
    for (const { op, example, args } of cases) {
      const res = await perform(op, args)
      t.equal(invalidAnswerProblem(res.status, res.body, example.field), null, `${op.name} "${example.title}"`)
      const error = JSON.parse(res.body).error
      t.ok(typeof error?.message === 'string' && error.message.length > 0, `${op.name} "${example.title}": a message`)
    }
    t.same(changedTables(before, await snapshot(app)), [], 'no table changed')
  })

  t.test('every valid example: {result}', async (t) => {
    for (const op of operations) {
      for (const example of op.examples.valid) {
        const res = await perform(op, await world.realize(op, example.args))
        t.equal(res.status, 200, `${op.name} "${example.title}": ${res.status === 200 ? '200' : res.body.slice(0, 300)}`)
        t.same(Object.keys(JSON.parse(res.body)), ['result'], `${op.name} "${example.title}"`)
      }
    }
  })

  const long = (n: number) => 'x'.repeat(n)
  /** The exact details of each kind of refusal: [tool, what, arguments, details]. */
  const refusals: [string, string, Record<string, unknown>, Detail[]][] = [
    ['create_webhook', 'missing', { project, url: 'https://example.com/h' }, [{ path: 'events', message: 'is required' }]],
    ['create_webhook', 'not in the enum, in a list', { project, url: 'https://example.com/h', events: ['opportunity.deleted'] }, [{ path: 'events[0]', message: 'must be one of "opportunity.submitted", "opportunity.reviewed", "memory.added", "memory.updated", "memory.forgotten", "project.updated", "opportunity.merged", "opportunity.unmerged", "comment.created", "comment.edited", "comment.deleted", "opportunity.tagged", "opportunity.assigned", "tag.renamed", "tag.deleted", "alert.triggered", "alert.resolved", "digest.ready"' }]],
    ['create_webhook', 'an empty list', { project, url: 'https://example.com/h', events: [] }, [{ path: 'events', message: 'must NOT have fewer than 1 items' }]],
    ['create_webhook', 'not https', { project, url: 'http://example.com/h', events: ['memory.added'] }, [{ path: 'url', message: 'http:// must resolve to a private-network address' }]],
    ['create_webhook', 'not a URL', { project, url: 'example.com', events: ['memory.added'] }, [{ path: 'url', message: 'must be an absolute https:// URL' }]],
    ['update_webhook', 'nothing to change', { id: hookId }, [{ path: '', message: 'must have at least one of url, events, description, enabled, format, signatures, rate_limit' }]],
    ['update_webhook', 'wrong type', { id: hookId, enabled: 'no' }, [{ path: 'enabled', message: 'must be boolean' }]],
    ['update_webhook', 'with credentials', { id: hookId, url: 'https://u:p@example.com/' }, [{ path: 'url', message: 'must not contain credentials' }]],
    ['get_webhook', 'breaks a pattern', { id: 'mem_x' }, [{ path: 'id', message: 'must match pattern "^whk_[0-9A-Za-z]{1,40}$"' }]],
    ['list_webhook_deliveries', 'not in the enum', { id: hookId, status: 'sent' }, [{ path: 'status', message: 'must be one of "pending", "succeeded", "failed"' }]],
    ['discover_tools', 'wrong type', { query: 5 }, [{ path: 'query', message: 'must be string' }]],
    ['discover_tools', 'unknown field', { query: 'x', verbose: true }, [{ path: 'verbose', message: 'is not a known field' }]],
    ['discover_tools', 'too short', { query: '' }, [{ path: 'query', message: 'must NOT have fewer than 1 characters' }]],
    ['search_signals', 'not an integer', { project, query: 'x', limit: '5' }, [{ path: 'limit', message: 'must be integer' }]],
    ['search_signals', 'above the maximum', { project, query: 'x', limit: 51 }, [{ path: 'limit', message: 'must be <= 50' }]],
    ['list_opportunities', 'not in the enum', { project, status: 'open' }, [{ path: 'status', message: 'must be one of "all", "pending", "reviewing", "contacted", "adopted", "ignored", "done"' }]],
    ['list_opportunities', 'too long', { project, q: long(201) }, [{ path: 'q', message: 'must NOT have more than 200 characters' }]],
    ['review_opportunity', 'the empty string among the values', { project, event_id: eventId, evaluation: 'great' }, [{ path: 'evaluation', message: 'must be one of "useful", "not_useful", ""' }]],
    ['review_opportunities', 'the same item twice', { project, event_ids: [eventId, eventId], status: 'done' }, [{ path: 'event_ids', message: 'must NOT have duplicate items (items ## 1 and 0 are identical)' }]],
    ['review_opportunities', 'too many items', { project, event_ids: Array.from({ length: 101 }, (_, i) => `opp_x${i}`), status: 'done' }, [{ path: 'event_ids', message: 'must NOT have more than 100 items' }]],
    ['review_opportunities', 'nothing to change', { project, event_ids: [eventId] }, [{ path: '', message: 'must have at least one of evaluation, status, note' }]],
    ['get_daily_ops', 'wrong type of an enum', { project, window: 7 }, [{ path: 'window', message: 'must be string' }, { path: 'window', message: 'must be one of "7d", "30d"' }]],
    ['get_event_stream', 'below the minimum', { project, limit: 0 }, [{ path: 'limit', message: 'must be >= 1' }]],
    ['get_event_stream', 'not a cursor', { project, before: 'not-a-cursor' }, [{ path: 'before', message: 'is not a valid cursor' }]],
    ['list_projects', 'project on a workspace tool', { project }, [{ path: 'project', message: 'is not a known field' }]],
    ['get_overview', 'project too long', { project: long(101) }, [{ path: 'project', message: 'must NOT have more than 100 characters' }]],
    ['update_project', 'not an array', { project, goals: 'grow' }, [{ path: 'goals', message: 'must be array' }]],
    ['update_project', 'nothing to change', { project }, [{ path: '', message: 'must have at least one field' }]],
    ['update_project', 'bad time zone', { project, timezone: 'Mars/Olympus' }, [{ path: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin' }]],
    ['add_memory', 'breaks a pattern, in a list', { project, content: 'x', tags: ['two words'] }, [{ path: 'tags[0]', message: 'must match pattern "^[^\\s,]{1,50}$"' }]],
    ['update_memory', 'nothing to change', { id: memoryId }, [{ path: '', message: 'must have at least one of content, tags, source' }]],
  ]

  t.test('refusals: the exact details of each kind', async (t) => {
    for (const [name, what, args, details] of refusals) {
      const res = await call(name, args)
      t.equal(res.statusCode, 400, `${name} ${what}: ${res.statusCode === 400 ? '400' : res.body}`)
      t.equal(res.json().error.code, 'invalid_arguments', `${name} ${what}`)
      t.same(res.json().error.details, details, `${name} ${what}: details`)
    }
    // None of those calls wrote anything.
    const memories = await call('list_memories', { project })
    t.equal(memories.json().result.total, 2)
    const card = await call('get_project', { project })
    t.same(card.json().result.goals, [])
    const projects = await call('list_projects', {})
    t.equal(projects.json().result.items.length, 2)
    const review = await call('list_opportunities', { project })
    t.match(review.json().result.items, [{ status: 'pending', review_note: '' }])
  })

  t.test('the first failed field is named in the message', async (t) => {
    const res = await call('get_daily_ops', { project, window: '90d' })
    t.equal(res.json().error.message, 'Invalid arguments — window: must be one of "7d", "30d".')
    const two = await call('search_signals', { project, query: 'x', limit: 0, kinds: [] })
    t.same(two.json().error.details, [{ path: 'kinds', message: 'must NOT have fewer than 1 items' }, { path: 'limit', message: 'must be >= 1' }])
    t.match(two.json().error.message, /\(and 1 more\)\.$/)
  })

  t.test('some results, checked in full', async (t) => {
    for (const [name, { args, expect }] of Object.entries(results)) {
      const res = await call(name, args)
      t.equal(res.statusCode, 200, `${name}: ${res.statusCode === 200 ? '200' : res.body}`)
      t.same(Object.keys(res.json()), ['result'], name)
      expect(res.json().result)
    }
    // The forgotten memory is gone; the updated one kept its content.
    const gone = await call('forget_memory', { id: doomedId })
    t.equal(gone.statusCode, 404)
    t.equal(gone.json().error.code, 'not_found')
  })

  t.test('the body is a JSON object of arguments, or nothing', async (t) => {
    const raw = (payload: string | undefined, contentType?: string) =>
      app.inject({
        method: 'POST',
        url: '/v1/tools/discover_tools',
        headers: { ...h, ...(contentType ? { 'content-type': contentType } : {}) },
        ...(payload === undefined ? {} : { payload }),
      })
    for (const [what, payload, type] of [
      ['{}', '{}', 'application/json'],
      ['empty with JSON content type', '', 'application/json'],
      ['whitespace', '  \n', 'application/json'],
      ['no body at all', undefined, undefined],
    ] as const) {
      const res = await raw(payload, type)
      t.equal(res.statusCode, 200, `${what}: ${res.body.slice(0, 200)}`)
      t.equal(res.json().result.total, app.registry.contracts().length, what)
    }
    for (const payload of ['[]', '[{"query":"memory"}]', '"memory"', '42', 'true']) {
      const res = await raw(payload, 'application/json')
      t.equal(res.statusCode, 400, payload)
      t.same(res.json().error, { code: 'invalid_arguments', message: 'Invalid arguments — must be a JSON object of arguments.', details: [{ path: '', message: 'must be a JSON object of arguments' }] }, payload)
    }
    const array = await app.inject({ method: 'POST', url: '/v1/tools/get_project', headers: { ...h, 'x-service-project': project, 'content-type': 'application/json' }, payload: '[]' })
    t.equal(array.statusCode, 400)
    t.equal(array.json().error.code, 'invalid_arguments')
    const broken = await raw('{"query": ', 'application/json')
    t.equal(broken.statusCode, 400)
    t.equal(broken.json().error.code, 'invalid_json')
    const proto = await raw('{"__proto__": {"admin": true}}', 'application/json')
    t.equal(proto.statusCode, 400)
    t.equal(proto.json().error.code, 'invalid_json')
    // Only JSON bodies are accepted: a text body is refused before it reaches the tool.
    const text = await raw('{}', 'text/plain')
    t.equal(text.statusCode, 415)
    t.equal(text.json().error.code, 'unsupported_media_type')
    const form = await raw('query=memory', 'application/x-www-form-urlencoded')
    t.equal(form.statusCode, 415)
    t.equal(form.json().error.code, 'unsupported_media_type')
    const unknown = await app.inject({ method: 'POST', url: '/v1/tools/no_such_tool', headers: h, payload: {} })
    t.equal(unknown.statusCode, 404)
    t.equal(unknown.json().error.code, 'not_found')
  })

  t.test('project selection', async (t) => {
    const projectOf = async (payload: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const res = await call('get_project', payload, headers)
      expectStatus(t, res, 200)
      return res.json().result.id
    }
    t.equal(await projectOf({ project }), project, 'body: id')
    t.equal(await projectOf({ project: ws.project.slug }), project, 'body: slug')
    t.equal(await projectOf({}, { 'x-service-project': project }), project, 'header: id')
    t.equal(await projectOf({}, { 'x-service-project': 'second' }), secondId, 'header: slug')
    t.equal(await projectOf({ project: 'second' }, { 'x-service-project': project }), secondId, 'the body wins over the header')
    t.equal(await projectOf({ project: secondId }, { 'x-service-project': 'prj_doesnotexist' }), secondId, 'an unusable header does not matter when the body names one')
    const noBody = await app.inject({ method: 'POST', url: '/v1/tools/get_project', headers: { ...h, 'x-service-project': 'second' } })
    expectStatus(t, noBody, 200)
    t.equal(noBody.json().result.id, secondId, 'no body, header only')

    // The header selects for every project tool, reads and writes alike.
    const added = await call('add_memory', { content: 'Header-selected memory' }, { 'x-service-project': 'second' })
    expectStatus(t, added, 200)
    t.equal(added.json().result.project, secondId)

    const missing = await call('get_project', {})
    t.equal(missing.statusCode, 400)
    t.equal(missing.json().error.code, 'invalid_arguments')
    t.same(missing.json().error.details, [{ path: 'project', message: 'is required: send `project` (id or slug) or the X-Service-Project header' }])
    t.match(missing.json().error.message, /get_project/)
    const missingWrite = await call('add_memory', { content: 'nowhere' })
    t.equal(missingWrite.statusCode, 400)
    t.same(missingWrite.json().error.details.map((d: Detail) => d.path), ['project'])

    for (const [what, payload, headers] of [
      ['unknown id in body', { project: 'prj_doesnotexist' }, {}],
      ['unknown slug in body', { project: 'no-such-project' }, {}],
      ['unknown slug in header', {}, { 'x-service-project': 'no-such-project' }],
      ['another workspace, id in body', { project: other.project.id }, {}],
      ['another workspace, id in header', {}, { 'x-service-project': other.project.id }],
    ] as const) {
      const res = await call('get_project', payload, headers)
      t.equal(res.statusCode, 404, what)
      t.equal(res.json().error.code, 'not_found', what)
    }
    // Another workspace's project stays invisible to writes too, and nothing lands there.
    const foreign = await call('add_memory', { project: other.project.id, content: 'leak' })
    t.equal(foreign.statusCode, 404)
    const theirs = await app.inject({ method: 'POST', url: '/v1/tools/list_memories', headers: bearer(other.keys.service), payload: { project: other.project.id } })
    t.equal(theirs.json().result.total, 0)

    // Slugs are per workspace: both workspaces have 'demo-project'; each key reaches its own.
    t.equal(ws.project.slug, other.project.slug)
    const mine = await call('get_project', { project: ws.project.slug })
    t.equal(mine.json().result.id, project)
    const theirsBySlug = await app.inject({ method: 'POST', url: '/v1/tools/get_project', headers: bearer(other.keys.service), payload: { project: other.project.slug } })
    t.equal(theirsBySlug.json().result.id, other.project.id)

    const tooLong = await call('get_project', {}, { 'x-service-project': 'x'.repeat(101) })
    t.equal(tooLong.statusCode, 400)
    t.equal(tooLong.json().error.code, 'invalid_arguments')
  })

  t.test('roles decide what a member may call', async (t) => {
    const viewer = await addMember(app, project, 'viewer')
    const vh = { 'x-service-project': project }
    const as = (name: string, payload: Record<string, unknown>) =>
      app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: { ...bearer(viewer.keys.service), ...vh }, payload })
    let res = await as('get_project', {})
    expectStatus(t, res, 200)
    t.equal(res.json().result.role, 'viewer')
    res = await as('list_opportunities', {})
    t.equal(res.statusCode, 403)
    t.equal(res.json().error.code, 'review_access_required')
    res = await as('update_project', { goals: ['x'] })
    t.equal(res.statusCode, 403)
    t.equal(res.json().error.code, 'forbidden')
    res = await as('add_memory', { content: 'x' })
    t.equal(res.statusCode, 403)
    t.equal(res.json().error.code, 'review_access_required')
    // A project the member does not belong to is not found, not forbidden.
    res = await as('get_project', { project: secondId })
    t.equal(res.statusCode, 404)
    // Validation comes before access: bad arguments are 400 even for a viewer.
    res = await as('update_project', { goals: 'x' })
    t.equal(res.statusCode, 400)
  })
})
