// POST /v1/tools/:name: every tool with good arguments answers {result}; wrong types,
// unknown fields and out-of-range values answer 400 invalid_arguments with per-field
// details; the body must be a JSON object (or nothing); and project selection by body,
// header, id and slug, with the body winning and other workspaces invisible.
import t from 'tap'
import { addMember, bearer, buildTestApp, expectStatus, fixedClock, seedWorkspace } from '../helpers/app.ts'

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

  /** Good arguments per tool, and what the result must contain. */
  const good: Record<string, { args: Record<string, unknown>; expect: (r: Record<string, any>) => void }> = {
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
      expect: (r) => t.same(r, { event_id: eventId, evaluation: '', status: 'reviewing', review_note: 'call them', review_updated_at: NOW }),
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
      expect: (r) => t.same(r, { items: [{ event_id: eventId, evaluation: '', status: 'contacted', review_note: 'call them', review_updated_at: NOW }] }),
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
    get_event_stream: { args: { project, limit: 5 }, expect: (r) => t.same(r, { distinct_id: ws.user.email, items: [], next_cursor: null }) },
    list_projects: { args: {}, expect: (r) => t.same(r.items.map((p: { id: string; role: string }) => [p.id, p.role]).sort(), [[project, 'owner'], [secondId, 'owner']].sort()) },
    create_project: { args: { slug: 'third', name: 'Third' }, expect: (r) => t.match(r, { id: /^prj_/, slug: 'third', name: 'Third', role: 'owner', timezone: 'UTC' }) },
    get_project: { args: { project }, expect: (r) => t.match(r, { id: project, slug: ws.project.slug, role: 'owner' }) },
    update_project: { args: { project, goals: ['grow'] }, expect: (r) => t.match(r, { id: project, goals: ['grow'] }) },
    list_memories: { args: { project, tag: 'pricing' }, expect: (r) => t.match(r, { items: [{ id: memoryId }], total: 1, page: 1, page_size: 20, total_pages: 1 }) },
    add_memory: { args: { project, content: 'Launch on a Tuesday', tags: ['launch'], source: 'retro' }, expect: (r) => t.match(r, { id: /^mem_/, project, content: 'Launch on a Tuesday', tags: ['launch'], source: 'retro', created_by: ws.user.email }) },
    update_memory: { args: { id: memoryId, tags: ['pricing', 'weekday'] }, expect: (r) => t.match(r, { id: memoryId, content: 'Pricing page converts best on Tuesdays', tags: ['pricing', 'weekday'] }) },
    forget_memory: { args: { id: doomedId }, expect: (r) => t.same(r, { id: doomedId, deleted: true }) },
  }

  const long = (n: number) => 'x'.repeat(n)
  /** Bad arguments per tool: [what, arguments, the exact details]. */
  const bad: Record<string, [string, Record<string, unknown>, Detail[]][]> = {
    create_webhook: [
      ['missing', { project, url: 'https://example.com/h' }, [{ path: 'events', message: 'is required' }]],
      ['bad event', { project, url: 'https://example.com/h', events: ['opportunity.deleted'] }, [{ path: 'events[0]', message: 'must be one of "opportunity.submitted", "opportunity.reviewed", "memory.added", "memory.updated", "memory.forgotten", "project.updated"' }]],
      ['no events', { project, url: 'https://example.com/h', events: [] }, [{ path: 'events', message: 'must NOT have fewer than 1 items' }]],
      ['not https', { project, url: 'http://example.com/h', events: ['memory.added'] }, [{ path: 'url', message: 'must use https://' }]],
      ['not a URL', { project, url: 'example.com', events: ['memory.added'] }, [{ path: 'url', message: 'must be an absolute https:// URL' }]],
    ],
    list_webhooks: [['unknown field', { project, all: true }, [{ path: 'all', message: 'is not a known field' }]]],
    get_webhook: [['bad id', { id: 'mem_x' }, [{ path: 'id', message: 'must match pattern "^whk_[0-9A-Za-z]{1,40}$"' }]]],
    update_webhook: [
      ['nothing to change', { id: hookId }, [{ path: '', message: 'must have at least one of url, events, description, enabled' }]],
      ['wrong type', { id: hookId, enabled: 'no' }, [{ path: 'enabled', message: 'must be boolean' }]],
      ['with credentials', { id: hookId, url: 'https://u:p@example.com/' }, [{ path: 'url', message: 'must not contain credentials' }]],
    ],
    delete_webhook: [['missing', {}, [{ path: 'id', message: 'is required' }]]],
    rotate_webhook_secret: [['unknown field', { id: hookId, secret: 'x' }, [{ path: 'secret', message: 'is not a known field' }]]],
    test_webhook: [['unknown field', { id: hookId, type: 'x' }, [{ path: 'type', message: 'is not a known field' }]]],
    list_webhook_deliveries: [['bad enum', { id: hookId, status: 'sent' }, [{ path: 'status', message: 'must be one of "pending", "succeeded", "failed"' }]]],
    redeliver_webhook: [['missing', { id: hookId }, [{ path: 'delivery', message: 'is required' }]]],

    discover_tools: [
      ['wrong type', { query: 5 }, [{ path: 'query', message: 'must be string' }]],
      ['unknown field', { query: 'x', verbose: true }, [{ path: 'verbose', message: 'is not a known field' }]],
      ['out of range', { query: '' }, [{ path: 'query', message: 'must NOT have fewer than 1 characters' }]],
    ],
    search_signals: [
      ['wrong type', { project, query: 'x', limit: '5' }, [{ path: 'limit', message: 'must be integer' }]],
      ['unknown field', { project, query: 'x', sort: 'rank' }, [{ path: 'sort', message: 'is not a known field' }]],
      ['out of range', { project, query: 'x', limit: 51 }, [{ path: 'limit', message: 'must be <= 50' }]],
      ['missing', { project }, [{ path: 'query', message: 'is required' }]],
      ['bad kind', { project, query: 'x', kinds: ['event'] }, [{ path: 'kinds[0]', message: 'must be one of "opportunity", "memory"' }]],
    ],
    list_opportunities: [
      ['wrong type', { project, page: '1' }, [{ path: 'page', message: 'must be integer' }]],
      ['unknown field', { project, sort: 'new' }, [{ path: 'sort', message: 'is not a known field' }]],
      ['out of range', { project, page_size: 101 }, [{ path: 'page_size', message: 'must be <= 100' }]],
      ['bad enum', { project, status: 'open' }, [{ path: 'status', message: 'must be one of "all", "pending", "reviewing", "contacted", "adopted", "ignored", "done"' }]],
      ['empty search', { project, q: '' }, [{ path: 'q', message: 'must NOT have fewer than 1 characters' }]],
      ['long search', { project, q: long(201) }, [{ path: 'q', message: 'must NOT have more than 200 characters' }]],
    ],
    review_opportunity: [
      ['wrong type', { project, event_id: eventId, note: 5 }, [{ path: 'note', message: 'must be string' }]],
      ['unknown field', { project, event_id: eventId, status: 'done', priority: 1 }, [{ path: 'priority', message: 'is not a known field' }]],
      ['out of range', { project, event_id: eventId, note: long(2001) }, [{ path: 'note', message: 'must NOT have more than 2000 characters' }]],
      ['bad enum', { project, event_id: eventId, evaluation: 'great' }, [{ path: 'evaluation', message: 'must be one of "useful", "not_useful", ""' }]],
    ],
    review_opportunities: [
      ['wrong type', { project, event_ids: eventId, status: 'done' }, [{ path: 'event_ids', message: 'must be array' }]],
      ['unknown field', { project, event_ids: [eventId], status: 'done', priority: 1 }, [{ path: 'priority', message: 'is not a known field' }]],
      ['empty list', { project, event_ids: [], status: 'done' }, [{ path: 'event_ids', message: 'must NOT have fewer than 1 items' }]],
      ['too many', { project, event_ids: Array.from({ length: 101 }, (_, i) => `opp_x${i}`), status: 'done' }, [{ path: 'event_ids', message: 'must NOT have more than 100 items' }]],
      ['duplicates', { project, event_ids: [eventId, eventId], status: 'done' }, [{ path: 'event_ids', message: 'must NOT have duplicate items (items ## 1 and 0 are identical)' }]],
      ['no review field', { project, event_ids: [eventId] }, [{ path: '', message: 'must have at least one of evaluation, status, note' }]],
      ['bad id', { project, event_ids: ['x'], status: 'done' }, [{ path: 'event_ids[0]', message: 'must match pattern "^opp_[0-9A-Za-z]{1,40}$"' }]],
      ['bad enum', { project, event_ids: [eventId], status: 'open' }, [{ path: 'status', message: 'must be one of "pending", "reviewing", "contacted", "adopted", "ignored", "done"' }]],
    ],
    submit_opportunity: [
      ['wrong type', { project, contribution_type: 'x', key_information: 5, reason: 'r', suggested_action: 's' }, [{ path: 'key_information', message: 'must be string' }]],
      ['unknown field', { project, contribution_type: 'x', key_information: 'k', reason: 'r', suggested_action: 's', score: 3 }, [{ path: 'score', message: 'is not a known field' }]],
      ['out of range', { project, contribution_type: 'x', key_information: long(10001), reason: 'r', suggested_action: 's' }, [{ path: 'key_information', message: 'must NOT have more than 10000 characters' }]],
      ['missing', { project, contribution_type: 'x', key_information: 'k', reason: 'r' }, [{ path: 'suggested_action', message: 'is required' }]],
    ],
    get_review_history: [
      ['wrong type', { project, event_id: 5 }, [{ path: 'event_id', message: 'must be string' }]],
      ['unknown field', { project, event_id: eventId, limit: 5 }, [{ path: 'limit', message: 'is not a known field' }]],
      ['out of range', { project, event_id: 'opp_' }, [{ path: 'event_id', message: 'must match pattern "^opp_[0-9A-Za-z]{1,40}$"' }]],
    ],
    get_overview: [
      ['wrong type', { project: 5 }, [{ path: 'project', message: 'must be string' }]],
      ['unknown field', { project, window: '7d' }, [{ path: 'window', message: 'is not a known field' }]],
      ['out of range', { project: long(101) }, [{ path: 'project', message: 'must NOT have more than 100 characters' }]],
    ],
    get_daily_ops: [
      ['wrong type', { project, window: 7 }, [{ path: 'window', message: 'must be string' }, { path: 'window', message: 'must be one of "7d", "30d"' }]],
      ['unknown field', { project, window: '7d', day: '2026-11-20' }, [{ path: 'day', message: 'is not a known field' }]],
      ['out of range', { project, window: '90d' }, [{ path: 'window', message: 'must be one of "7d", "30d"' }]],
    ],
    get_daily_event_summary: [
      ['wrong type', { project, event: 1 }, [{ path: 'event', message: 'must be string' }]],
      ['unknown field', { project, events: ['signup'] }, [{ path: 'events', message: 'is not a known field' }]],
      ['out of range', { project, event: '' }, [{ path: 'event', message: 'must NOT have fewer than 1 characters' }]],
    ],
    get_event_stream: [
      ['wrong type', { project, limit: '5' }, [{ path: 'limit', message: 'must be integer' }]],
      ['unknown field', { project, after: 'x' }, [{ path: 'after', message: 'is not a known field' }]],
      ['out of range', { project, limit: 0 }, [{ path: 'limit', message: 'must be >= 1' }]],
      ['bad cursor', { project, before: 'not-a-cursor' }, [{ path: 'before', message: 'is not a valid cursor' }]],
    ],
    list_projects: [
      ['unknown field', { all: true }, [{ path: 'all', message: 'is not a known field' }]],
      // A workspace tool takes no project: sending one is an unknown field, not silently ignored.
      ['project on a workspace tool', { project }, [{ path: 'project', message: 'is not a known field' }]],
    ],
    create_project: [
      ['wrong type', { slug: 5, name: 'Five' }, [{ path: 'slug', message: 'must be string' }]],
      ['unknown field', { slug: 'five', name: 'Five', owner: 'me' }, [{ path: 'owner', message: 'is not a known field' }]],
      ['out of range', { slug: 'five', name: long(201) }, [{ path: 'name', message: 'must NOT have more than 200 characters' }]],
      ['missing', { slug: 'five' }, [{ path: 'name', message: 'is required' }]],
    ],
    get_project: [
      ['wrong type', { project: ['a'] }, [{ path: 'project', message: 'must be string' }]],
      ['unknown field', { project, fields: 'all' }, [{ path: 'fields', message: 'is not a known field' }]],
      ['out of range', { project: '' }, [{ path: 'project', message: 'must NOT have fewer than 1 characters' }]],
    ],
    update_project: [
      ['wrong type', { project, goals: 'grow' }, [{ path: 'goals', message: 'must be array' }]],
      ['unknown field', { project, id: 'prj_x' }, [{ path: 'id', message: 'is not a known field' }]],
      ['out of range', { project, goals: Array.from({ length: 51 }, (_, i) => `goal ${i}`) }, [{ path: 'goals', message: 'must NOT have more than 50 items' }]],
      ['nothing to change', { project }, [{ path: '', message: 'must have at least one field' }]],
      ['bad time zone', { project, timezone: 'Mars/Olympus' }, [{ path: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin' }]],
    ],
    list_memories: [
      ['wrong type', { project, tag: 1 }, [{ path: 'tag', message: 'must be string' }]],
      ['unknown field', { project, tags: ['a'] }, [{ path: 'tags', message: 'is not a known field' }]],
      ['out of range', { project, page: 0 }, [{ path: 'page', message: 'must be >= 1' }]],
    ],
    add_memory: [
      ['wrong type', { project, content: 'x', tags: 'a' }, [{ path: 'tags', message: 'must be array' }]],
      ['unknown field', { project, content: 'x', pinned: true }, [{ path: 'pinned', message: 'is not a known field' }]],
      ['out of range', { project, content: long(8001) }, [{ path: 'content', message: 'must NOT have more than 8000 characters' }]],
      ['bad tag', { project, content: 'x', tags: ['two words'] }, [{ path: 'tags[0]', message: 'must match pattern "^[^\\s,]{1,50}$"' }]],
    ],
    update_memory: [
      ['wrong type', { id: memoryId, content: 5 }, [{ path: 'content', message: 'must be string' }]],
      ['unknown field', { id: memoryId, project }, [{ path: 'project', message: 'is not a known field' }]],
      ['out of range', { id: memoryId, source: long(201) }, [{ path: 'source', message: 'must NOT have more than 200 characters' }]],
      ['nothing to change', { id: memoryId }, [{ path: '', message: 'must have at least one of content, tags, source' }]],
    ],
    forget_memory: [
      ['wrong type', { id: 5 }, [{ path: 'id', message: 'must be string' }]],
      ['unknown field', { id: memoryId, reason: 'old' }, [{ path: 'reason', message: 'is not a known field' }]],
      ['out of range', { id: 'mem_' + long(41) }, [{ path: 'id', message: 'must match pattern "^mem_[0-9A-Za-z]{1,40}$"' }]],
      ['missing', {}, [{ path: 'id', message: 'is required' }]],
    ],
  }

  t.test('the tables cover every tool', async (t) => {
    const names = app.registry.names()
    t.same(Object.keys(good).sort(), [...names].sort())
    t.same(Object.keys(bad).sort(), [...names].sort())
  })

  t.test('bad arguments: 400 invalid_arguments with exact details, nothing done', async (t) => {
    for (const [name, cases] of Object.entries(bad)) {
      for (const [what, args, details] of cases) {
        const res = await call(name, args)
        t.equal(res.statusCode, 400, `${name} ${what}: ${res.statusCode === 400 ? '400' : res.body}`)
        const error = res.json().error
        t.equal(error.code, 'invalid_arguments', `${name} ${what}`)
        t.same(error.details, details, `${name} ${what}: details`)
        t.type(error.message, 'string')
        t.ok(error.message.length > 0)
      }
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

  t.test('good arguments: {result} from every tool', async (t) => {
    for (const [name, { args, expect }] of Object.entries(good)) {
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
