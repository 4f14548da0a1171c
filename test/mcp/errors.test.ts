// Errors that lead somewhere: an unknown tool names the closest tools and discover_tools, with the
// same message on REST and on MCP (both eras, the fast lane on and off); an unsupported
// MCP-Protocol-Version lists exactly the revisions served, 2026-07-28 included, and echoes the
// request's id.
import t from 'tap'
import { bearer, buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { SERVED_PROTOCOL_VERSIONS } from '../../routes/mcp-era.ts'

const apps = { 'fast lane': await buildTestApp(t), 'SDK only': await buildTestApp(t, { mcpFastLane: false }) }

const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }

for (const [lane, app] of Object.entries(apps)) {
  const ws = await seedWorkspace(app)
  const headers = { ...bearer(ws.keys.service), host: '127.0.0.1:3000', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const mcp = async (body: Record<string, unknown>, extra: Record<string, string>) => {
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: { ...headers, ...extra }, payload: { jsonrpc: '2.0', ...body } })
    return { status: res.statusCode, body: res.json() as { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } } }
  }
  const call2025 = (id: number, name: string) => mcp({ id, method: 'tools/call', params: { name, arguments: {} } }, { 'mcp-protocol-version': '2025-11-25' })
  const call2026 = (id: number, name: string) => mcp({ id, method: 'tools/call', params: { name, arguments: {}, _meta: META } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name })

  t.test(`${lane}: an unknown tool names the closest tools and discover_tools, on REST and MCP alike`, async (t) => {
    for (const [wanted, closest] of [['get_metrics', 'get_daily_ops'], ['list_opportunity', 'list_opportunities'], ['delete_memory', 'forget_memory'], ['reviewopportunity', 'review_opportunity']] as const) {
      const rest = await app.inject({ method: 'POST', url: `/v1/tools/${wanted}`, headers: bearer(ws.keys.service), payload: {} })
      t.equal(rest.statusCode, 404)
      const message = rest.json().error.message as string
      t.match(message, new RegExp(`^There is no tool named '${wanted}'\\. Closest: ${closest}[,.]`), `${wanted}: ${closest} first`)
      t.match(message, /Call discover_tools/, 'and discover_tools')
      const contract = await app.inject({ method: 'GET', url: `/v1/tools/${wanted}`, headers: bearer(ws.keys.service) })
      t.equal(contract.json().error.message, message, 'GET /v1/tools/<name>: the same message')
      for (const [era, res] of [['2025-11-25', await call2025(7, wanted)], ['2026-07-28', await call2026(8, wanted)]] as const) {
        t.equal(res.body.error?.code, -32602, `${era}: -32602`)
        t.equal(res.body.error?.message, message, `${era}: REST's message`)
        t.equal(res.body.id, era === '2025-11-25' ? 7 : 8, `${era}: the id`)
      }
    }
    const nothingClose = await app.inject({ method: 'POST', url: '/v1/tools/zzz', headers: bearer(ws.keys.service), payload: {} })
    t.equal(nothingClose.json().error.message, "There is no tool named 'zzz'. Call discover_tools (optionally with a query) to find the tool for a task.")
  })

  t.test(`${lane}: a disabled tool says so, and offers the others`, async (t) => {
    await app.repos.workspaces.setToolEnabled(ws.workspace.id, 'get_overview', false)
    t.teardown(() => app.repos.workspaces.setToolEnabled(ws.workspace.id, 'get_overview', true))
    const rest = await app.inject({ method: 'POST', url: '/v1/tools/get_overview', headers: bearer(ws.keys.service), payload: {} })
    const message = rest.json().error.message as string
    t.match(message, /^There is no tool named 'get_overview' enabled in this workspace\. .*discover_tools/)
    t.notMatch(message, /Closest: [^.]*get_overview/, 'the disabled tool is not offered')
    t.equal((await call2025(9, 'get_overview')).body.error?.message, message)
  })

  t.test(`${lane}: an unsupported MCP-Protocol-Version lists the served revisions and echoes the id`, async (t) => {
    t.strictSame(SERVED_PROTOCOL_VERSIONS, ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'])
    for (const version of ['1999-01-01', '2024-11-05', '2024-10-07', '2025-01-01']) {
      for (const [id, body] of [[21, { method: 'tools/list' }], ['call-22', { method: 'tools/call', params: { name: 'get_overview', arguments: { project: ws.project.slug } } }]] as const) {
        const res = await mcp({ id, ...body }, { 'mcp-protocol-version': version })
        t.equal(res.status, 400, `${version} ${body.method}: 400`)
        t.equal(res.body.id, id, `${version} ${body.method}: the request's id`)
        t.equal(res.body.error?.code, -32022)
        t.strictSame(res.body.error?.data, { supported: SERVED_PROTOCOL_VERSIONS, requested: version })
        t.match(res.body.error?.message, `Unsupported protocol version: ${version}. This server serves 2026-07-28, 2025-11-25, 2025-06-18, 2025-03-26.`)
      }
    }
    const batch = await mcp({ id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '1999-01-01' }).then(async () =>
      app.inject({ method: 'POST', url: '/mcp', headers: { ...headers, 'mcp-protocol-version': '1999-01-01' }, payload: [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 2, method: 'ping' }] }))
    t.equal(batch.statusCode, 400)
    t.equal(batch.json().id, null, 'a batch has no one id to echo')
    // A 2026-07-28 envelope naming an unknown revision: the 2026-07-28 error, whose `supported`
    // is what server/discover says (that revision's rule), with the id.
    const modern = await mcp({ id: 23, method: 'tools/list', params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2030-01-01' } } }, { 'mcp-protocol-version': '2030-01-01', 'mcp-method': 'tools/list' })
    t.equal(modern.status, 400)
    t.equal(modern.body.id, 23)
    t.equal(modern.body.error?.code, -32022)
    const discover = await mcp({ id: 24, method: 'server/discover', params: { _meta: META } }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' })
    t.strictSame(modern.body.error?.data?.supported, discover.body.result?.supportedVersions)
  })

  t.test(`${lane}: initialize negotiates a served revision`, async (t) => {
    for (const [asked, got] of [['2025-06-18', '2025-06-18'], ['2024-11-05', '2025-11-25'], ['1999-01-01', '2025-11-25']]) {
      const res = await mcp({ id: 1, method: 'initialize', params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 't', version: '1' } } }, {})
      t.equal(res.body.result?.protocolVersion, got, `${asked} → ${got}`)
    }
  })
}
