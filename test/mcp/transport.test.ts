// The MCP endpoint at the HTTP level, with plain fetch and http.request: protocol versions,
// Accept and protocol headers, methods, credentials, DNS-rebinding protection, CORS.
import t from 'tap'
import http from 'node:http'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'

const { app, url } = await listenTestApp(t)
const ws = await seedWorkspace(app)
const endpoint = `${url}/mcp`

const JSON_AND_SSE = 'application/json, text/event-stream'
let nextId = 1

function initialize(protocolVersion: string) {
  return {
    jsonrpc: '2.0',
    id: nextId++,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw-fetch', version: '1.0.0' } },
  }
}

function post(body: unknown, headers: Record<string, string> = {}) {
  return fetch(endpoint, {
    method: 'POST',
    headers: { ...bearer(ws.keys.service), 'content-type': 'application/json', accept: JSON_AND_SSE, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
}

/** A raw HTTP request, for headers fetch will not let us set (Host). */
function rawRequest(options: { method: string; path: string; headers: Record<string, string>; body?: string }) {
  const { port } = new URL(url)
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: options.method, path: options.path, headers: options.headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(options.body)
  })
}

t.test('initialize answers each 2025 protocol version with that version', async (t) => {
  for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
    for (const accept of ['application/json', JSON_AND_SSE]) {
      const res = await post(initialize(version), { accept })
      t.equal(res.status, 200, `${version}, Accept: ${accept}`)
      t.match(res.headers.get('content-type'), /^application\/json/, 'a JSON response, not a stream')
      t.notOk(res.headers.get('mcp-session-id'), 'stateless: no session')
      const body = await res.json()
      t.equal(body.jsonrpc, '2.0')
      t.equal(body.result?.protocolVersion, version, `${version}, Accept: ${accept}: protocolVersion`)
      t.match(body.result?.serverInfo, { name: 'growthdesk' })
    }
  }
})

t.test('stateless: a request needs no initialize before it', async (t) => {
  const res = await post({ jsonrpc: '2.0', id: 7, method: 'tools/list' }, { 'mcp-protocol-version': '2025-06-18' })
  t.equal(res.status, 200)
  const body = await res.json()
  t.equal(body.id, 7)
  t.ok(body.result.tools.some((x: { name: string }) => x.name === 'get_daily_ops'))
})

t.test('an unsupported MCP-Protocol-Version after initialize is 400', async (t) => {
  const init = await post(initialize('2025-06-18'))
  t.equal(init.status, 200)
  const res = await post({ jsonrpc: '2.0', id: nextId++, method: 'tools/list' }, { 'mcp-protocol-version': '1999-01-01' })
  t.equal(res.status, 400)
  const body = await res.json()
  t.equal(body.jsonrpc, '2.0')
  t.match(body.error.message, /1999-01-01/)
})

t.test('notifications/initialized is accepted with 202 and no body', async (t) => {
  const res = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': '2025-06-18' })
  t.equal(res.status, 202)
  t.equal(await res.text(), '')
})

t.test('GET and DELETE are 405 with Allow: POST', async (t) => {
  for (const method of ['GET', 'DELETE']) {
    const res = await fetch(endpoint, { method, headers: { ...bearer(ws.keys.service), accept: 'text/event-stream' } })
    t.equal(res.status, 405, method)
    t.equal(res.headers.get('allow'), 'POST', `${method}: Allow`)
    t.equal((await res.json()).error.code, 'method_not_allowed')
  }
})

t.test('credentials', async (t) => {
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
  const metadata = `resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`

  const none = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json', accept: JSON_AND_SSE }, body: JSON.stringify(list) })
  t.equal(none.status, 401, 'no key')
  const challenge = none.headers.get('www-authenticate') ?? ''
  t.match(challenge, /^Bearer /)
  t.ok(challenge.includes(metadata), `WWW-Authenticate names the metadata: ${challenge}`)
  t.equal((await none.json()).error.code, 'unauthorized')

  const ingest = await post(list, bearer(ws.keys.ingest))
  t.equal(ingest.status, 401, 'an ingest key is refused')
  t.ok(ingest.headers.get('www-authenticate')?.includes(metadata))
  t.match((await ingest.json()).error.message, /ingest key/)

  const garbage = await post(list, { authorization: 'Bearer gds_notarealkey' })
  t.equal(garbage.status, 401, 'a malformed key')

  for (const [kind, key] of [['mcp', ws.keys.mcp], ['service', ws.keys.service]] as const) {
    const res = await post(list, bearer(key))
    t.equal(res.status, 200, `${kind} key accepted`)
    t.ok((await res.json()).result.tools.length > 0)
  }
})

t.test('malformed JSON is HTTP 400 with a JSON-RPC parse error', async (t) => {
  const res = await post('{"jsonrpc": "2.0", "id": 1, "method": ')
  t.equal(res.status, 400)
  const body = await res.json()
  t.equal(body.jsonrpc, '2.0')
  t.equal(body.error.code, -32700)
  const notRpc = await post({ hello: 'world' })
  t.equal(notRpc.status, 400, 'valid JSON that is not JSON-RPC')
  t.equal((await notRpc.json()).error.code, -32600, 'parses, so an invalid request rather than a parse error')
  const empty = await post('')
  t.equal(empty.status, 400, 'an empty body')
  t.equal((await empty.json()).error.code, -32700)
})

t.test('a body that is not declared JSON is 415, whether it parses or not', async (t) => {
  for (const body of [JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), 'not json']) {
    const res = await post(body, { 'content-type': 'text/plain' })
    t.equal(res.status, 415, body)
    t.equal((await res.json()).jsonrpc, '2.0')
  }
})

t.test('Origin and Host: DNS-rebinding protection', async (t) => {
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' }
  const foreign = await post(list, { origin: 'https://evil.example' })
  t.equal(foreign.status, 403, 'a foreign Origin')
  t.equal((await foreign.json()).error.code, 'forbidden')
  t.notOk(foreign.headers.get('access-control-allow-origin'), 'and no CORS grant for it')

  const own = await post(list, { origin: url })
  t.equal(own.status, 200, 'PUBLIC_URL’s own origin')
  t.equal(own.headers.get('access-control-allow-origin'), url)

  const common = { ...bearer(ws.keys.service), 'content-type': 'application/json', accept: JSON_AND_SSE }
  const body = JSON.stringify(list)
  const foreignHost = await rawRequest({ method: 'POST', path: '/mcp', headers: { ...common, host: 'evil.example' }, body })
  t.equal(foreignHost.status, 403, 'a Host that is not PUBLIC_URL’s')
  t.equal(JSON.parse(foreignHost.body).error.code, 'forbidden')
  const rebound = await rawRequest({ method: 'POST', path: '/mcp', headers: { ...common, host: `evil.example:${new URL(url).port}` }, body })
  t.equal(rebound.status, 403, 'a foreign name on our port')
  const ownHost = await rawRequest({ method: 'POST', path: '/mcp', headers: { ...common, host: new URL(url).host }, body })
  t.equal(ownHost.status, 200, 'PUBLIC_URL’s host')
  const alias = await rawRequest({ method: 'POST', path: '/mcp', headers: { ...common, host: `localhost:${new URL(url).port}` }, body })
  t.equal(alias.status, 200, 'a loopback alias of a loopback PUBLIC_URL')
})

t.test('CORS: the preflight is allowed and WWW-Authenticate is exposed', async (t) => {
  const preflight = await fetch(endpoint, {
    method: 'OPTIONS',
    headers: {
      origin: url,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name',
    },
  })
  t.ok(preflight.status === 204 || preflight.status === 200, `preflight status ${preflight.status}`)
  t.equal(preflight.headers.get('access-control-allow-origin'), url)
  t.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/)
  const allowedHeaders = (preflight.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(/\s*,\s*/)
  // Mcp-Method and Mcp-Name: a 2026-07-28 client sends them on every request.
  for (const h of ['authorization', 'content-type', 'mcp-protocol-version', 'mcp-method', 'mcp-name']) t.ok(allowedHeaders.includes(h), `allows ${h}`)

  const denied = await fetch(endpoint, {
    method: 'OPTIONS',
    headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
  })
  t.notOk(denied.headers.get('access-control-allow-origin'), 'no grant to a foreign origin')

  const unauthorized = await fetch(endpoint, {
    method: 'POST',
    headers: { origin: url, 'content-type': 'application/json', accept: JSON_AND_SSE },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })
  t.equal(unauthorized.status, 401)
  t.equal(unauthorized.headers.get('access-control-allow-origin'), url)
  const exposed = (unauthorized.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/)
  t.ok(exposed.includes('www-authenticate'), `exposes WWW-Authenticate: ${exposed.join(', ')}`)
})
