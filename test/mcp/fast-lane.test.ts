// The tools/call fast lane (routes/mcp-fast.ts) against the SDK, differentially: every request of
// the corpus is sent to two apps on two copies of one database, one built with the lane off
// (`mcpFastLane: false`: the SDK answers, as it answers everything else) and one with it on, and
// the two answers must be the same status, the same headers (the date aside) and the same body
// bytes. The ordinary calls of both eras must be answered by the lane; everything unusual must
// still reach the SDK (each app tells which path answered: `onMcpPath`).
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { addMember, addProject, bearer, buildTestApp, fixedClock, ingestEvents, PUBLIC_URL, seedWorkspace, testDatabase } from '../helpers/app.ts'

const now = fixedClock('2025-06-10T12:00:00.000Z')
// The data is written through an app that is closed before the two compared ones open copies of it.
const database = await testDatabase(t)
const app = await buildTestApp(t, { now, database })
const ws = await seedWorkspace(app)
const other = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Other', slug: 'other-project' })
const viewer = await addMember(app, ws.project.id, 'viewer')
await ingestEvents(app, ws.keys.ingest, [
  ['signup', 'u1', '2025-06-08T09:00:00Z'],
  ['daily_use', 'u1', '2025-06-09T10:00:00Z'],
])
const project = ws.project.slug
const host = new URL(PUBLIC_URL).host

// Stored text that every escape of JSON meets on its way back out: the lane writes a result's
// serialized text as its structuredContent as it is, and the SDK parses and writes it again.
const tricky = 'quote " backslash \\ slash / tab \t newline \n cr \r bell \u0007 del \u007f ls \u2028 ps \u2029 é ✓ 😀 <script>&amp;'
for (const [name, payload] of [
  ['submit_opportunity', { project, contribution_type: 'tricky', key_information: tricky, reason: tricky, suggested_action: '\u001f' }],
  ['add_memory', { project, content: tricky }],
  ['update_project', { project, description: tricky, goals: [tricky, 'x'] }],
] as const) {
  const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(ws.keys.service), payload })
  if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body}`)
}
await ingestEvents(app, ws.keys.ingest, [['tricky "event" \\ 😀', 'u"1\u2028', '2025-06-09T11:00:00Z']])
const toolNames = app.registry.contracts().map((c) => c.name)
await app.close()

/** Which path answered each app's requests. */
const answeredBy = { sdkOnly: { fast: 0, sdk: 0 }, withLane: { fast: 0, sdk: 0 } }
const copy = await testDatabase(t, { copyOf: database })
const sdkOnly = await buildTestApp(t, { now, database, mcpFastLane: false, onMcpPath: (path) => answeredBy.sdkOnly[path]++ })
const withLane = await buildTestApp(t, { now, database: copy, onMcpPath: (path) => answeredBy.withLane[path]++ })

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
type Era = 'legacy' | 'modern'
interface Case {
  label: string
  /** The JSON-RPC message, or the raw body text. */
  body: unknown
  headers: Record<string, string>
  /** Which path must answer with the lane on. */
  path: 'fast' | 'sdk'
  key?: string
}

/** An ordinary tools/call of an era, with its headers. */
function call(era: Era, name: string, args: Record<string, unknown> | undefined, options: { id?: unknown; headers?: Record<string, string>; meta?: unknown } = {}) {
  const params: Record<string, unknown> = { name, ...(args !== undefined && { arguments: args }) }
  if (era === 'modern') params._meta = options.meta ?? META
  const headers = era === 'modern'
    ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name, ...options.headers }
    : { 'mcp-protocol-version': '2025-11-25', ...options.headers }
  return { body: { jsonrpc: '2.0', id: 'id' in options ? options.id : 1, method: 'tools/call', params }, headers }
}

const cases: Case[] = []
for (const era of ['legacy', 'modern'] as const) {
  const fast = (label: string, c: { body: unknown; headers: Record<string, string> }, key?: string) => cases.push({ label: `${era}: ${label}`, ...c, path: 'fast', key })
  const sdk = (label: string, c: { body: unknown; headers: Record<string, string> }, key?: string) => cases.push({ label: `${era}: ${label}`, ...c, path: 'sdk', key })
  // Successes: workspace and project tools, the project by slug, by id, by header.
  fast('list_projects', call(era, 'list_projects', {}))
  fast('list_projects, no arguments', call(era, 'list_projects', undefined))
  fast('discover_tools', call(era, 'discover_tools', { query: 'memory', include_schemas: true }))
  fast('get_project by slug', call(era, 'get_project', { project }))
  fast('get_project by id', call(era, 'get_project', { project: ws.project.id }))
  fast('get_project of another project', call(era, 'get_project', { project: other.slug }))
  fast('get_project by X-Service-Project', call(era, 'get_project', {}, { headers: { 'x-service-project': project } }))
  fast('get_daily_ops 30d', call(era, 'get_daily_ops', { project, window: '30d' }))
  fast('get_overview', call(era, 'get_overview', { project }))
  fast('get_event_stream', call(era, 'get_event_stream', { project, limit: 5 }))
  fast('list_opportunities', call(era, 'list_opportunities', { project }))
  fast('list_memories', call(era, 'list_memories', { project }))
  fast('list_opportunities, tricky text', call(era, 'list_opportunities', { project, type: 'tricky' }))
  fast('search_signals, tricky text', call(era, 'search_signals', { project, query: 'quote backslash' }))
  fast('get_daily_event_summary, tricky event', call(era, 'get_daily_event_summary', { project }))
  fast('search_signals, non-ASCII', call(era, 'search_signals', { project, query: 'é ✓ \u2028 😀' }))
  fast('update_project', call(era, 'update_project', { project, stage: 'beta' }))
  fast('viewer: get_project', call(era, 'get_project', { project }), viewer.keys.service)
  // Tool errors.
  fast('invalid arguments', call(era, 'list_projects', { colour: 'red' }))
  fast('a wrong type', call(era, 'get_daily_ops', { project, window: 30 }))
  fast('unknown project', call(era, 'get_daily_ops', { project: 'no-such-project' }))
  fast('unknown project by header', call(era, 'get_project', {}, { headers: { 'x-service-project': 'nope' } }))
  fast('no project', call(era, 'get_project', {}))
  fast('NUL in a string', call(era, 'search_signals', { project, query: 'a\u0000b' }))
  fast('NUL in the project', call(era, 'get_project', { project: 'a\u0000b' }))
  fast('forbidden role', call(era, 'update_project', { project, stage: 'beta' }), viewer.keys.service)
  fast('review access required', call(era, 'list_opportunities', { project }), viewer.keys.service)
  fast('list_opportunities, search', call(era, 'list_opportunities', { project, q: 'BACKSLASH \\' }))
  fast('review_opportunities, a missing id', call(era, 'review_opportunities', { project, event_ids: ['opp_nope'], status: 'done' }))
  fast('unknown memory', call(era, 'forget_memory', { id: 'mem_nope' }))
  // Every tool takes the lane (here with arguments no tool accepts: nothing runs).
  for (const name of toolNames) fast(`${name}, an unknown argument`, call(era, name, { project, __nope: 1 }))
  // Ids of both kinds.
  for (const id of ['abc', '', 'é-😀', 0, -5, 42, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER]) {
    fast(`id ${JSON.stringify(id)}`, call(era, 'get_project', { project }, { id }))
  }
  // Not ordinary: the SDK answers.
  sdk('unknown tool', call(era, 'no_such_tool', {}))
  const numberName = call(era, 'get_project', { project }, { headers: era === 'modern' ? { 'mcp-name': '7' } : {} })
  ;(numberName.body.params as Record<string, unknown>).name = 7
  sdk('name not a string', numberName)
  sdk('arguments null', call(era, 'list_projects', null as never))
  sdk('arguments an array', call(era, 'list_projects', [] as never))
  sdk('a fractional id', call(era, 'get_project', { project }, { id: 1.5 }))
  sdk('an unsafe integer id', call(era, 'get_project', { project }, { id: 2 ** 53 }))
  sdk('a null id', call(era, 'get_project', { project }, { id: null }))
  sdk('content type with a charset', call(era, 'list_projects', {}, { headers: { 'content-type': 'application/json; charset=utf-8' } }))
  sdk('content type text/plain', call(era, 'list_projects', {}, { headers: { 'content-type': 'text/plain' } }))
  const extraParam = call(era, 'list_projects', {})
  ;(extraParam.body.params as Record<string, unknown>).task = { ttl: 1000 }
  sdk('an extra params member', extraParam)
  const extraMember = call(era, 'list_projects', {})
  ;(extraMember.body as Record<string, unknown>).extra = 1
  sdk('an extra message member', extraMember)
  const notification = call(era, 'list_projects', {})
  delete (notification.body as Record<string, unknown>).id
  sdk('no id (a notification)', notification)
  const proto = call(era, 'list_projects', {})
  sdk('a __proto__ argument', { headers: proto.headers, body: JSON.stringify(proto.body).replace('"arguments":{}', '"arguments":{"__proto__":{"x":1}}') })
  const tools = call(era, 'list_projects', {})
  ;(tools.body as Record<string, unknown>).method = 'tools/list'
  delete (tools.body.params as Record<string, unknown>).name
  delete (tools.body.params as Record<string, unknown>).arguments
  sdk('tools/list', { body: tools.body, headers: era === 'modern' ? { ...tools.headers, 'mcp-method': 'tools/list' } : tools.headers })
  sdk('a batch', { body: [call(era, 'list_projects', {}).body], headers: call(era, 'list_projects', {}).headers })
}
// 2025 revisions: every one served is the lane's; anything else (2024 ones included) is the SDK's.
for (const version of ['2025-06-18', '2025-03-26']) {
  cases.push({ label: `legacy: MCP-Protocol-Version ${version}`, ...call('legacy', 'get_project', { project }, { headers: { 'mcp-protocol-version': version } }), path: 'fast' })
}
const noHeader = call('legacy', 'get_project', { project })
delete (noHeader.headers as Record<string, string>)['mcp-protocol-version']
cases.push({ label: 'legacy: no MCP-Protocol-Version', ...noHeader, path: 'fast' })
for (const version of ['2024-01-01', '2024-11-05', '2024-10-07', '2025-11-24']) {
  cases.push({ label: `legacy: unsupported MCP-Protocol-Version ${version}`, ...call('legacy', 'get_project', { project }, { headers: { 'mcp-protocol-version': version } }), path: 'sdk' })
}
cases.push({ label: 'legacy: a 2026-07-28 header without the envelope', ...call('legacy', 'get_project', { project }, { headers: { 'mcp-protocol-version': '2026-07-28' } }), path: 'sdk' })
const legacyMeta = call('legacy', 'get_project', { project })
;(legacyMeta.body.params as Record<string, unknown>)._meta = { progressToken: 1 }
cases.push({ label: 'legacy: _meta with a progress token', ...legacyMeta, path: 'sdk' })
// 2026-07-28: the envelope and the standard headers.
const modern = (label: string, path: 'fast' | 'sdk', options: { meta?: unknown; headers?: Record<string, string> }) =>
  cases.push({ label: `modern: ${label}`, ...call('modern', 'get_project', { project }, options), path })
modern('client info', 'fast', { meta: { ...META, 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' } } })
modern('plain capabilities', 'fast', { meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { sampling: {}, elicitation: {}, roots: { listChanged: true } } } })
modern('roots without listChanged', 'fast', { meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { roots: {} } } })
// A host of MCP App views declares the extension in every request (routes/mcp-apps.ts).
const UI_EXTENSION = { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } }
const withExtensions = (extensions: unknown) => ({ meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { roots: {}, extensions } } })
modern('the MCP Apps extension declared', 'fast', withExtensions(UI_EXTENSION))
modern('extensions with flat settings of every kind', 'fast', withExtensions({ ...UI_EXTENSION, 'example.com/x': {}, 'example.com/y': { s: 's', n: 1.5, b: false, z: null, l: [] } }))
modern('no extension', 'fast', withExtensions({}))
modern('extensions not an object', 'sdk', withExtensions(['io.modelcontextprotocol/ui']))
modern('an extension whose settings are not an object', 'sdk', withExtensions({ 'io.modelcontextprotocol/ui': true }))
modern('extension settings that nest', 'sdk', withExtensions({ 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'], csp: { connectDomains: [] } } }))
modern('extension settings with a list of numbers', 'sdk', withExtensions({ 'example.com/x': { versions: [1, 2] } }))
modern('a __proto__ extension', 'sdk', withExtensions({ ['__proto__']: { x: 1 } }))
modern('capabilities not an object', 'sdk', { meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': 'all of them' } })
modern('no capabilities', 'sdk', { meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } })
modern('experimental capabilities', 'sdk', { meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { experimental: { x: {} } } } })
modern('a capability of the wrong type', 'sdk', { meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { roots: { listChanged: 'yes' } } } })
modern('client info with a title', 'sdk', { meta: { ...META, 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1', title: 'C' } } })
modern('client info without a version', 'sdk', { meta: { ...META, 'io.modelcontextprotocol/clientInfo': { name: 'c' } } })
modern('a progress token', 'sdk', { meta: { ...META, progressToken: 'p' } })
modern('a log level', 'sdk', { meta: { ...META, 'io.modelcontextprotocol/logLevel': 'debug' } })
modern('an unsupported revision', 'sdk', { meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' }, headers: { 'mcp-protocol-version': '2027-01-01' } })
modern('a 2025 header', 'sdk', { headers: { 'mcp-protocol-version': '2025-11-25' } })
modern('Mcp-Name names another tool', 'sdk', { headers: { 'mcp-name': 'list_projects' } })
modern('Mcp-Name in Base64', 'sdk', { headers: { 'mcp-name': `=?base64?${Buffer.from('get_project').toString('base64')}?=` } })
modern('Mcp-Name with a tab', 'sdk', { headers: { 'mcp-name': 'get_project\t' } })
modern('Mcp-Method names another method', 'sdk', { headers: { 'mcp-method': 'tools/list' } })
modern('Mcp-Method in upper case', 'sdk', { headers: { 'mcp-method': 'TOOLS/CALL' } })
for (const header of ['mcp-name', 'mcp-method', 'mcp-protocol-version']) {
  const c = call('modern', 'get_project', { project })
  delete (c.headers as Record<string, string>)[header]
  cases.push({ label: `modern: no ${header}`, ...c, path: 'sdk' })
}

async function send(app: FastifyInstance, c: Case) {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { host, ...bearer(c.key ?? ws.keys.service), 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...c.headers },
    payload: typeof c.body === 'string' ? c.body : JSON.stringify(c.body),
  })
  const { date: _date, ...headers } = res.headers
  return { status: res.statusCode, headers, bytes: res.rawPayload }
}

t.test('each request: the lane answers byte for byte as the SDK, or leaves it to the SDK', async (t) => {
  const answered = { fast: 0, sdk: 0 }
  for (const c of cases) {
    const before = { sdkOnly: { ...answeredBy.sdkOnly }, withLane: { ...answeredBy.withLane } }
    const viaSdk = await send(sdkOnly, c)
    t.same(answeredBy.sdkOnly, { ...before.sdkOnly, sdk: before.sdkOnly.sdk + 1 }, `${c.label}: with the lane off, the SDK answers`)
    const viaLane = await send(withLane, c)
    const { fast, sdk } = answeredBy.withLane
    const path = fast - before.withLane.fast === 1 && sdk === before.withLane.sdk ? 'fast' : sdk - before.withLane.sdk === 1 && fast === before.withLane.fast ? 'sdk' : 'neither'
    answered[path === 'fast' ? 'fast' : 'sdk']++
    t.equal(path, c.path, `${c.label}: answered by ${c.path === 'fast' ? 'the lane' : 'the SDK'}`)
    t.equal(viaLane.status, viaSdk.status, `${c.label}: status ${viaSdk.status}`)
    t.strictSame(viaLane.headers, viaSdk.headers, `${c.label}: headers`)
    t.equal(viaLane.headers['content-type'], viaSdk.headers['content-type'], `${c.label}: content-type ${viaSdk.headers['content-type']}`)
    if (!viaLane.bytes.equals(viaSdk.bytes)) {
      t.fail(`${c.label}: body bytes`, { found: viaLane.bytes.toString(), wanted: viaSdk.bytes.toString() })
    } else t.pass(`${c.label}: body bytes`)
  }
  t.ok(answered.fast >= 70 && answered.sdk >= 50, `both paths exercised: ${JSON.stringify(answered)}`)
})

t.test('the corpus holds successes and tool errors of both eras', async (t) => {
  // A guard on the corpus itself: a lane that answered only errors would pass the test above.
  const isError = async (c: Case) => ((JSON.parse((await send(withLane, c)).bytes.toString()) as { result?: { isError?: boolean } }).result?.isError)
  for (const era of ['legacy', 'modern'] as const) {
    t.equal(await isError({ label: '', ...call(era, 'get_daily_ops', { project, window: '30d' }), path: 'fast' }), undefined, `${era}: a success`)
    t.equal(await isError({ label: '', ...call(era, 'get_daily_ops', { project: 'nope' }), path: 'fast' }), true, `${era}: a tool error`)
    // The tricky text comes back in successful results (escaped in the text, as is in structuredContent).
    for (const [name, args] of [['list_opportunities', { project, type: 'tricky' }], ['list_memories', { project }], ['get_project', { project }]] as const) {
      const reply = JSON.parse((await send(withLane, { label: '', ...call(era, name, args), path: 'fast' })).bytes.toString()) as { result: { isError?: boolean; structuredContent: unknown } }
      t.equal(reply.result.isError, undefined, `${era}: ${name} succeeds`)
      t.ok(JSON.stringify(reply.result.structuredContent).includes(JSON.stringify(tricky).slice(1, -1)), `${era}: ${name} returns the tricky text`)
    }
  }
})

t.test('a disabled tool is the SDK\'s -32602, in both eras', async (t) => {
  for (const app of [sdkOnly, withLane]) {
    await app.repos.workspaces.setToolEnabled(ws.workspace.id, 'get_overview', false)
    t.teardown(() => app.repos.workspaces.setToolEnabled(ws.workspace.id, 'get_overview', true))
  }
  for (const era of ['legacy', 'modern'] as const) {
    const c: Case = { label: era, ...call(era, 'get_overview', { project }), path: 'sdk' }
    const viaSdk = await send(sdkOnly, c)
    const { fast, sdk } = answeredBy.withLane
    const viaLane = await send(withLane, c)
    t.same(answeredBy.withLane, { fast, sdk: sdk + 1 }, `${era}: answered by the SDK`)
    t.equal(viaLane.status, viaSdk.status)
    t.ok(viaLane.bytes.equals(viaSdk.bytes), `${era}: the same bytes`)
    t.match(JSON.parse(viaLane.bytes.toString()), { error: { code: -32602 } })
  }
})
