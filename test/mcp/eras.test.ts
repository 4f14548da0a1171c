// Both eras of MCP on one endpoint: the SDK's v2 client on the stateless 2026-07-28 revision and
// the v1 client on 2025-11-25 list every tool of the registry and call each with its own
// examples (read from the registry: a new tool is called here with no table to edit), with
// results byte-identical to POST /v1/tools/:name, and the same tool errors: each invalid example
// is the same invalid_arguments naming its field, byte for byte. Then the 2026-07-28 wire rules
// with plain fetch: Mcp-Method/Mcp-Name checks, `_meta`, errors carrying the request's id,
// resource not found, caching hints.
import t from 'tap'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Client as ClientV2, ProtocolError, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { McpError } from '@modelcontextprotocol/sdk/types.js'
import { bearer, fixedClock, ingestEvents, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { callArgs, invalidAnswerProblem, World } from '../helpers/examples.ts'

const now = fixedClock('2025-06-10T12:00:00.000Z')
const { app, url } = await listenTestApp(t, { now, config: { webhooks: { enabled: false, allowPrivateNetworks: true } } })
// Three workspaces seeded alike: a call that writes is made once on each surface, each on its
// own workspace, so that every surface meets the same state (reads are made on the first, by all three).
const worlds = await Promise.all([0, 1, 2].map(async () => new World(app, await seedWorkspace(app))))
const ws = worlds[0]!.ws
// Every toolset listed (the default list is test/mcp/toolsets.test.ts's).
const endpoint = `${url}/mcp?toolsets=all`
for (const { ws } of worlds) {
  await ingestEvents(app, ws.keys.ingest, [
    ['signup', 'u1', '2025-06-08T09:00:00Z'],
    ['daily_use', 'u1', '2025-06-09T10:00:00Z'],
    ['daily_use', ws.user.email, '2025-06-10T08:00:00Z'],
  ])
}

const modern = new ClientV2({ name: 'growthdesk-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
await modern.connect(new TransportV2(new URL(endpoint), { requestInit: { headers: bearer(ws.keys.service) } }))
t.teardown(() => modern.close())
const legacy = new ClientV1({ name: 'growthdesk-test-v1', version: '1.0.0' })
await legacy.connect(new TransportV1(new URL(endpoint), { requestInit: { headers: bearer(ws.keys.service) } }))
t.teardown(() => legacy.close())
/** The 2025-11-25 client of the second workspace, for the writes. */
const legacyElsewhere = new ClientV1({ name: 'growthdesk-test-v1', version: '1.0.0' })
await legacyElsewhere.connect(new TransportV1(new URL(endpoint), { requestInit: { headers: bearer(worlds[1]!.ws.keys.service) } }))
t.teardown(() => legacyElsewhere.close())

interface ToolResult { content: { type: string; text?: string }[]; structuredContent?: unknown; isError?: boolean }
const textOf = (r: ToolResult) => {
  const first = r.content[0]
  if (first?.type !== 'text' || typeof first.text !== 'string') throw new Error(`expected one text block, got ${JSON.stringify(r.content)}`)
  return first.text
}
async function rest(name: string, args: unknown, key = ws.keys.service) {
  const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: args as object })
  return { status: res.statusCode, body: res.body }
}
/** The REST body's `result`, as the bytes MCP must carry: `{"result":X}` → `X`. */
const restResult = (body: string) => {
  t.ok(body.startsWith('{"result":') && body.endsWith('}'), 'a REST result envelope')
  return body.slice('{"result":'.length, -1)
}

const project = ws.project.slug
// Seeded before any subtest starts (top-level awaits after a t.test would race the root test's end).
const hook = (await app.repos.webhooks.create({ workspaceId: ws.workspace.id, projectId: ws.project.id, url: 'http://127.0.0.1:9/hook', events: ['opportunity.submitted'], description: '', secret: 'whsec_c2VjcmV0', createdBy: ws.user.id, now: now() })).id

t.test('each client lands on its era', async (t) => {
  t.equal(modern.getProtocolEra(), 'modern')
  t.equal(modern.getNegotiatedProtocolVersion(), '2026-07-28')
  t.equal(legacy.getServerVersion()?.name, 'growthdesk')
})

t.test('both eras list every registry tool, in registry order, fully described', async (t) => {
  const names = app.registry.contracts().map((c) => c.name)
  const [a, b] = [await modern.listTools(), await legacy.listTools()]
  t.strictSame(a.tools.map((x) => x.name), names, '2026-07-28: the registry, in order')
  t.strictSame(b.tools, a.tools, '2025-11-25: the same list')
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, validateFormats: false })
  const empty = (s: unknown, at: string, out: string[]): string[] => {
    if (!s || typeof s !== 'object') return out
    if (!Array.isArray(s) && Object.keys(s).filter((k) => !['description', 'title'].includes(k)).length === 0) out.push(at || '/')
    for (const [k, v] of Object.entries(s)) if (typeof v === 'object' && k !== 'required' && k !== 'enum') empty(v, `${at}/${k}`, out)
    return out
  }
  for (const tool of a.tools) {
    t.ok(tool.title, `${tool.name}: title`)
    const hints = tool.annotations?.readOnlyHint ? ['readOnlyHint'] as const : ['readOnlyHint', 'destructiveHint', 'idempotentHint'] as const
    for (const hint of hints) t.type(tool.annotations?.[hint], 'boolean', `${tool.name}: ${hint}`)
    t.ok(tool.outputSchema, `${tool.name}: outputSchema`)
    t.strictSame(empty(tool.outputSchema, '', []), [], `${tool.name}: no empty {} sub-schema in outputSchema`)
    t.doesNotThrow(() => ajv.compile(tool.outputSchema!), `${tool.name}: outputSchema is JSON Schema 2020-12`)
    t.doesNotThrow(() => ajv.compile(tool.inputSchema), `${tool.name}: inputSchema is JSON Schema 2020-12`)
  }
})

/**
 * A result with what differs between the workspaces made the same: each workspace's own ids and
 * owner, the ids, secrets and invitation links a write generates.
 */
const mask = (text: string) => {
  for (const { ws: w } of worlds) {
    // (The workspace id in lower case too: the members an example names have it in their email.)
    for (const [value, name] of [[w.workspace.id, 'wsp'], [w.workspace.id.toLowerCase(), 'wsp'], [w.user.id, 'usr'], [w.user.email, 'owner'], [w.project.id, 'prj']] as const) text = text.replaceAll(value, `<${name}>`)
  }
  return text.replace(/\b(prj|opp|mem|whk|msg|key|inv|usr|cmt|view|alr|ale)_[0-9A-Za-z]{20}\b/g, '$1_…').replace(/whsec_[A-Za-z0-9+/]+=*/g, 'whsec_…').replace(/whpk_[A-Za-z0-9+/]+=*/g, 'whpk_…').replace(/\bgdv_[0-9A-Za-z]{38}\b/g, 'gdv_…')
}

t.test('every tool, every valid example: both eras carry the REST result, as structuredContent and as the same text', async (t) => {
  const names = app.registry.contracts().map((c) => c.name)
  for (const name of names) {
    const op = app.registry.operation(name)
    for (const example of op.examples.valid) {
      const label = `${name} "${example.title}"`
      // Made real in every workspace alike (the records it names), whichever is called.
      const args = await Promise.all(worlds.map(async (w) => callArgs(op, await w.realize(op, example.args), w.ws.project.slug)))
      // A read is made three times on the first workspace; a write once on each, a surface each.
      const reads = op.annotations.readOnlyHint
      const viaModern = (await modern.callTool({ name, arguments: args[0] })) as ToolResult
      const viaLegacy = (await (reads ? legacy : legacyElsewhere).callTool({ name, arguments: args[reads ? 0 : 1] })) as ToolResult
      const viaRest = await rest(name, args[reads ? 0 : 2], worlds[reads ? 0 : 2]!.ws.keys.service)
      t.equal(viaRest.status, 200, `${label}: REST ${viaRest.body.slice(0, 200)}`)
      const expected = restResult(viaRest.body)
      for (const [era, r] of [['2026-07-28', viaModern], ['2025-11-25', viaLegacy]] as const) {
        t.notOk(r.isError, `${label} (${era}): not an error ${r.isError ? textOf(r) : ''}`)
        t.equal(textOf(r), JSON.stringify(r.structuredContent), `${label} (${era}): text is the structuredContent JSON`)
        if (reads) t.equal(textOf(r), expected, `${label} (${era}): byte-identical to the REST result`)
        else t.equal(mask(textOf(r)), mask(expected), `${label} (${era}): the REST result, each workspace's ids aside`)
      }
    }
  }
})

t.test('every tool, every invalid example: the same invalid_arguments naming its field, in both eras and over REST', async (t) => {
  for (const name of app.registry.contracts().map((c) => c.name)) {
    const op = app.registry.operation(name)
    for (const example of op.examples.invalid) {
      const label = `${name} "${example.title}"`
      const args = callArgs(op, await worlds[0]!.realize(op, example.args), project)
      const r = await rest(name, args)
      t.equal(invalidAnswerProblem(r.status, r.body, example.field), null, `${label}: REST`)
      const a = (await modern.callTool({ name, arguments: args })) as ToolResult
      const b = (await legacy.callTool({ name, arguments: args })) as ToolResult
      t.equal(a.isError, true, `${label}: isError (2026-07-28)`)
      t.equal(b.isError, true, `${label}: isError (2025-11-25)`)
      t.equal(textOf(a), r.body, `${label}: 2026-07-28 text = REST error body`)
      t.equal(textOf(b), r.body, `${label}: 2025-11-25 text = REST error body`)
    }
  }
})

t.test('tool errors are the REST error body, identical in both eras', async (t) => {
  const errorCases: [string, Record<string, unknown>, number][] = [
    ['list_projects', { colour: 'red' }, 400],
    ['get_daily_ops', { project: 'no-such-project' }, 404],
    ['forget_memory', { id: 'mem_nope' }, 404],
    ['get_webhook', { id: 'whk_nope' }, 404],
    ['create_webhook', { project, url: 'ftp://example.com/hook', events: ['memory.added'] }, 400],
    ['create_webhook', { project, url: 'https://example.com/hook', events: ['opportunity.deleted'] }, 400],
    ['redeliver_webhook', { id: hook, delivery: 'msg_nope' }, 404],
    ['list_opportunities', { project, after: 'bm90IGEgY3Vyc29y' }, 400],
    ['create_alert', { project, name: 'Low', metric: 'daily_users', condition: 'below' }, 400],
    ['update_alert', { project, alert_id: 'alr_nope', enabled: false }, 404],
  ]
  for (const [name, args, status] of errorCases) {
    const a = (await modern.callTool({ name, arguments: args })) as ToolResult
    const b = (await legacy.callTool({ name, arguments: args })) as ToolResult
    const r = await rest(name, args)
    t.equal(r.status, status, `${name}: REST ${status}`)
    t.equal(a.isError, true, `${name}: isError (2026-07-28)`)
    t.equal(b.isError, true, `${name}: isError (2025-11-25)`)
    t.equal(textOf(a), r.body, `${name}: 2026-07-28 text = REST error body`)
    t.equal(textOf(b), r.body, `${name}: 2025-11-25 text = REST error body`)
  }
})

t.test('an unknown tool is -32602 naming it once, in both eras', async (t) => {
  const a = await modern.callTool({ name: 'no_such_tool', arguments: {} }).then(() => null, (e: unknown) => e)
  t.ok(ProtocolError.isInstance(a), '2026-07-28: a protocol error')
  t.equal((a as ProtocolError).code, -32602)
  const b = await legacy.callTool({ name: 'no_such_tool', arguments: {} }).then(() => null, (e: unknown) => e)
  t.type(b, McpError)
  t.equal((b as McpError).code, -32602)
  for (const [era, e] of [['2026-07-28', a], ['2025-11-25', b]] as const) {
    const message = (e as Error).message
    t.match(message, /There is no tool named 'no_such_tool'\. .*discover_tools/, `${era}: names the tool and discover_tools`)
    t.notMatch(message, /MCP error -32602:.*MCP error -32602:/, `${era}: the prefix once: ${message}`)
  }
})

// The 2026-07-28 wire, with plain fetch.
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-fetch', version: '1.0.0' },
}
async function post(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { ...bearer(ws.keys.service), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...body }),
  })
  return { status: res.status, body: (await res.json()) as { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } }
}
const rpc = (id: number, method: string, params: Record<string, unknown> = {}, meta: unknown = META) => ({ id, method, params: meta === null ? params : { ...params, _meta: meta } })

t.test('2026-07-28: server/discover, no initialize', async (t) => {
  const res = await post(rpc(1, 'server/discover'), { 'mcp-method': 'server/discover' })
  t.equal(res.status, 200)
  t.equal(res.body.id, 1)
  t.match(res.body.result, { supportedVersions: ['2026-07-28'], capabilities: { tools: {}, resources: {}, prompts: {} }, instructions: /list_projects/ })
  t.match(res.body.result?._meta, { 'io.modelcontextprotocol/serverInfo': { name: 'growthdesk' } })
})

t.test('2026-07-28: Mcp-Method and Mcp-Name must match the body; the error carries the id', async (t) => {
  const ok = await post(rpc(2, 'tools/call', { name: 'list_projects', arguments: {} }), { 'mcp-method': 'tools/call', 'mcp-name': 'list_projects' })
  t.equal(ok.status, 200)
  t.equal(ok.body.id, 2)
  const wrongMethod = await post(rpc(3, 'tools/list'), { 'mcp-method': 'tools/call' })
  t.equal(wrongMethod.status, 400)
  t.equal(wrongMethod.body.id, 3, 'the id of the request')
  t.equal(wrongMethod.body.error?.code, -32020)
  const wrongName = await post(rpc(4, 'tools/call', { name: 'list_projects', arguments: {} }), { 'mcp-method': 'tools/call', 'mcp-name': 'get_overview' })
  t.equal(wrongName.status, 400)
  t.equal(wrongName.body.id, 4)
  t.equal(wrongName.body.error?.code, -32020)
  const missingName = await post(rpc(5, 'tools/call', { name: 'list_projects', arguments: {} }), { 'mcp-method': 'tools/call' })
  t.equal(missingName.status, 400, 'Mcp-Name is required for tools/call')
  t.equal(missingName.body.id, 5)
})

t.test('2026-07-28: a missing or malformed _meta is -32602 with the id', async (t) => {
  const missing = await post(rpc(6, 'tools/list', {}, null), { 'mcp-method': 'tools/list' })
  t.equal(missing.body.id, 6)
  t.equal(missing.body.error?.code, -32602, JSON.stringify(missing.body))
  const malformed = await post(rpc(7, 'tools/list', {}, { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': 'all of them' }), { 'mcp-method': 'tools/list' })
  t.equal(malformed.body.id, 7)
  t.equal(malformed.body.error?.code, -32602, JSON.stringify(malformed.body))
})

t.test('2026-07-28: resource not found is -32602 with data.uri, and the id', async (t) => {
  const uri = `${url}/no-such-document.md`
  const res = await post(rpc(8, 'resources/read', { uri }), { 'mcp-method': 'resources/read', 'mcp-name': uri })
  t.equal(res.body.id, 8)
  t.equal(res.body.error?.code, -32602)
  t.strictSame(res.body.error?.data, { uri })
  const found = await post(rpc(9, 'resources/read', { uri: `${url}/SKILL.md` }), { 'mcp-method': 'resources/read', 'mcp-name': `${url}/SKILL.md` })
  t.match(found.body.result, { contents: [{ uri: `${url}/SKILL.md`, mimeType: 'text/markdown' }] })
})

t.test('2026-07-28: caching hints on every list', async (t) => {
  const expected: Record<string, { ttlMs: number; cacheScope: string }> = {
    'tools/list': { ttlMs: 60_000, cacheScope: 'private' },
    'resources/list': { ttlMs: 300_000, cacheScope: 'public' },
    'resources/templates/list': { ttlMs: 300_000, cacheScope: 'public' },
    'prompts/list': { ttlMs: 300_000, cacheScope: 'public' },
  }
  let id = 20
  for (const [method, hint] of Object.entries(expected)) {
    const res = await post(rpc(id, method), { 'mcp-method': method })
    t.equal(res.body.id, id++)
    t.match(res.body.result, hint, `${method}: ${JSON.stringify(hint)}`)
  }
  const legacyList = await post({ id: 30, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' })
  t.notOk('ttlMs' in (legacyList.body.result ?? {}), '2025 results carry no 2026 fields')
})

t.test('2026-07-28: tools/list is the same list in the same order every time', async (t) => {
  const a = await post(rpc(40, 'tools/list'), { 'mcp-method': 'tools/list' })
  const b = await post(rpc(41, 'tools/list'), { 'mcp-method': 'tools/list' })
  t.strictSame(a.body.result?.tools, b.body.result?.tools)
})

t.test('2026-07-28: an unknown tool and a disabled tool are -32602 with the id', async (t) => {
  const res = await post(rpc(50, 'tools/call', { name: 'no_such_tool', arguments: {} }), { 'mcp-method': 'tools/call', 'mcp-name': 'no_such_tool' })
  t.equal(res.body.id, 50)
  t.equal(res.body.error?.code, -32602)
  t.equal(res.body.error?.message, (await rest('no_such_tool', {})).body.match(/"message":"([^"]*)"/)?.[1], 'the message of REST\'s 404')
  await app.repos.workspaces.setToolEnabled(ws.workspace.id, 'get_overview', false)
  t.teardown(() => app.repos.workspaces.setToolEnabled(ws.workspace.id, 'get_overview', true))
  const disabled = await post(rpc(51, 'tools/call', { name: 'get_overview', arguments: { project } }), { 'mcp-method': 'tools/call', 'mcp-name': 'get_overview' })
  t.equal(disabled.body.id, 51)
  t.equal(disabled.body.error?.code, -32602)
  const list = await post(rpc(52, 'tools/list'), { 'mcp-method': 'tools/list' })
  t.notOk((list.body.result?.tools as { name: string }[]).some((x) => x.name === 'get_overview'), 'hidden from tools/list')
})

t.test('2026-07-28: the project header selects the project', async (t) => {
  const res = await post(rpc(60, 'tools/call', { name: 'get_project', arguments: {} }), { 'mcp-method': 'tools/call', 'mcp-name': 'get_project', 'x-service-project': project })
  t.equal(res.body.id, 60)
  t.notOk(res.body.result?.isError, JSON.stringify(res.body))
  t.match(res.body.result?.structuredContent, { slug: project })
})
