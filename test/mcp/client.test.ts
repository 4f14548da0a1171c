// The MCP surface through the SDK's own client over real HTTP: every tool answers as on
// REST — the same list, the same results, the same errors (spec 4.3, DESIGN §4).
import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyInstance } from 'fastify'
import { addMember, bearer, fixedClock, listenTestApp, seedWorkspace } from '../helpers/app.ts'

const now = fixedClock('2025-06-10T12:00:00.000Z')
const { app, url } = await listenTestApp(t, { now })
const ws = await seedWorkspace(app)

async function connect(key: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'growthdesk-test', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: { headers: { ...bearer(key), ...headers } },
  })
  await client.connect(transport)
  t.teardown(() => client.close())
  return client
}

async function rest(app: FastifyInstance, key: string, name: string, args: unknown, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: { ...bearer(key), ...headers }, payload: args as object })
}

const textOf = (result: CallToolResult) => {
  const first = result.content[0]
  if (first?.type !== 'text') throw new Error(`expected a text content block, got ${JSON.stringify(result.content)}`)
  return first.text
}

// Some events before the pinned "now", so that daily ops are not all zeros.
const seeded = await app.inject({
  method: 'POST',
  url: '/v1/events',
  headers: bearer(ws.keys.ingest),
  payload: {
    events: [
      { event: 'signup', distinct_id: 'u1', timestamp: '2025-06-08T09:00:00Z' },
      { event: 'signup', distinct_id: 'u2', timestamp: '2025-06-09T09:00:00Z' },
      { event: 'daily_use', distinct_id: 'u1', timestamp: '2025-06-09T10:00:00Z' },
      { event: 'daily_use', distinct_id: 'u1', timestamp: '2025-06-09T11:00:00Z' },
      { event: 'daily_use', distinct_id: 'u2', timestamp: '2025-06-10T08:00:00Z' },
    ],
  },
})
if (seeded.statusCode !== 200) throw new Error(`seeding events failed: ${seeded.statusCode} ${seeded.body}`)

const client = await connect(ws.keys.service)

t.test('initialize tells who the server is and what it offers', async (t) => {
  t.match(client.getServerVersion(), { name: 'growthdesk' })
  const caps = client.getServerCapabilities()
  t.ok(caps?.tools, 'tools capability')
  t.ok(caps?.resources, 'resources capability')
  t.ok(caps?.prompts, 'prompts capability')
  t.match(client.getInstructions(), /list_projects/)
})

t.test('tools/list is GET /v1/tools?toolsets=default in MCP clothing', async (t) => {
  const listed = await client.listTools()
  const restList = await app.inject({ method: 'GET', url: '/v1/tools?toolsets=default', headers: bearer(ws.keys.service) })
  t.equal(restList.statusCode, 200)
  const restTools = restList.json().tools as { name: string; description: string; input_schema: unknown; output_schema: unknown }[]
  t.ok(restTools.length >= 10, 'a real catalogue')
  t.same(listed.tools.map((x) => x.name), restTools.map((x) => x.name), 'same names, same order')
  for (const [i, tool] of listed.tools.entries()) {
    const other = restTools[i]!
    t.equal(tool.description, other.description, `${tool.name}: description`)
    t.strictSame(tool.inputSchema, other.input_schema, `${tool.name}: inputSchema = input_schema`)
    t.ok(tool.outputSchema, `${tool.name}: has an outputSchema`)
    t.strictSame(tool.outputSchema, other.output_schema, `${tool.name}: outputSchema = output_schema`)
  }
  t.notOk(listed.tools.some((x) => x.name === 'ingest_events'), 'REST-only operations are not tools')
})

t.test('tool results are the REST `result`', async (t) => {
  await client.listTools() // the client checks structuredContent against the listed output schemas
  const cases: [string, Record<string, unknown>][] = [
    ['get_daily_ops', { project: ws.project.slug }],
    ['get_daily_ops', { project: ws.project.id, window: '30d' }],
    ['list_projects', {}],
    ['discover_tools', {}],
    ['discover_tools', { query: 'memory', include_schemas: true }],
  ]
  for (const [name, args] of cases) {
    const viaMcp = (await client.callTool({ name, arguments: args })) as CallToolResult
    const viaRest = await rest(app, ws.keys.service, name, args)
    t.equal(viaRest.statusCode, 200, `${name}: REST ok`)
    t.notOk(viaMcp.isError, `${name}: not an error`)
    const expected = viaRest.json().result
    t.strictSame(viaMcp.structuredContent, expected, `${name} ${JSON.stringify(args)}: structuredContent`)
    t.strictSame(JSON.parse(textOf(viaMcp)), expected, `${name} ${JSON.stringify(args)}: text content`)
  }
  const ops = (await client.callTool({ name: 'get_daily_ops', arguments: { project: ws.project.slug } })) as CallToolResult
  const days = (ops.structuredContent as { days: { date: string; registered_users: number; daily_use_events: number }[] }).days
  t.equal(days.length, 7)
  t.match(days.at(-2), { date: '2025-06-09', registered_users: 1, daily_use_events: 2 }, 'the seeded events show')
})

t.test('a memory added over MCP is listed the same on both surfaces', async (t) => {
  const added = (await client.callTool({
    name: 'add_memory',
    arguments: { project: ws.project.slug, content: 'Onboarding emails double activation', tags: ['activation'] },
  })) as CallToolResult
  t.notOk(added.isError, 'add_memory succeeds')
  const memory = added.structuredContent as { id: string; content: string; tags: string[] }
  t.match(memory, { id: /^mem_/, content: 'Onboarding emails double activation', tags: ['activation'] })
  t.strictSame(JSON.parse(textOf(added)), memory)

  const viaMcp = (await client.callTool({ name: 'list_memories', arguments: { project: ws.project.slug } })) as CallToolResult
  const viaRest = await rest(app, ws.keys.service, 'list_memories', { project: ws.project.slug })
  t.equal(viaRest.statusCode, 200)
  t.strictSame(viaMcp.structuredContent, viaRest.json().result)
  t.strictSame(JSON.parse(textOf(viaMcp)), viaRest.json().result)
  t.strictSame((viaMcp.structuredContent as { items: unknown[] }).items, [memory], 'the added memory, as add_memory returned it')
})

t.test('tool errors are the REST error body, byte for byte', async (t) => {
  const viewer = await addMember(app, ws.project.id, 'viewer')
  const viewerClient = await connect(viewer.keys.mcp)
  const cases: { what: string; key: string; mcp: Client; name: string; args: Record<string, unknown>; status: number; code: string }[] = [
    { what: 'bad argument value', key: ws.keys.service, mcp: client, name: 'get_daily_ops', args: { project: ws.project.slug, window: '9d' }, status: 400, code: 'invalid_arguments' },
    { what: 'unknown argument', key: ws.keys.service, mcp: client, name: 'list_projects', args: { colour: 'red' }, status: 400, code: 'invalid_arguments' },
    { what: 'missing project', key: ws.keys.service, mcp: client, name: 'get_daily_ops', args: {}, status: 400, code: 'invalid_arguments' },
    { what: 'unknown project', key: ws.keys.service, mcp: client, name: 'get_daily_ops', args: { project: 'no-such-project' }, status: 404, code: 'not_found' },
    { what: 'viewer without review access', key: viewer.keys.service, mcp: viewerClient, name: 'list_opportunities', args: { project: ws.project.slug }, status: 403, code: 'review_access_required' },
  ]
  for (const c of cases) {
    const viaMcp = (await c.mcp.callTool({ name: c.name, arguments: c.args })) as CallToolResult
    const viaRest = await rest(app, c.key, c.name, c.args)
    t.equal(viaRest.statusCode, c.status, `${c.what}: REST status`)
    t.equal(viaRest.json().error.code, c.code, `${c.what}: REST code`)
    t.equal(viaMcp.isError, true, `${c.what}: isError`)
    t.notOk(viaMcp.structuredContent, `${c.what}: no structured content on an error`)
    t.equal(textOf(viaMcp), viaRest.body, `${c.what}: the text is the REST error JSON`)
  }
})

t.test('an unknown tool is a JSON-RPC error naming it', async (t) => {
  const err = await client.callTool({ name: 'no_such_tool', arguments: {} }).then(
    () => null,
    (e: unknown) => e
  )
  t.type(err, McpError)
  t.equal((err as McpError).code, ErrorCode.InvalidParams)
  t.match((err as McpError).message, /no_such_tool/)
})

t.test('the X-Service-Project header selects the project over MCP too', async (t) => {
  const byHeader = await connect(ws.keys.service, { 'x-service-project': ws.project.slug })
  const viaMcp = (await byHeader.callTool({ name: 'get_daily_ops', arguments: {} })) as CallToolResult
  t.notOk(viaMcp.isError, 'the header names the project')
  const viaRest = await rest(app, ws.keys.service, 'get_daily_ops', {}, { 'x-service-project': ws.project.slug })
  t.equal(viaRest.statusCode, 200)
  t.strictSame(viaMcp.structuredContent, viaRest.json().result)
  t.equal((viaMcp.structuredContent as { project: string }).project, ws.project.id)

  const unknown = await connect(ws.keys.service, { 'x-service-project': 'elsewhere' })
  const missing = (await unknown.callTool({ name: 'get_daily_ops', arguments: {} })) as CallToolResult
  t.equal(missing.isError, true)
  t.equal(JSON.parse(textOf(missing)).error.code, 'not_found')
  const argumentWins = (await unknown.callTool({ name: 'get_daily_ops', arguments: { project: ws.project.slug } })) as CallToolResult
  t.notOk(argumentWins.isError, '`project` in the arguments wins over the header')
})

t.test('a tool disabled for the workspace is gone from MCP', async (t) => {
  const put = (enabled: boolean) =>
    app.inject({ method: 'PUT', url: '/v1/workspace/tools/search_signals', headers: bearer(ws.keys.service), payload: { enabled } })
  const off = await put(false)
  t.equal(off.statusCode, 200, 'the owner disables search_signals')
  t.teardown(() => put(true))

  const listed = await client.listTools()
  t.notOk(listed.tools.some((x) => x.name === 'search_signals'), 'not listed')
  t.ok(listed.tools.some((x) => x.name === 'discover_tools'), 'the others still are')
  const err = await client.callTool({ name: 'search_signals', arguments: { project: ws.project.slug, query: 'x' } }).then(
    () => null,
    (e: unknown) => e
  )
  t.type(err, McpError, 'calling it is a JSON-RPC error')
  t.match((err as McpError).message, /search_signals/)
  const discovered = (await client.callTool({ name: 'discover_tools', arguments: {} })) as CallToolResult
  t.notOk((discovered.structuredContent as { tools: { name: string }[] }).tools.some((x) => x.name === 'search_signals'))

  const on = await put(true)
  t.equal(on.statusCode, 200)
  t.ok((await client.listTools()).tools.some((x) => x.name === 'search_signals'), 'listed again once re-enabled')
})

t.test('resources are the public agent documents, as skills (test/mcp/skills.test.ts), and the MCP App views', async (t) => {
  const { resources } = await client.listResources()
  t.same(resources.map((r) => r.uri), ['skill://growthdesk/SKILL.md', 'skill://growthdesk-growth/SKILL.md', 'ui://growthdesk/board', 'ui://growthdesk/daily-ops'])
  for (const [uri, path] of [['skill://growthdesk/SKILL.md', '/SKILL.md'], ['skill://growthdesk-growth/SKILL.md', '/skills/growth/SKILL.md'], [`${url}/SKILL.md`, '/SKILL.md']] as const) {
    if (uri.startsWith('skill:')) t.equal(resources.find((r) => r.uri === uri)?.mimeType, 'text/markdown')
    const read = await client.readResource({ uri })
    const served = await fetch(`${url}${path}`)
    t.equal(served.status, 200)
    const content = read.contents[0] as { uri: string; text: string }
    t.equal(content.uri, uri)
    t.equal(content.text, await served.text(), `${path}: the same text as the public document`)
  }
  await t.rejects(client.readResource({ uri: `${url}/nothing.md` }), /nothing\.md/)
})

t.test('the growth_exploration prompt is the growth skill', async (t) => {
  const { prompts } = await client.listPrompts()
  t.ok(prompts.some((p) => p.name === 'growth_exploration'))
  const skill = await (await fetch(`${url}/skills/growth/SKILL.md`)).text()
  const prompt = await client.getPrompt({ name: 'growth_exploration', arguments: {} })
  const message = prompt.messages[0]!
  t.equal(message.role, 'user')
  t.equal(message.content.type === 'text' ? message.content.text : null, skill)
  const forProject = await client.getPrompt({ name: 'growth_exploration', arguments: { project: ws.project.slug } })
  const text = forProject.messages[0]!.content.type === 'text' ? forProject.messages[0]!.content.text : ''
  t.match(text, ws.project.slug)
  t.ok(text.endsWith(skill), 'the skill follows the project line')
  await t.rejects(client.getPrompt({ name: 'no_such_prompt' }), /no_such_prompt/)
})
