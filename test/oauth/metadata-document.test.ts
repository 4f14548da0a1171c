// OAuth with a Client ID Metadata Document: the client_id is the URL of a JSON document the
// server fetches (here from a loopback server, so the app runs with
// oauthClientMetadataPrivateNetwork, which also allows http). Then what is refused, and that a
// refused document leaves nothing behind; RFC 9207 `iss`; the metadata the clients read.
import t from 'tap'
import http from 'node:http'
import { createHash, randomBytes } from 'node:crypto'
import { bearer, freePort, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { REDIRECT, consent } from './helpers.ts'
import { METADATA_MAX_BYTES, METADATA_TIMEOUT_MS } from '../../routes/oauth-client-metadata.ts'
import { isPrivateAddress } from '../../core/addresses.ts'

// The client's own web server: documents by path.
const docs = new Map<string, { status?: number; body: string }>()
let fetches = 0
const docPort = await freePort()
const docServer = http.createServer((req, res) => {
  fetches++
  if (req.url === '/slow/drip.json') {
    // A valid document, a byte every 100 ms for 15 s: no idle timeout ever fires.
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write(`{"client_id":"${docUrl('/slow/drip.json')}","redirect_uris":["${REDIRECT}"]`)
    const started = Date.now()
    const timer = setInterval(() => {
      if (Date.now() - started < 15_000) res.write(' ')
      else {
        clearInterval(timer)
        res.end('}')
      }
    }, 100)
    res.on('close', () => clearInterval(timer))
    return
  }
  if (req.url === '/slow/silent.json') return // never answers
  const doc = docs.get(req.url ?? '')
  res.writeHead(doc?.status ?? (doc ? 200 : 404), { 'content-type': 'application/json' }).end(doc?.body ?? '{}')
})
await new Promise<void>((resolve) => docServer.listen(docPort, '127.0.0.1', resolve))
t.teardown(() => new Promise<void>((resolve) => {
  docServer.close(() => resolve())
  docServer.closeAllConnections()
}))
const docUrl = (path: string) => `http://127.0.0.1:${docPort}${path}`
const serve = (path: string, doc: unknown, status?: number) => docs.set(path, { body: typeof doc === 'string' ? doc : JSON.stringify(doc), status })

const { app, url } = await listenTestApp(t, { config: { oauthClientMetadataPrivateNetwork: true } })
const ws = await seedWorkspace(app)
const verifier = randomBytes(32).toString('base64url')
const challenge = createHash('sha256').update(verifier).digest('base64url')
const authorizeUrl = (base: string, clientId: string, extra: Record<string, string> = {}) => {
  const u = new URL(`${base}/oauth/authorize`)
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 's1', resource: `${base}/mcp`, ...extra })) u.searchParams.set(k, v)
  return u.toString()
}

t.test('the metadata says what clients of 2026 look for', async (t) => {
  const as = (await app.inject({ url: '/.well-known/oauth-authorization-server' })).json()
  t.equal(as.client_id_metadata_document_supported, true)
  t.equal(as.authorization_response_iss_parameter_supported, true)
  t.ok(as.registration_endpoint, 'dynamic registration stays')
  const prm = (await app.inject({ url: '/.well-known/oauth-protected-resource/mcp' })).json()
  t.ok(prm.scopes_supported.length > 0)
  t.ok(prm.scopes_supported.every((s: string) => as.scopes_supported.includes(s)), 'resource scopes ⊆ authorization server scopes')
})

t.test('a metadata-document client completes the flow and calls MCP', async (t) => {
  const clientId = docUrl('/oauth/client.json')
  serve('/oauth/client.json', { client_id: clientId, client_name: 'Doc Client', redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' })
  const answer = await consent(url, authorizeUrl(url, clientId), ws.user.email, ws.user.password)
  t.match(answer.consentHtml, /Doc Client/, 'the consent names the document\'s client_name')
  t.equal(answer.status, 302)
  const back = new URL(answer.location!)
  t.equal(back.searchParams.get('iss'), url, 'RFC 9207: iss in the authorization response')
  t.equal(back.searchParams.get('state'), 's1')
  const code = back.searchParams.get('code')!
  t.ok(code)

  const token = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', client_id: clientId, code, redirect_uri: REDIRECT, code_verifier: verifier, resource: `${url}/mcp` }),
  })
  t.equal(token.status, 200)
  const tokens = await token.json()
  t.match(tokens.access_token, /^gdo_/)

  const mcp = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...bearer(tokens.access_token), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
  })
  t.equal(mcp.status, 200)
  t.ok((await mcp.json()).result.tools.length > 5, 'the token opens /mcp')

  const refreshed = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', client_id: clientId, refresh_token: tokens.refresh_token }),
  })
  t.equal(refreshed.status, 200, 'refresh works for the document client')

  const before = fetches
  await fetch(authorizeUrl(url, clientId), { redirect: 'manual' })
  t.equal(fetches, before, 'the document is cached, not fetched again')
})

t.test('bad documents are refused with a clear page, and leave no client behind', async (t) => {
  const cases: [string, unknown, RegExp, number?][] = [
    ['/bad/other-id.json', { client_id: 'https://elsewhere.example/client.json', redirect_uris: [REDIRECT] }, /client_id is not the URL/],
    ['/bad/no-redirects.json', null, /redirect_uris/],
    ['/bad/secret.json', null, /token_endpoint_auth_method must be none/],
    ['/bad/not-json.json', 'not json', /not valid JSON/],
    ['/bad/huge.json', null, new RegExp(`larger than ${METADATA_MAX_BYTES} bytes`)],
    ['/bad/gone.json', { error: 'nope' }, /answered HTTP 404/, 404],
    // PostgreSQL text cannot hold a NUL: refused, not a 500.
    ['/bad/nul-name.json', null, /client_name must not contain control characters/],
    ['/bad/nul-redirect.json', null, /redirect_uris/],
  ]
  for (const [path, doc, message, status] of cases) {
    const id = docUrl(path)
    const body =
      path === '/bad/no-redirects.json'
        ? { client_id: id, redirect_uris: [] }
        : path === '/bad/secret.json'
          ? { client_id: id, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' }
          : path === '/bad/huge.json'
            ? { client_id: id, redirect_uris: [REDIRECT], client_name: 'x'.repeat(METADATA_MAX_BYTES) }
            : path === '/bad/nul-name.json'
              ? { client_id: id, redirect_uris: [REDIRECT], client_name: 'Doc\u0000Client' }
              : path === '/bad/nul-redirect.json'
                ? { client_id: id, redirect_uris: [`${REDIRECT}\u0000`] }
                : doc
    serve(path, body, status)
    const res = await fetch(authorizeUrl(url, id), { redirect: 'manual' })
    t.equal(res.status, 400, `${path}: 400, not a redirect`)
    t.match(await res.text(), message, `${path}: says why`)
    t.equal(await app.repos.oauth.client(id), undefined, `${path}: no client stored`)
  }
  const wrongRedirect = docUrl('/ok/other-redirect.json')
  serve('/ok/other-redirect.json', { client_id: wrongRedirect, redirect_uris: ['http://127.0.0.1:9/elsewhere'] })
  const res = await fetch(authorizeUrl(url, wrongRedirect), { redirect: 'manual' })
  t.equal(res.status, 400, 'a redirect_uri the document does not list is refused')
})

t.test('a document that drips or never comes is given up at the deadline, across connect, headers and body', async (t) => {
  t.equal(METADATA_TIMEOUT_MS, 5_000, 'the documented deadline is 5 s')
  // The same deadline, shortened for the test (an option of buildApp, not configuration).
  const hasty = await listenTestApp(t, { config: { oauthClientMetadataPrivateNetwork: true }, clientMetadataTimeoutMs: 500 })
  for (const path of ['/slow/drip.json', '/slow/silent.json']) {
    const id = docUrl(path)
    const started = Date.now()
    const res = await fetch(authorizeUrl(hasty.url, id), { redirect: 'manual' })
    const took = Date.now() - started
    t.equal(res.status, 400, `${path}: 400, not a redirect`)
    t.match(await res.text(), /did not arrive within 500 ms/, `${path}: says why`)
    t.ok(took >= 500 && took < 3_000, `${path}: answered at the deadline (${took} ms)`)
    t.equal(await hasty.app.repos.oauth.client(id), undefined, `${path}: no client stored`)
  }
})

t.test('by default: https only, and no private, loopback or link-local address', async (t) => {
  const strict = await listenTestApp(t)
  for (const [clientId, message] of [
    [docUrl('/oauth/client.json'), /must use https/],
    [`https://127.0.0.1:${docPort}/oauth/client.json`, /private or loopback/],
    ['https://[::1]/client.json', /private or loopback/],
    ['https://169.254.169.254/latest/meta-data', /private or loopback/],
    ['https://localhost/client.json', /private or loopback|failed/],
  ] as const) {
    const before = fetches
    const res = await fetch(authorizeUrl(strict.url, clientId), { redirect: 'manual' })
    t.equal(res.status, 400, clientId)
    t.match(await res.text(), message, `${clientId}: says why`)
    t.equal(fetches, before, `${clientId}: nothing fetched`)
  }
  for (const a of ['10.1.2.3', '192.168.1.1', '172.20.0.1', '127.0.0.1', '169.254.1.1', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '100.64.0.1']) t.ok(isPrivateAddress(a), `${a} is private`)
  for (const a of ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946']) t.notOk(isPrivateAddress(a), `${a} is public`)
})
