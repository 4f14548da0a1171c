// The era shortcut (routes/mcp-era.ts): wherever it names an era, the SDK's own classifier
// (`isLegacyRequest`, what createMcpHandler routes by) must name the same one, and the common
// calls of both eras must be decided by it. Then over HTTP: the era follows the body, header and
// body mismatches are still the SDK's errors, and the Web Request kept per header set never
// answers for another header set.
import t from 'tap'
import { isLegacyRequest } from '@modelcontextprotocol/server'
import { certainEra, PROTOCOL_VERSION_META_KEY } from '../../routes/mcp-era.ts'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'

const envelope = (version: unknown = '2026-07-28') => ({ [PROTOCOL_VERSION_META_KEY]: version, 'io.modelcontextprotocol/clientCapabilities': {} })
const call = { name: 'list_projects', arguments: {} }
const messages: Record<string, unknown> = {
  '2025 tools/call': { jsonrpc: '2.0', id: 1, method: 'tools/call', params: call },
  '2025 tools/call, string id': { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: call },
  '2025 tools/list, no params': { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  '2025 notification': { jsonrpc: '2.0', method: 'notifications/initialized' },
  '2025 initialize': { jsonrpc: '2.0', id: 3, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } } },
  '2025 _meta without a claim': { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { ...call, _meta: { progressToken: 7 } } },
  '2025 _meta, bad progress token': { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { ...call, _meta: { progressToken: {} } } },
  '2026 tools/call': { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { ...call, _meta: envelope() } },
  '2026 notification': { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: envelope() } },
  '2026 claim, invalid envelope': { jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: { [PROTOCOL_VERSION_META_KEY]: '2026-07-28' } } },
  'claim naming a 2025 revision': { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: envelope('2025-11-25') } },
  'claim that is not a string': { jsonrpc: '2.0', id: 8, method: 'tools/list', params: { _meta: envelope(20260728) } },
  'initialize with a 2026 claim': { jsonrpc: '2.0', id: 9, method: 'initialize', params: { _meta: envelope() } },
  'initialize with a 2025 claim': { jsonrpc: '2.0', id: 9, method: 'initialize', params: { _meta: envelope('2025-11-25') } },
  'claim, jsonrpc 1.0': { jsonrpc: '1.0', id: 10, method: 'tools/list', params: { _meta: envelope() } },
  'claim, an extra member': { jsonrpc: '2.0', id: 10, method: 'tools/list', params: { _meta: envelope() }, extra: 1 },
  'jsonrpc 1.0': { jsonrpc: '1.0', id: 11, method: 'tools/list' },
  'no jsonrpc': { id: 11, method: 'tools/list' },
  'an extra member': { jsonrpc: '2.0', id: 12, method: 'tools/list', extra: true },
  'a fractional id': { jsonrpc: '2.0', id: 1.5, method: 'tools/list' },
  'a null id': { jsonrpc: '2.0', id: null, method: 'tools/list' },
  'an object id': { jsonrpc: '2.0', id: {}, method: 'tools/list' },
  'params an array': { jsonrpc: '2.0', id: 13, method: 'tools/list', params: [] },
  'params a string': { jsonrpc: '2.0', id: 13, method: 'tools/list', params: 'x' },
  '_meta an array': { jsonrpc: '2.0', id: 14, method: 'tools/list', params: { _meta: [] } },
  'method not a string': { jsonrpc: '2.0', id: 15, method: 7 },
  'a result': { jsonrpc: '2.0', id: 16, result: {} },
  'an error': { jsonrpc: '2.0', id: 17, error: { code: 1, message: 'm' } },
  'a batch': [{ jsonrpc: '2.0', id: 18, method: 'tools/list' }],
  'a batch with a claim': [{ jsonrpc: '2.0', id: 18, method: 'tools/list', params: { _meta: envelope() } }],
  'a string': 'tools/list',
  null: null,
}
const versionHeaders = [undefined, '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2026-07-28', '2027-01-01', ' 2025-11-25', '2025-11-25 ', '2025-11-25, 2025-11-25', 'latest', '']

t.test('where certainEra decides, the SDK decides the same', async (t) => {
  let decided = 0
  for (const [label, message] of Object.entries(messages)) {
    for (const version of versionHeaders) {
      for (const mcpMethod of [undefined, 'tools/list', 'initialize']) {
        const headers = new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' })
        if (version !== undefined) headers.set('mcp-protocol-version', version)
        if (mcpMethod !== undefined) headers.set('mcp-method', mcpMethod)
        const era = certainEra(message, version)
        const legacy = await isLegacyRequest(new Request('http://localhost/mcp', { method: 'POST', headers }), message)
        if (era === undefined) continue
        decided++
        t.equal(era, legacy ? 'legacy' : 'modern', `${label}, MCP-Protocol-Version ${JSON.stringify(version)}, Mcp-Method ${JSON.stringify(mcpMethod)}`)
      }
    }
  }
  t.ok(decided > 100, `decided ${decided} of the cases`)
})

t.test('the everyday calls of both eras are decided without the SDK', async (t) => {
  t.equal(certainEra(messages['2025 tools/call'], '2025-11-25'), 'legacy')
  t.equal(certainEra(messages['2025 tools/call'], undefined), 'legacy')
  t.equal(certainEra(messages['2025 initialize'], undefined), 'legacy')
  t.equal(certainEra(messages['2025 notification'], '2025-06-18'), 'legacy')
  t.equal(certainEra(messages['2026 tools/call'], '2026-07-28'), 'modern')
  // The body decides, as in the SDK: a claim with a mismatched header is the modern path's error.
  t.equal(certainEra(messages['2026 tools/call'], '2025-11-25'), 'modern')
  t.equal(certainEra(messages['2026 tools/call'], undefined), 'modern')
  // Left to the SDK: a 2025 body under a 2026 header (the modern path's -32602), initialize
  // with a claim, anything not plainly well formed.
  t.equal(certainEra(messages['2025 tools/call'], '2026-07-28'), undefined)
  t.equal(certainEra(messages['initialize with a 2026 claim'], '2026-07-28'), undefined)
  t.equal(certainEra(messages['2025 _meta without a claim'], '2025-11-25'), undefined)
  t.equal(certainEra(messages['an extra member'], '2025-11-25'), undefined)
})

t.test('over HTTP', async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const post = async (body: unknown, headers: Record<string, string>) => {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { ...bearer(ws.keys.service), 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json()) as { id?: unknown; result?: { isError?: boolean; structuredContent?: unknown }; error?: { code: number; message: string } } }
  }
  const modernCall = (id: number, name = 'list_projects') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, _meta: envelope() } })
  const legacyCall = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_projects', arguments: {} } })
  const h26 = (name: string) => ({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name })

  const a = await post(modernCall(1), h26('list_projects'))
  t.equal(a.status, 200, '2026-07-28: served')
  t.notOk(a.body.result?.isError)
  const b = await post(legacyCall(2), { 'mcp-protocol-version': '2025-11-25' })
  t.equal(b.status, 200, '2025-11-25: served')
  t.strictSame(b.body.result?.structuredContent, a.body.result?.structuredContent, 'the same result')

  // Header and body disagree: the body's era answers, with the SDK's errors.
  const legacyUnderModernHeader = await post(legacyCall(3), { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' })
  t.equal(legacyUnderModernHeader.status, 400)
  t.equal(legacyUnderModernHeader.body.error?.code, -32602, 'a 2026-07-28 header without the envelope')
  t.equal(legacyUnderModernHeader.body.id, 3)
  const modernUnderLegacyHeader = await post(modernCall(4), { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/call', 'mcp-name': 'list_projects' })
  t.equal(modernUnderLegacyHeader.status, 400)
  t.equal(modernUnderLegacyHeader.body.error?.code, -32020, 'the envelope and the header name different revisions')
  t.equal(modernUnderLegacyHeader.body.id, 4)
  const modernWithoutHeader = await post(modernCall(5), { 'mcp-method': 'tools/call', 'mcp-name': 'list_projects' })
  t.equal(modernWithoutHeader.status, 400, 'the envelope needs the MCP-Protocol-Version header')
  t.equal(modernWithoutHeader.body.id, 5)

  // One header set, one Request: a different Mcp-Name is checked against its own header.
  const wrongName = await post(modernCall(6), h26('get_overview'))
  t.equal(wrongName.status, 400, 'Mcp-Name names another tool')
  t.equal(wrongName.body.error?.code, -32020)
  const again = await post(modernCall(7), h26('list_projects'))
  t.equal(again.status, 200, 'the first header set still serves')
  const wrongAgain = await post(modernCall(8), h26('get_overview'))
  t.equal(wrongAgain.status, 400, 'and the second is still refused')
  const noName = await post(modernCall(9), { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' })
  t.equal(noName.status, 400, 'no Mcp-Name')
})
