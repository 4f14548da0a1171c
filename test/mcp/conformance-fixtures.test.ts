// The conformance fixtures (routes/mcp-conformance.ts) behind MCP_CONFORMANCE_FIXTURES: absent by
// default; with the switch on, beside growthdesk's own tools, with 2025 sessions whose server
// requests (sampling, elicitation) reach the client on the call's own stream. `npm run
// conformance` runs the official suites against them (every scored scenario).
import t from 'tap'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }

async function post(url: string, key: string, body: Record<string, unknown>, headers: Record<string, string>) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({ jsonrpc: '2.0', ...body }),
  })
  return { status: res.status, session: res.headers.get('mcp-session-id'), body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; data?: unknown } } }
}

t.test('off by default: no fixture, no session', async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const list = await post(url, ws.keys.service, { id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2025-11-25' })
  t.notOk((list.body.result?.tools as { name: string }[]).some((x) => x.name.startsWith('test_')), 'no test_ tools')
  const call = await post(url, ws.keys.service, { id: 2, method: 'tools/call', params: { name: 'test_simple_text', arguments: {} } }, { 'mcp-protocol-version': '2025-11-25' })
  t.equal(call.body.error?.code, -32602, 'test_simple_text is an unknown tool')
  const init = await post(url, ws.keys.service, { id: 3, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, {})
  t.equal(init.session, null, 'the endpoint stays stateless')
})

t.test('on: the fixtures beside growthdesk\'s tools, in both eras', async (t) => {
  const { app, url } = await listenTestApp(t, { config: { conformanceFixtures: true } })
  const ws = await seedWorkspace(app)
  const client = new ClientV1({ name: 'fixtures-v1', version: '1.0.0' }, { capabilities: { sampling: {}, elicitation: {} } })
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test' }))
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { response: 'yes' } }))
  const logs: unknown[] = []
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (n) => {
    logs.push(n.params.data)
  })
  const transport = new TransportV1(new URL(`${url}/mcp`), { requestInit: { headers: bearer(ws.keys.service) } })
  await client.connect(transport)
  t.teardown(() => client.close())
  t.match(transport.sessionId, /^[0-9a-f-]{36}$/, '2025: a session')
  const names = (await client.listTools()).tools.map((x) => x.name)
  t.ok(names.includes('get_overview') && names.includes('test_sampling'), 'growthdesk\'s tools and the fixtures')
  t.strictSame(await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } }), { content: [{ type: 'text', text: 'LLM response: Paris' }] }, 'sampling reaches the client mid-call')
  t.match(await client.callTool({ name: 'test_elicitation', arguments: { message: 'Sure?' } }), { content: [{ text: 'User response: action=accept, content={"response":"yes"}' }] }, 'so does elicitation')
  await client.callTool({ name: 'test_tool_with_logging', arguments: {} })
  t.strictSame(logs, ['Tool execution started', 'Tool processing data', 'Tool execution completed'], 'log notifications on the stream')
  const project = await client.callTool({ name: 'get_project', arguments: { project: ws.project.slug } })
  t.match(project.structuredContent, { slug: ws.project.slug }, 'growthdesk\'s tools in the session')

  const noSampling = await post(url, ws.keys.service, { id: 5, method: 'tools/call', params: { name: 'test_missing_capability', arguments: {}, _meta: META } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'test_missing_capability' })
  t.equal(noSampling.status, 400, '2026-07-28: a capability the client lacks is HTTP 400')
  t.match(noSampling.body.error, { code: -32021, data: { requiredCapabilities: { sampling: {} } } })
  const asked = await post(url, ws.keys.service, { id: 6, method: 'tools/call', params: { name: 'test_input_required_result_elicitation', arguments: {}, _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } } } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'test_input_required_result_elicitation' })
  t.match(asked.body.result, { resultType: 'input_required', inputRequests: { user_name: { method: 'elicitation/create' } } }, '2026-07-28: an input_required result')
})
