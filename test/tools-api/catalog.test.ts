// The tool catalogue over REST: GET /v1/tools is the registry, one contract per tool,
// operations that are not tools stay unreachable, per-workspace enabling and disabling
// (REST and the operator command), and discover_tools' query and schemas. Which operations
// there are, which are tools and which take a project, is read from the registry: a new
// operation is checked here with no list to edit.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { addMember, bearer, buildTestApp, expectStatus, seedWorkspace } from '../helpers/app.ts'
import { allOperations, callArgs } from '../helpers/examples.ts'
import { snapshot, changedTables } from '../fuzz/state.ts'
import { AdminError, setToolEnabled } from '../../bin/admin.ts'
import { strictAjv } from '../../core/validation.ts'

interface Contract {
  name: string
  title: string
  description: string
  input_schema: Record<string, unknown> & { type: string; properties: Record<string, unknown> }
  output_schema: Record<string, unknown>
  annotations: Record<string, unknown>
  ui?: unknown
}

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
  const operations = allOperations(app)
  const notTools = operations.filter((op) => op.tool === false)

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

  t.test('the tools are the operations not marked `tool: false`, in the order they were added', async (t) => {
    t.same(registryNames, operations.filter((op) => op.tool !== false).map((op) => op.name))
    t.same(app.registry.names(), registryNames)
    t.ok(registryNames.length > 0, 'there are tools')
    t.ok(notTools.length > 0, 'and operations that are not tools')
    for (const op of notTools) t.notOk(registryNames.includes(op.name), `${op.name} is not a tool`)
    t.equal(new Set(operations.map((op) => op.name)).size, operations.length, 'no name twice')
    for (const op of operations) {
      t.match(op.name, /^[a-z][a-z0-9]*(_[a-z0-9]+)+$/, `${op.name}: a snake_case name of two words or more`)
      t.ok(['project', 'workspace'].includes(op.scope), `${op.name}: a scope`)
      t.strictSame(app.registry.operation(op.name), op, `${op.name}: found by its name`)
    }
  })

  t.test('every operation carries examples: valid calls its input schema accepts, invalid ones with the field to name', async (t) => {
    for (const op of operations) {
      const contract = app.registry.contract(op.name)!
      const check = strictAjv.compile(contract.input_schema)
      const { valid, invalid } = op.examples
      t.ok(valid.length >= 1, `${op.name}: at least one valid call`)
      for (const example of [...valid, ...invalid]) {
        t.ok(example.title.trim().length > 0, `${op.name}: every example has a title`)
        t.notOk(op.scope === 'project' && 'project' in example.args, `${op.name} "${example.title}": a project operation's example leaves \`project\` out`)
      }
      t.equal(new Set([...valid, ...invalid].map((e) => e.title)).size, valid.length + invalid.length, `${op.name}: every title once`)
      for (const example of valid) {
        const args = callArgs(op, example.args, 'my-project')
        t.ok(check(structuredClone(args)), `${op.name} "${example.title}": valid by the schema ${JSON.stringify(check.errors ?? [])}`)
      }
      for (const example of invalid) t.type(example.field, 'string', `${op.name} "${example.title}": names a field`)
    }
  })

  t.test('GET /v1/tools lists every tool of the registry, in its order', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/v1/tools', headers: owner })
    t.equal(res.statusCode, 200)
    t.match(res.headers['content-type'], /^application\/json/)
    const tools: Contract[] = res.json().tools
    t.same(tools.map((c) => c.name), registryNames)
    t.same(Object.keys(res.json()), ['tools'])
    for (const c of tools) {
      // `ui` only on the tools with an MCP App view (test/mcp/apps.test.ts).
      t.same(Object.keys(c).sort(), ['annotations', 'description', 'input_schema', 'name', 'output_schema', 'title', 'toolset', ...(c.ui ? ['ui'] : [])], c.name)
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
      // A reader's only hint is readOnlyHint (the others mean something only for a writer).
      const hints = c.annotations.readOnlyHint ? ['readOnlyHint'] : ['readOnlyHint', 'destructiveHint', 'idempotentHint']
      t.same(Object.keys(c.annotations).filter((k) => k !== 'openWorldHint').sort(), hints.sort(), `${c.name}: its hints`)
      for (const hint of hints) t.type(c.annotations[hint], 'boolean', `${c.name} ${hint}`)
      const isProjectTool = app.registry.operation(c.name).scope === 'project'
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
    t.same(by('get_daily_ops'), { readOnlyHint: true })
    t.match(by('forget_memory'), { readOnlyHint: false, destructiveHint: true })
    t.match(by('add_memory'), { readOnlyHint: false, destructiveHint: false, idempotentHint: false })
    t.match(by('review_opportunity'), { readOnlyHint: false, destructiveHint: false, idempotentHint: true })
    t.match(by('review_opportunities'), { readOnlyHint: false, destructiveHint: false, idempotentHint: true })
    // Of every operation: what only reads neither destroys nor differs when repeated.
    for (const op of operations) {
      if (op.annotations.readOnlyHint) t.match(op.annotations, { destructiveHint: false, idempotentHint: true }, `${op.name}: a reader`)
    }
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
    const before = await snapshot(app)
    for (const op of notTools) {
      const name = op.name
      t.notOk(listed.includes(name), `${name} not listed`)
      const get = await app.inject({ method: 'GET', url: `/v1/tools/${name}`, headers: owner })
      t.equal(get.statusCode, 404, `GET ${name}`)
      t.equal(get.json().error.code, 'not_found')
      // Its own valid calls, as a tool call: not found, before its arguments are looked at.
      for (const example of op.examples.valid) {
        const post = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: owner, payload: callArgs(op, example.args, ws.project.id) })
        t.equal(post.statusCode, 404, `POST ${name} "${example.title}"`)
        t.equal(post.json().error.code, 'not_found')
      }
      t.notOk((await discover()).tools.some((x) => x.name === name), `${name} not discovered`)
    }
    // Nothing was done by those calls: every tool is still enabled and no table changed.
    t.same(await listTools(), registryNames)
    t.same(changedTables(before, await snapshot(app)), [], 'no table changed')
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
    for (const { name } of notTools) {
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
    for (const { name } of notTools) await t.rejects(setToolEnabled(app, { workspace: other.workspace.id, tool: name, enabled: false }), AdminError, name)
  })

  t.test('discover_tools: the enabled catalogue, filtered by query words', async (t) => {
    const found = await discover()
    t.same(found.tools.map((x) => x.name), registryNames)
    t.equal(found.total, registryNames.length)
    for (const x of found.tools) {
      const c = app.registry.contract(x.name)!
      t.same(x, { name: c.name, title: c.title, description: c.description, toolset: c.toolset, read_only: c.annotations.readOnlyHint }, `${x.name} without schema`)
    }
    const names = async (query: string) => {
      const { tools, total } = await discover({ query })
      t.equal(total, tools.length, `'${query}': total is the count`)
      return tools.map((x) => x.name)
    }
    const inOrder = (list: string[]) => registryNames.filter((n) => list.includes(n))

    // Each tool is found by its name, in any case, with or without underscores.
    for (const name of registryNames) {
      for (const query of [name, name.toUpperCase(), name.replaceAll('_', ' ')]) t.ok((await names(query)).includes(name), `${name} found by '${query}'`)
    }
    // Every word must match: a query of several words finds what each of its words finds.
    const words = [...new Set(registryNames.flatMap((n) => n.split('_')))]
    for (const name of registryNames) {
      const parts = name.split('_')
      const each = await Promise.all(parts.map(names))
      t.same(await names(parts.join(' ')), inOrder(each.reduce((a, b) => a.filter((n) => b.includes(n)))), `'${parts.join(' ')}': what every word finds`)
    }
    // Singular and plural match alike.
    for (const word of words.filter((w) => w.length > 3 && !/(s|ie)$/.test(w))) {
      const one = await names(word)
      t.same(await names(`${word}s`), one, `'${word}s' finds what '${word}' finds`)
      if (word.endsWith('y')) t.same(await names(`${word.slice(0, -1)}ies`), one, `'${word.slice(0, -1)}ies' finds what '${word}' finds`)
    }
    // A word that nothing has finds nothing, alone or beside one that matches.
    t.same(await discover({ query: 'zzzqqq' }), { tools: [], total: 0 })
    t.same(await discover({ query: `${registryNames[0]} zzzqqq` }), { tools: [], total: 0 })

    const schemas = await discover({ include_schemas: true })
    t.same(schemas.tools.map((x) => x.name), registryNames)
    for (const x of schemas.tools) t.same(x.input_schema, JSON.parse(JSON.stringify(app.registry.contract(x.name)!.input_schema)), x.name)
    t.notOk((await discover({ include_schemas: false })).tools.some((x) => 'input_schema' in x))

    // A disabled tool is not discovered even when the query names it.
    const some = registryNames.at(-1)!
    await setToolEnabled(app, { workspace: ws.workspace.id, tool: some, enabled: false })
    t.same((await discover()).tools.map((x) => x.name), registryNames.filter((n) => n !== some))
    t.notOk((await names(some)).includes(some), `${some} disabled: not found by its name`)
    await setToolEnabled(app, { workspace: ws.workspace.id, tool: some, enabled: true })
    t.ok((await names(some)).includes(some), `${some} enabled again: found`)
  })
})
