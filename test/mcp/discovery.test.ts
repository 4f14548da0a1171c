// OAuth discovery for MCP clients (RFC 9728, RFC 8414): the documents a client follows from
// a 401 on /mcp must point at each other exactly.
import t from 'tap'
import { listenTestApp } from '../helpers/app.ts'

const { url } = await listenTestApp(t)

async function document(path: string) {
  const res = await fetch(`${url}${path}`)
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`)
  return (await res.json()) as Record<string, unknown>
}

const server = await document('/.well-known/oauth-authorization-server')

t.test('the authorization server metadata', async (t) => {
  t.equal(server.issuer, url, 'issuer is PUBLIC_URL')
  t.notOk(String(server.issuer).endsWith('/'), 'no trailing slash')
  t.strictSame(server.code_challenge_methods_supported, ['S256'])
  for (const endpoint of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint']) {
    t.ok(String(server[endpoint]).startsWith(`${url}/`), `${endpoint} is under PUBLIC_URL`)
  }
})

for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
  t.test(path, async (t) => {
    const resource = await document(path)
    t.equal(resource.resource, `${url}/mcp`, 'resource is the MCP endpoint')
    const servers = resource.authorization_servers as string[]
    t.ok(Array.isArray(servers) && servers.length > 0)
    t.equal(servers[0], server.issuer, 'authorization_servers[0] is byte-identical to the issuer')
    t.notOk(servers[0]!.endsWith('/'), 'no trailing slash')
    t.ok((resource.bearer_methods_supported as string[]).includes('header'))
  })
}

t.test('a 401 on /mcp leads to these documents', async (t) => {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  })
  t.equal(res.status, 401)
  const found = /resource_metadata="([^"]+)"/.exec(res.headers.get('www-authenticate') ?? '')?.[1]
  t.equal(found, `${url}/.well-known/oauth-protected-resource/mcp`)
  const followed = await fetch(found!)
  t.equal(followed.status, 200)
  t.equal((await followed.json()).resource, `${url}/mcp`)
})
