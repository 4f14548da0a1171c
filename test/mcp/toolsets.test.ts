// A tool list that fits: by default MCP `tools/list` lists the `default` toolset (reading,
// reviewing, projects, memories) and stays under a size bound for a service key and a
// project-side key, in both eras; `/mcp?toolsets=admin` or `all` lists more; every tool stays
// callable by name, and discover_tools and GET /v1/tools reach every one. Every description
// starts with the product's nouns and stays under 1 KB; output schemas stay, without repetition.
import t from 'tap'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'

/** The bound of the default list (bytes of the JSON-RPC response); it was 51 KB for every tool.
 * Today's list is about 23 KB (24,000 bytes is read strictly): a new default tool needs room made, or a toolset of its own. */
const MAX_DEFAULT_LIST = 24_000
const MAX_DESCRIPTION = 1024

const { app, url } = await listenTestApp(t)
const ws = await seedWorkspace(app)
const project = ws.project.slug
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
const base = { host: new URL(url).host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

interface Tool { name: string; title: string; description: string; inputSchema: Record<string, unknown>; outputSchema?: Record<string, unknown> }
async function list(key: string, era: '2025-11-25' | '2026-07-28', query = '') {
  const res = await app.inject({
    method: 'POST',
    url: `/mcp${query}`,
    headers: { ...base, ...bearer(key), 'mcp-protocol-version': era, ...(era === '2026-07-28' ? { 'mcp-method': 'tools/list' } : {}) },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: era === '2026-07-28' ? { _meta: META } : {} },
  })
  return { status: res.statusCode, bytes: Buffer.byteLength(res.body), tools: (res.json().result?.tools ?? []) as Tool[], body: res.body }
}

const defaultNames = app.registry.contracts([], ['default']).map((c) => c.name)
const allNames = app.registry.contracts().map((c) => c.name)

t.test('the default tools/list is the default toolset and fits, for a service key and a project-side key, in both eras', async (t) => {
  t.ok(allNames.length > defaultNames.length, 'some tools are in other toolsets')
  for (const admin of ['create_webhook', 'list_webhooks', 'delete_webhook', 'rotate_webhook_secret', 'create_project', 'update_project']) {
    t.notOk(defaultNames.includes(admin), `${admin} is not in the default toolset`)
  }
  for (const reader of ['discover_tools', 'list_opportunities', 'review_opportunity', 'get_overview', 'get_daily_ops', 'list_projects', 'get_project', 'list_memories', 'add_memory']) {
    t.ok(defaultNames.includes(reader), `${reader} is in the default toolset`)
  }
  for (const [kind, key] of [['gds_', ws.keys.service], ['gdm_', ws.keys.mcp]] as const) {
    for (const era of ['2025-11-25', '2026-07-28'] as const) {
      const res = await list(key, era)
      t.equal(res.status, 200)
      t.strictSame(res.tools.map((x) => x.name), defaultNames, `${kind} ${era}: the default toolset, in registry order`)
      t.ok(res.bytes <= MAX_DEFAULT_LIST, `${kind} ${era}: ${res.bytes} bytes ≤ ${MAX_DEFAULT_LIST}`)
      t.comment(`${kind} ${era}: the default tools/list is ${res.bytes} bytes, ${res.tools.length} tools`)
    }
  }
})

t.test('?toolsets= lists more; an unknown toolset is a 400 naming the toolsets', async (t) => {
  const admin = await list(ws.keys.service, '2025-11-25', '?toolsets=admin')
  t.strictSame(admin.tools.map((x) => x.name), app.registry.contracts([], ['default', 'admin']).map((c) => c.name), 'default and admin')
  const triage = await list(ws.keys.service, '2025-11-25', '?toolsets=triage')
  t.strictSame(triage.tools.map((x) => x.name), app.registry.contracts([], ['default', 'triage']).map((c) => c.name), 'default and triage')
  for (const name of ['tag_opportunity', 'list_tags', 'rename_tag', 'delete_tag', 'assign_opportunity']) t.ok(triage.tools.some((x) => x.name === name) && !defaultNames.includes(name), `${name}: in triage, not in default`)
  const all = await list(ws.keys.service, '2026-07-28', '?toolsets=all')
  t.strictSame(all.tools.map((x) => x.name), allNames, 'all: every tool')
  const bad = await list(ws.keys.service, '2025-11-25', '?toolsets=admn')
  t.equal(bad.status, 400)
  t.match(JSON.parse(bad.body), { error: { code: 'invalid_arguments', message: "Unknown toolset 'admn': the toolsets are default, triage, admin, metrics (or all)." } })
  const rest = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(ws.keys.service) })
  t.strictSame(rest.json().tools.map((x: { name: string }) => x.name), allNames, 'GET /v1/tools lists every toolset by default')
  t.ok(rest.json().tools.every((x: { toolset: string }) => ['default', 'triage', 'admin', 'metrics'].includes(x.toolset)), 'each with its toolset')
  for (const name of ['get_opportunity', 'get_review_history', 'merge_opportunities', 'unmerge_opportunity', 'list_merged_opportunities', 'tag_opportunity', 'list_tags', 'rename_tag', 'delete_tag', 'assign_opportunity', 'find_similar_opportunities']) {
    t.ok(triage.tools.some((x) => x.name === name), `${name}: listed with ?toolsets=triage`)
    t.notOk(defaultNames.includes(name), `${name}: not in the default toolset`)
  }
  for (const name of ['save_view', 'list_saved_views', 'delete_saved_view']) {
    t.ok(triage.tools.some((x) => x.name === name), `${name}: listed with ?toolsets=triage`)
    t.notOk(defaultNames.includes(name), `${name}: not in the default toolset`)
  }
  const metrics = await list(ws.keys.service, '2025-11-25', '?toolsets=metrics')
  t.strictSame(metrics.tools.map((x) => x.name), app.registry.contracts([], ['default', 'metrics']).map((c) => c.name), 'default and metrics')
  t.ok(metrics.tools.some((x) => x.name === 'get_opportunity_impact') && !defaultNames.includes('get_opportunity_impact'), 'get_opportunity_impact: in metrics, not in default')
  for (const name of ['get_retention', 'get_digest', 'set_digest', 'preview_digest', 'delete_digest']) t.ok(metrics.tools.some((x) => x.name === name) && !defaultNames.includes(name), `${name}: in metrics, not in default`)
  for (const name of ['create_alert', 'list_alerts', 'update_alert', 'delete_alert', 'list_alert_events']) {
    t.ok(metrics.tools.some((x) => x.name === name), `${name}: listed with ?toolsets=metrics`)
    t.notOk(defaultNames.includes(name), `${name}: not in the default toolset`)
  }
  const restDefault = await app.inject({ method: 'GET', url: '/v1/tools?toolsets=default', headers: bearer(ws.keys.service) })
  t.strictSame(restDefault.json().tools.map((x: { name: string }) => x.name), defaultNames, 'GET /v1/tools?toolsets=default: what MCP lists')
})

t.test('every tool stays reachable: callable by name over MCP, and listed by discover_tools with its toolset', async (t) => {
  const call = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { ...base, ...bearer(ws.keys.service), 'mcp-protocol-version': '2025-11-25' },
    payload: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_webhooks', arguments: { project } } },
  })
  t.notOk(call.json().result?.isError, 'an admin tool, not listed, is called')
  t.strictSame(call.json().result?.structuredContent, { items: [] })
  const discovered = await app.inject({ method: 'POST', url: '/v1/tools/discover_tools', headers: bearer(ws.keys.service), payload: {} })
  const tools = discovered.json().result.tools as { name: string; toolset: string }[]
  t.strictSame(tools.map((x) => x.name), allNames, 'discover_tools lists every toolset')
  t.equal(tools.find((x) => x.name === 'create_webhook')?.toolset, 'admin')
  const found = await app.inject({ method: 'POST', url: '/v1/tools/discover_tools', headers: bearer(ws.keys.service), payload: { query: 'webhook secret' } })
  t.ok(found.json().result.tools.some((x: { name: string }) => x.name === 'rotate_webhook_secret'), 'found by its words')
})

/** The `required`, `description`, `format` and `pattern` keywords anywhere in a schema (not property names). */
function keywords(schema: unknown, at = ''): string[] {
  if (!schema || typeof schema !== 'object') return []
  const found: string[] = []
  for (const [key, value] of Object.entries(schema)) {
    if (['properties', 'patternProperties', '$defs'].includes(key) && value && typeof value === 'object') {
      for (const [name, sub] of Object.entries(value)) found.push(...keywords(sub, `${at}/${key}/${name}`))
    } else if (['required', 'description', 'format', 'pattern'].includes(key)) found.push(`${at}/${key}`)
    else if (typeof value === 'object') found.push(...keywords(value, `${at}/${key}`))
  }
  return found
}

t.test("the SDK's clients of both eras, on the default list, call a tool it does not show", async (t) => {
  const modern = new ClientV2({ name: 'toolsets-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
  await modern.connect(new TransportV2(new URL(`${url}/mcp`), { requestInit: { headers: bearer(ws.keys.service) } }))
  t.teardown(() => modern.close())
  const legacy = new ClientV1({ name: 'toolsets-v1', version: '1.0.0' })
  await legacy.connect(new TransportV1(new URL(`${url}/mcp`), { requestInit: { headers: bearer(ws.keys.mcp) } }))
  t.teardown(() => legacy.close())
  for (const [era, client] of [['2026-07-28', modern], ['2025-11-25', legacy]] as const) {
    const listed = (await client.listTools()).tools.map((x) => x.name)
    t.strictSame(listed, defaultNames, `${era}: the default list`)
    const found = await client.callTool({ name: 'discover_tools', arguments: { query: 'webhooks' } })
    t.ok((found.structuredContent as { tools: { name: string }[] }).tools.some((x) => x.name === 'list_webhooks'), `${era}: discover_tools finds list_webhooks`)
    const called = await client.callTool({ name: 'list_webhooks', arguments: { project } })
    t.notOk(called.isError, `${era}: list_webhooks is called by name`)
    t.strictSame(called.structuredContent, { items: [] })
  }
})

t.test('descriptions start with the product nouns and stay under 1 KB; output schemas stay, compiled strict', async (t) => {
  const all = await list(ws.keys.service, '2026-07-28', '?toolsets=all')
  const nouns = /^(Growth opportunit|Opportunit|Review|Signals|Metrics|Daily|Events|Event|Projects?|Project card|Memor|Webhooks?|Tools?|KPI|Team members|Saved views)/
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, validateFormats: false })
  for (const tool of all.tools) {
    t.match(tool.description, nouns, `${tool.name}: starts with product nouns: "${tool.description.slice(0, 40)}…"`)
    t.ok(Buffer.byteLength(tool.description) <= MAX_DESCRIPTION, `${tool.name}: description ${Buffer.byteLength(tool.description)} bytes`)
    t.ok(tool.outputSchema, `${tool.name}: has an outputSchema`)
    t.doesNotThrow(() => ajv.compile(tool.outputSchema!), `${tool.name}: its outputSchema compiles`)
    t.strictSame(keywords(tool.outputSchema), [], `${tool.name}: no required lists, descriptions, formats or patterns repeated in the output schema`)
  }
})
