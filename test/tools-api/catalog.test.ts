// The tool catalogue over REST: GET /v1/tools is the registry, one contract per tool,
// operations that are not tools stay unreachable, per-workspace enabling and disabling
// (REST and the operator command), and discover_tools' query and schemas.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { addMember, bearer, buildTestApp, expectStatus, seedWorkspace } from '../helpers/app.ts'
import { AdminError, setToolEnabled } from '../../bin/admin.ts'

interface Contract {
  name: string
  title: string
  description: string
  input_schema: Record<string, unknown> & { type: string; properties: Record<string, unknown> }
  output_schema: Record<string, unknown>
  annotations: Record<string, unknown>
}

const NOT_TOOLS = ['ingest_events', 'list_workspace_tools', 'set_tool_enabled', 'create_key', 'revoke_key']
const PROJECT_TOOLS = [
  'search_signals',
  'list_opportunities',
  'review_opportunity',
  'review_opportunities',
  'submit_opportunity',
  'get_review_history',
  'get_overview',
  'get_daily_ops',
  'get_daily_event_summary',
  'get_event_stream',
  'get_project',
  'update_project',
  'list_memories',
  'add_memory',
  'create_webhook',
  'list_webhooks',
]
const WORKSPACE_TOOLS = [
  'discover_tools', 'list_projects', 'create_project', 'update_memory', 'forget_memory',
  'get_webhook', 'update_webhook', 'delete_webhook', 'rotate_webhook_secret', 'test_webhook', 'list_webhook_deliveries', 'redeliver_webhook',
]

/** The status, with the body as the message only when it is not the expected one. */
/** Every key anywhere in a JSON value (schemas nest: properties, items, anyOf …). */
function keysDeep(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keysDeep(v, out)
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.add(k)
      keysDeep(v, out)
    }
  }
  return out
}

t.test('tool catalogue', async (t) => {
  const app: FastifyInstance = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const owner = bearer(ws.keys.service)
  const registryNames = app.registry.contracts().map((c) => c.name)

  const listTools = async (h: Record<string, string> = owner): Promise<string[]> => {
    const res = await app.inject({ method: 'GET', url: '/v1/tools', headers: h })
    expectStatus(t, res, 200)
    return res.json().tools.map((c: Contract) => c.name)
  }
  const discover = async (args: Record<string, unknown> = {}, h: Record<string, string> = owner) => {
    const res = await app.inject({ method: 'POST', url: '/v1/tools/discover_tools', headers: h, payload: args })
    expectStatus(t, res, 200)
    return res.json().result as { tools: { name: string; title: string; description: string; read_only: boolean; input_schema?: unknown }[]; total: number }
  }

  t.test('the registry knows exactly the expected tools', async (t) => {
    t.same([...registryNames].sort(), [...PROJECT_TOOLS, ...WORKSPACE_TOOLS].sort())
    for (const name of NOT_TOOLS) t.notOk(registryNames.includes(name), `${name} is not a tool`)
  })

  t.test('GET /v1/tools lists every tool of the registry, in its order', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/v1/tools', headers: owner })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/)
    const tools: Contract[] = res.json().tools
    t.same(tools.map((c) => c.name), registryNames)
    t.same(Object.keys(res.json()), ['tools'])
    for (const c of tools) {
      t.same(Object.keys(c).sort(), ['annotations', 'description', 'input_schema', 'name', 'output_schema', 'title'], c.name)
      t.same(c, JSON.parse(JSON.stringify(app.registry.contract(c.name))), `${c.name} is the registry's contract`)
      t.type(c.title, 'string')
      t.ok(c.title.length > 0, `${c.name} has a title`)
      t.ok(c.description.length >= 40, `${c.name} has a real description`)
      t.equal(c.input_schema.type, 'object', `${c.name} input_schema is an object schema`)
      t.type(c.input_schema.properties, 'object', `${c.name} input_schema has properties`)
      t.equal(c.input_schema.additionalProperties, false, `${c.name} rejects unknown arguments`)
      t.type(c.output_schema, 'object', `${c.name} has an output_schema`)
      const keys = new Set([...keysDeep(c.input_schema), ...keysDeep(c.output_schema)])
      t.notOk(keys.has('$schema'), `${c.name} schemas carry no $schema`)
      t.notOk(keys.has('$id'), `${c.name} schemas carry no $id`)
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint']) t.type(c.annotations[hint], 'boolean', `${c.name} ${hint}`)
      t.equal(c.annotations.title, c.title)
      const isProjectTool = PROJECT_TOOLS.includes(c.name)
      t.equal('project' in c.input_schema.properties, isProjectTool, `${c.name}: project property iff project tool`)
      if (isProjectTool) {
        t.match(c.input_schema.properties.project, { type: 'string', minLength: 1, maxLength: 100 })
        t.notOk(((c.input_schema.required as string[] | undefined) ?? []).includes('project'), 'project may come from the header instead')
      }
    }
  })

  t.test('annotations tell readers from writers', async (t) => {
    const tools: Contract[] = (await app.inject({ method: 'GET', url: '/v1/tools', headers: owner })).json().tools
    const by = (name: string) => tools.find((c) => c.name === name)!.annotations
    t.match(by('get_daily_ops'), { readOnlyHint: true, destructiveHint: false, idempotentHint: true })
    t.match(by('forget_memory'), { readOnlyHint: false, destructiveHint: true })
    t.match(by('add_memory'), { readOnlyHint: false, destructiveHint: false, idempotentHint: false })
    t.match(by('review_opportunity'), { readOnlyHint: false, destructiveHint: false, idempotentHint: true })
    t.match(by('review_opportunities'), { readOnlyHint: false, destructiveHint: false, idempotentHint: true })
  })

  t.test('GET /v1/tools/:name is that contract; unknown names are 404', async (t) => {
    for (const name of registryNames) {
      const res = await app.inject({ method: 'GET', url: `/v1/tools/${name}`, headers: owner })
      t.equal(res.statusCode, 200, name)
      t.same(res.json(), JSON.parse(JSON.stringify(app.registry.contract(name))), name)
    }
    for (const name of ['no_such_tool', 'discover']) {
      const res = await app.inject({ method: 'GET', url: `/v1/tools/${name}`, headers: owner })
      t.equal(res.statusCode, 404, name)
      t.equal(res.json().error.code, 'not_found')
      t.match(res.json().error.message, name)
    }
    const bad = await app.inject({ method: 'GET', url: '/v1/tools/Not-A-Name', headers: owner })
    t.equal(bad.statusCode, 400)
    t.equal(bad.json().error.code, 'invalid_arguments')
  })

  t.test('operations that are not tools are absent and unreachable as tools', async (t) => {
    const listed = await listTools()
    for (const name of NOT_TOOLS) {
      t.notOk(listed.includes(name), `${name} not listed`)
      const get = await app.inject({ method: 'GET', url: `/v1/tools/${name}`, headers: owner })
      t.equal(get.statusCode, 404, `GET ${name}`)
      t.equal(get.json().error.code, 'not_found')
      const post = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: owner, payload: { project: ws.project.id, name: 'discover_tools', enabled: false, events: [{ event: 'signup', distinct_id: 'x' }] } })
      t.equal(post.statusCode, 404, `POST ${name}`)
      t.equal(post.json().error.code, 'not_found')
      t.notOk((await discover()).tools.some((x) => x.name === name), `${name} not discovered`)
    }
    // Nothing was done by those calls: every tool is still enabled and no event was recorded.
    t.same(await listTools(), registryNames)
    const ops = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/daily-ops`, headers: bearer(ws.keys.mcp) })
    t.equal(ops.json().days.reduce((n: number, d: { signup_events: number }) => n + d.signup_events, 0), 0)
  })

  t.test('the catalogue needs a service key', async (t) => {
    const none = await app.inject({ method: 'GET', url: '/v1/tools' })
    t.equal(none.statusCode, 401)
    t.equal(none.json().error.code, 'unauthorized')
    const mcp = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(ws.keys.mcp) })
    t.equal(mcp.statusCode, 401)
    const call = await app.inject({ method: 'POST', url: '/v1/tools/discover_tools', headers: bearer(ws.keys.ingest), payload: {} })
    t.equal(call.statusCode, 401)
  })

  t.test('a workspace owner disables and re-enables a tool', async (t) => {
    const put = (name: string, body: unknown, h: Record<string, string> = owner) => app.inject({ method: 'PUT', url: `/v1/workspace/tools/${name}`, headers: h, payload: body as object })

    let res = await put('search_signals', { enabled: false })
    expectStatus(t, res, 200)
    t.same(res.json().tools.map((x: { name: string }) => x.name), registryNames)
    t.same(res.json().tools.find((x: { name: string }) => x.name === 'search_signals'), { name: 'search_signals', title: 'Search signals', enabled: false })
    t.same(res.json().tools.filter((x: { enabled: boolean }) => !x.enabled).map((x: { name: string }) => x.name), ['search_signals'])

    t.same(await listTools(), registryNames.filter((n) => n !== 'search_signals'))
    const get = await app.inject({ method: 'GET', url: '/v1/tools/search_signals', headers: owner })
    t.equal(get.statusCode, 404)
    t.equal(get.json().error.code, 'not_found')
    const call = await app.inject({ method: 'POST', url: '/v1/tools/search_signals', headers: owner, payload: { project: ws.project.id, query: 'x' } })
    t.equal(call.statusCode, 404)
    t.equal(call.json().error.code, 'not_found')
    const found = await discover()
    t.same(found.tools.map((x) => x.name), registryNames.filter((n) => n !== 'search_signals'))
    t.equal(found.total, registryNames.length - 1)

    // Disabling twice keeps one entry; the listing of settings says so.
    res = await put('search_signals', { enabled: false })
    t.same(res.json().tools.filter((x: { enabled: boolean }) => !x.enabled).map((x: { name: string }) => x.name), ['search_signals'])
    const settings = await app.inject({ method: 'GET', url: '/v1/workspace/tools', headers: owner })
    t.equal(settings.statusCode, 200)
    t.same(settings.json(), { tools: app.registry.contracts().map((c) => ({ name: c.name, title: c.title, enabled: c.name !== 'search_signals' })) })

    // Another workspace is unaffected.
    t.same(await listTools(bearer(other.keys.service)), registryNames)
    const otherCall = await app.inject({ method: 'POST', url: '/v1/tools/search_signals', headers: bearer(other.keys.service), payload: { project: other.project.id, query: 'x' } })
    expectStatus(t, otherCall, 200)

    // The REST route of a disabled tool's operation still works: disabling is about tools.
    const memories = await app.inject({ method: 'PUT', url: '/v1/workspace/tools/list_memories', headers: owner, payload: { enabled: false } })
    t.equal(memories.statusCode, 200)
    const rest = await app.inject({ method: 'GET', url: `/v1/projects/${ws.project.id}/memories`, headers: owner })
    t.equal(rest.statusCode, 200)
    t.same(await listTools(), registryNames.filter((n) => n !== 'search_signals' && n !== 'list_memories'))

    res = await put('search_signals', { enabled: true })
    t.equal(res.statusCode, 200)
    res = await put('list_memories', { enabled: true })
    t.same(res.json().tools.every((x: { enabled: boolean }) => x.enabled), true)
    t.same(await listTools(), registryNames)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools/search_signals', headers: owner })).statusCode, 200)
    const again = await app.inject({ method: 'POST', url: '/v1/tools/search_signals', headers: owner, payload: { project: ws.project.id, query: 'x' } })
    expectStatus(t, again, 200)
    t.same(again.json(), { result: { query: 'x', searched: ['opportunity', 'memory'], results: [] } })
    t.equal((await discover()).total, registryNames.length)
    // Enabling an enabled tool is a no-op.
    res = await put('search_signals', { enabled: true })
    t.equal(res.statusCode, 200)
    t.same(await listTools(), registryNames)
  })

  t.test('only a workspace owner changes tool settings, with a valid body and a real tool', async (t) => {
    const put = (name: string, body: unknown, h: Record<string, string> = owner) => app.inject({ method: 'PUT', url: `/v1/workspace/tools/${name}`, headers: h, payload: body as object })
    // A project owner who is a plain workspace member is still not a workspace owner.
    for (const role of ['viewer', 'reviewer', 'owner'] as const) {
      const member = await addMember(app, ws.project.id, role)
      const res = await put('search_signals', { enabled: false }, bearer(member.keys.service))
      t.equal(res.statusCode, 403, role)
      t.equal(res.json().error.code, 'forbidden')
      // Members may read the settings.
      const list = await app.inject({ method: 'GET', url: '/v1/workspace/tools', headers: bearer(member.keys.service) })
      t.equal(list.statusCode, 200)
    }
    t.same(await listTools(), registryNames, 'nothing changed')

    let res = await put('no_such_tool', { enabled: false })
    t.equal(res.statusCode, 404)
    t.equal(res.json().error.code, 'not_found')
    for (const name of NOT_TOOLS) {
      res = await put(name, { enabled: false })
      t.equal(res.statusCode, 404, name)
    }
    res = await put('search_signals', { enabled: 'no' })
    t.equal(res.statusCode, 400)
    t.equal(res.json().error.code, 'invalid_arguments')
    t.same(res.json().error.details, [{ path: 'enabled', message: 'must be boolean' }])
    res = await put('search_signals', {})
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details, [{ path: 'enabled', message: 'is required' }])
    res = await put('search_signals', { enabled: false, extra: 1 })
    t.equal(res.statusCode, 400)
    t.same(res.json().error.details, [{ path: 'extra', message: 'is not a known field' }])
    res = await put('search_signals', { enabled: false }, {})
    t.equal(res.statusCode, 401)
    t.same(await listTools(), registryNames, 'nothing changed')
  })

  t.test('the operator command disables and enables a tool the same way', async (t) => {
    const out = await setToolEnabled(app, { workspace: ws.workspace.id, tool: 'get_overview', enabled: false })
    t.same(out, { workspace: ws.workspace.id, tool: 'get_overview', enabled: false, disabled_tools: ['get_overview'] })
    t.same(await listTools(), registryNames.filter((n) => n !== 'get_overview'))
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools/get_overview', headers: owner })).statusCode, 404)
    const call = await app.inject({ method: 'POST', url: '/v1/tools/get_overview', headers: owner, payload: { project: ws.project.id } })
    t.equal(call.statusCode, 404)
    t.notOk((await discover()).tools.some((x) => x.name === 'get_overview'))
    const settings = await app.inject({ method: 'GET', url: '/v1/workspace/tools', headers: owner })
    t.same(settings.json().tools.filter((x: { enabled: boolean }) => !x.enabled).map((x: { name: string }) => x.name), ['get_overview'])
    t.same(await listTools(bearer(other.keys.service)), registryNames)

    const back = await setToolEnabled(app, { workspace: ws.workspace.id, tool: 'get_overview', enabled: true })
    t.same(back, { workspace: ws.workspace.id, tool: 'get_overview', enabled: true, disabled_tools: [] })
    t.same(await listTools(), registryNames)

    await t.rejects(setToolEnabled(app, { workspace: ws.workspace.id, tool: 'no_such_tool', enabled: false }), AdminError)
    await t.rejects(setToolEnabled(app, { workspace: 'wsp_doesnotexist', tool: 'get_overview', enabled: false }), AdminError)
    t.same(await listTools(), registryNames)
  })

  t.test('the operator command refuses operations that are not tools, like the REST route', async (t) => {
    await t.rejects(setToolEnabled(app, { workspace: other.workspace.id, tool: 'ingest_events', enabled: false }), AdminError)
  })

  t.test('discover_tools: the enabled catalogue, filtered by query words', async (t) => {
    let found = await discover()
    t.same(found.tools.map((x) => x.name), registryNames)
    t.equal(found.total, registryNames.length)
    for (const x of found.tools) {
      const c = app.registry.contract(x.name)!
      t.same(x, { name: c.name, title: c.title, description: c.description, read_only: c.annotations.readOnlyHint }, `${x.name} without schema`)
    }

    // Singular and plural match alike: 'memory' finds list_memories too, and search_signals
    // (which searches memories); nothing else mentions memories.
    const memoryTools = ['search_signals', 'list_memories', 'add_memory', 'update_memory', 'forget_memory']
    found = await discover({ query: 'memory' })
    t.same(found.tools.map((x) => x.name), memoryTools)
    t.equal(found.total, 5)
    found = await discover({ query: 'MEMORIES' })
    t.same(found.tools.map((x) => x.name), memoryTools)
    // Every word must match, in the name (with or without underscores) or the description.
    found = await discover({ query: 'forget memory' })
    t.same(found.tools.map((x) => x.name), ['forget_memory'])
    found = await discover({ query: 'forget_memory' })
    t.same(found.tools.map((x) => x.name), ['forget_memory'])
    found = await discover({ query: 'daily ops' })
    t.same(found.tools.map((x) => x.name), ['get_daily_ops'])
    found = await discover({ query: 'review history' })
    t.same(found.tools.map((x) => x.name), ['review_opportunities', 'get_review_history'], 'the bulk review says it writes the history')
    found = await discover({ query: 'opportunity review' })
    t.same(found.tools.map((x) => x.name), ['search_signals', 'list_opportunities', 'review_opportunity', 'review_opportunities', 'submit_opportunity', 'get_review_history', 'get_overview'])
    found = await discover({ query: 'zzz' })
    t.same(found, { tools: [], total: 0 })
    found = await discover({ query: 'memory zzz' })
    t.same(found, { tools: [], total: 0 })

    found = await discover({ query: 'memory', include_schemas: true })
    t.same(found.tools.map((x) => x.name), memoryTools)
    for (const x of found.tools) t.same(x.input_schema, JSON.parse(JSON.stringify(app.registry.contract(x.name)!.input_schema)), x.name)
    found = await discover({ include_schemas: false })
    t.notOk(found.tools.some((x) => 'input_schema' in x))

    // A disabled tool is not discovered even when the query names it.
    await setToolEnabled(app, { workspace: ws.workspace.id, tool: 'add_memory', enabled: false })
    found = await discover({ query: 'memory' })
    t.same(found.tools.map((x) => x.name), memoryTools.filter((n) => n !== 'add_memory'))
    found = await discover({ query: 'add_memory' })
    t.same(found, { tools: [], total: 0 })
    await setToolEnabled(app, { workspace: ws.workspace.id, tool: 'add_memory', enabled: true })
    t.same((await discover({ query: 'add_memory' })).tools.map((x) => x.name), ['add_memory'])
  })
})
