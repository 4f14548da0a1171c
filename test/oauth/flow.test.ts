import t from 'tap'
import { and, eq, gt, isNull } from 'drizzle-orm'
import { apiKeys, oauthRefreshTokens } from '../../db/schema.ts'
import { REFRESH_REUSE_GRACE_S } from '../../db/repositories/oauth.ts'
import { hashKey } from '../../db/keys.ts'
import { createHash, randomBytes } from 'node:crypto'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { listenTestApp, seedWorkspace, bearer } from '../helpers/app.ts'
import { MemoryProvider, REDIRECT, consent } from './helpers.ts'

t.test('OAuth for MCP clients: registration, consent, tokens, refresh, revocation', async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const provider = new MemoryProvider()

  // 1. The SDK discovers the server, registers itself and asks for authorization.
  const first = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: provider })
  await t.rejects(new Client({ name: 't', version: '1' }).connect(first), { message: /Unauthorized/ })
  t.match(provider.client?.client_id, /^cli_/, 'dynamic client registration')
  const authUrl = provider.authorizationUrl!
  t.equal(authUrl.origin + authUrl.pathname, `${url}/oauth/authorize`)
  t.equal(authUrl.searchParams.get('code_challenge_method'), 'S256')
  t.equal(authUrl.searchParams.get('resource'), `${url}/mcp`)

  // 2. A person signs in and consents; the consent page names the client.
  const answer = await consent(url, authUrl.toString(), ws.user.email, ws.user.password)
  t.match(answer.consentHtml, /Test MCP Client/)
  t.equal(answer.status, 302)
  const back = new URL(answer.location!)
  t.equal(back.origin + back.pathname, REDIRECT)
  t.equal(back.searchParams.get('state'), authUrl.searchParams.get('state'))
  const code = back.searchParams.get('code')!
  t.match(code, /^gdc_/)

  // 3. Token exchange, then tools/list with the gdo_ access token.
  await first.finishAuth(code)
  t.match(provider.saved?.access_token, /^gdo_[0-9A-Za-z]{38}$/)
  t.equal(provider.saved?.expires_in, 3600)
  const access1 = provider.saved!.access_token
  const client = new Client({ name: 't', version: '1' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: provider }))
  const tools = await client.listTools()
  t.ok(tools.tools.some((x) => x.name === 'get_daily_ops'))
  await client.close()

  // The token works on the REST surfaces too, and is stored only as a hash.
  t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(access1) })).statusCode, 200)
  t.equal((await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/daily-ops`, headers: bearer(access1) })).statusCode, 200)

  // 4. The code is single-use: a replay fails and revokes what it issued.
  const replay = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: provider.verifier, redirect_uri: REDIRECT, client_id: provider.client!.client_id }),
  })
  t.equal(replay.status, 400)
  t.equal((await replay.json()).error, 'invalid_grant')
  t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(access1) })).statusCode, 401, 'replayed code revokes the grant')
})

t.test('token endpoint: refresh rotation, revocation, PKCE and resource mismatches', async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const register = await fetch(`${url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'CLI', redirect_uris: [REDIRECT] }),
  })
  t.equal(register.status, 201)
  const { client_id } = await register.json()

  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const authorize = (extra: Record<string, string> = {}) => {
    const u = new URL(`${url}/oauth/authorize`)
    for (const [k, v] of Object.entries({ response_type: 'code', client_id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 'xyz', resource: `${url}/mcp`, ...extra })) u.searchParams.set(k, v)
    return u.toString()
  }
  const token = (form: Record<string, string>) =>
    fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id, ...form }) })
  const codeFrom = async (extra?: Record<string, string>) => new URL((await consent(url, authorize(extra), ws.user.email, ws.user.password)).location!).searchParams.get('code')!

  t.test('PKCE: a wrong verifier is refused', async (t) => {
    const code = await codeFrom()
    const res = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: randomBytes(32).toString('base64url') })
    t.equal(res.status, 400)
    t.equal((await res.json()).error, 'invalid_grant')
  })

  t.test('plain PKCE and a missing challenge are refused at authorization', async (t) => {
    const plain = await fetch(authorize({ code_challenge_method: 'plain' }), { redirect: 'manual' })
    t.equal(plain.status, 302)
    t.equal(new URL(plain.headers.get('location')!).searchParams.get('error'), 'invalid_request')
  })

  t.test('resource must be this server /mcp', async (t) => {
    const wrong = await fetch(authorize({ resource: 'https://evil.example/mcp' }), { redirect: 'manual' })
    t.equal(new URL(wrong.headers.get('location')!).searchParams.get('error'), 'invalid_target')
    const code = await codeFrom()
    const res = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, resource: 'https://evil.example/mcp' })
    t.equal(res.status, 400)
    t.equal((await res.json()).error, 'invalid_target')
  })

  t.test('an unregistered redirect_uri is shown an error, never redirected to', async (t) => {
    const res = await fetch(authorize({ redirect_uri: 'https://evil.example/cb' }), { redirect: 'manual' })
    t.equal(res.status, 400)
  })

  t.test('deny redirects with access_denied', async (t) => {
    const answer = await consent(url, authorize(), ws.user.email, ws.user.password, 'deny')
    t.equal(new URL(answer.location!).searchParams.get('error'), 'access_denied')
  })

  t.test('refresh tokens rotate; a reused one revokes the grant; revocation works', async (t) => {
    const code = await codeFrom()
    const first = await (await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, resource: `${url}/mcp` })).json()
    t.match(first.access_token, /^gdo_/)
    t.match(first.refresh_token, /^gdr_/)
    const second = await (await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token })).json()
    t.match(second.access_token, /^gdo_/)
    t.not(second.refresh_token, first.refresh_token)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(second.access_token) })).statusCode, 200)

    // A client that lost the answer retries with the spent token within the grace window: a valid
    // pair, which replaces the one issued before — however often it retries, the grant has one live chain.
    const { grantId } = (await app.db.select({ grantId: oauthRefreshTokens.grantId }).from(oauthRefreshTokens).where(eq(oauthRefreshTokens.hash, hashKey(first.refresh_token))))[0]!
    const live = async () => ({
      refresh: (await app.db.select().from(oauthRefreshTokens).where(and(eq(oauthRefreshTokens.grantId, grantId), isNull(oauthRefreshTokens.usedAt), gt(oauthRefreshTokens.expiresAt, new Date())))).length,
      access: (await app.db.select().from(apiKeys).where(and(eq(apiKeys.grantId, grantId), isNull(apiKeys.revokedAt)))).length,
    })
    t.same(await live(), { refresh: 1, access: 2 }, 'after a rotation: one refresh token, and the first access token until it expires')
    const retries = []
    for (let i = 0; i < 3; i++) {
      const retried = await token({ grant_type: 'refresh_token', refresh_token: first.refresh_token })
      t.equal(retried.status, 200, `retry ${i + 1}: within ${REFRESH_REUSE_GRACE_S} s a spent refresh token still works`)
      retries.push(await retried.json())
      t.same(await live(), { refresh: 1, access: 1 }, `after retry ${i + 1}: one live chain`)
    }
    const pair = retries.at(-1)!
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(pair.access_token) })).statusCode, 200, 'the last pair\'s access token works')
    for (const replaced of [second, ...retries.slice(0, -1)]) {
      t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(replaced.access_token) })).statusCode, 401, 'a replaced pair\'s access token is revoked')
    }
    const next = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token })
    t.equal(next.status, 200, 'the last pair\'s refresh token works')
    const afterRetries = await next.json()
    t.same(await live(), { refresh: 1, access: 2 })
    // A replaced refresh token presented later: two parties hold the chain — the grant goes.
    const superseded = await token({ grant_type: 'refresh_token', refresh_token: second.refresh_token })
    t.equal(superseded.status, 400)
    t.match(await superseded.json(), { error: 'invalid_grant', error_description: /superseded/ })
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(afterRetries.access_token) })).statusCode, 401, 'a superseded refresh token revokes the grant')
    t.equal((await live()).access, 0, 'no access token of the grant works')
    t.equal((await token({ grant_type: 'refresh_token', refresh_token: afterRetries.refresh_token })).status, 400, 'nor its refresh token')

    // After the window, reuse is theft: the whole grant goes.
    const other = await (await token({ grant_type: 'authorization_code', code: await codeFrom(), redirect_uri: REDIRECT, code_verifier: verifier })).json()
    const rotated = await (await token({ grant_type: 'refresh_token', refresh_token: other.refresh_token })).json()
    await app.db.update(oauthRefreshTokens).set({ usedAt: new Date(Date.now() - (REFRESH_REUSE_GRACE_S + 1) * 1000) }).where(eq(oauthRefreshTokens.hash, hashKey(other.refresh_token)))
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: other.refresh_token })
    t.equal(reuse.status, 400)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(rotated.access_token) })).statusCode, 401, 'reuse after the grace window revokes the grant')

    const code2 = await codeFrom()
    const third = await (await token({ grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, code_verifier: verifier })).json()
    const revoke = await fetch(`${url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id, token: third.access_token }) })
    t.equal(revoke.status, 200)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(third.access_token) })).statusCode, 401)
    const revokeRefresh = await fetch(`${url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id, token: third.refresh_token }) })
    t.equal(revokeRefresh.status, 200)
    const afterRevoke = await token({ grant_type: 'refresh_token', refresh_token: third.refresh_token })
    t.equal(afterRevoke.status, 400)
  })

  t.test('a NUL (or another control character) in any OAuth input is a 400 in OAuth\'s error shape, never a 500', async (t) => {
    const register = (body: Record<string, unknown>) =>
      fetch(`${url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    for (const name of ['a\u0000b', '\u0000', 'bell\u0007']) {
      const res = await register({ client_name: name, redirect_uris: [REDIRECT] })
      t.equal(res.status, 400, `client_name ${JSON.stringify(name)}: 400`)
      t.match(await res.json(), { error: 'invalid_client_metadata', error_description: /control characters/ })
    }
    for (const uri of [`${REDIRECT}\u0000`, `\u0000${REDIRECT}`, 'http://127.0.0.1:9/a\u0000b', 'https://app.example/cb\u0000?x=1', 'myapp:/cb\u0000', `${REDIRECT}\n`, 'https://app.example/a b']) {
      const res = await register({ client_name: 'ok', redirect_uris: [uri] })
      t.equal(res.status, 400, `redirect URI ${JSON.stringify(uri)}: 400`)
      t.match(await res.json(), { error: 'invalid_redirect_uri', error_description: String })
    }
    // The same as a form.
    const form = await fetch(`${url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_name: 'x\u0000', redirect_uris: REDIRECT }) })
    t.equal(form.status, 400, 'a form body too')

    // The authorization endpoint: an error page or an error redirect, never a 500.
    for (const [field, value] of [['client_id', 'cli\u0000x'], ['client_id', 'https://app.example/client\u0000.json'], ['redirect_uri', `${REDIRECT}\u0000`], ['state', 's\u0000'], ['code_challenge', `${challenge.slice(1)}\u0000`], ['code_challenge_method', 'S256\u0000'], ['resource', `${url}/mcp\u0000`], ['response_type', 'code\u0000'], ['scope', '\u0000']] as const) {
      const res = await fetch(authorize({ [field]: value }), { redirect: 'manual' })
      t.ok(res.status === 400 || res.status === 302, `authorize with a NUL in ${field}: ${res.status}`)
    }

    // The token and revocation endpoints: OAuth errors.
    const code = await codeFrom()
    const fields: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, resource: `${url}/mcp` }
    for (const name of [...Object.keys(fields), 'client_id']) {
      const res = await token({ ...fields, [name]: `${fields[name] ?? 'x'}\u0000` })
      t.ok(res.status === 400 || res.status === 401, `token with a NUL in ${name}: ${res.status}`)
      t.match(await res.json(), { error: String, error_description: String })
    }
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: 'gdr_\u0000' })
    t.equal(refresh.status, 400, 'a NUL in refresh_token')
    t.equal((await refresh.json()).error, 'invalid_grant')
    const revoke = await fetch(`${url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id, token: 'gdo_\u0000' }) })
    t.equal(revoke.status, 200, 'a NUL in the token to revoke: nothing to revoke (RFC 7009)')
  })

  t.test('revocation edges: another client cannot revoke a token; broken Basic credentials and floods get OAuth errors', async (t) => {
    const code = await codeFrom()
    const mine = await (await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier })).json()
    const other = await (await fetch(`${url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'other' }),
    })).json()
    const revoke = (body: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${url}/oauth/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(body) })
    t.equal((await revoke({ client_id: other.client_id, token: mine.access_token })).status, 200, 'answered 200 as RFC 7009 asks')
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(mine.access_token) })).statusCode, 200, "but another client's revocation does nothing")

    const broken = await revoke({ token: mine.access_token }, { authorization: `Basic ${Buffer.from('%E0%A4%A:secret').toString('base64')}` })
    t.equal(broken.status, 401, 'a malformed %-escape in Basic credentials is a client error')
    t.equal((await broken.json()).error, 'invalid_client')
    // A client_id PostgreSQL text cannot hold (a NUL, in the body or in Basic credentials) names no client: not a 500.
    const nul = await revoke({ token: mine.access_token, client_id: 'a\u0000b' })
    t.equal(nul.status, 401, 'a NUL in client_id is an unknown client')
    t.equal((await nul.json()).error, 'invalid_client')
    const zeros = await revoke({ token: mine.access_token }, { authorization: `Basic ${'A'.repeat(400)}` })
    t.equal(zeros.status, 401, 'Basic credentials that decode to NUL bytes too')
    // Bodies that do not parse get OAuth's error body too, with their own status.
    for (const [type, body, status] of [['text/plain', 'token=x', 415], ['application/json', '{', 400], ['application/json', `${'['.repeat(100)}${']'.repeat(100)}`, 400]] as const) {
      const res = await fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': type }, body })
      t.equal(res.status, status, `${type} ${body.slice(0, 10)}: ${status}`)
      t.match(await res.json(), { error: 'invalid_request', error_description: String }, 'in OAuth\'s error format')
    }

    // 60 a minute in windows aligned to the minute: a run that straddles a boundary can send 60
    // in each of two windows, so up to 2 × 60 + 1 requests before one must be refused.
    let limited: Response | undefined
    for (let i = 0; i < 121 && !limited; i++) {
      const res = await revoke({ client_id: other.client_id, token: 'x' })
      if (res.status === 429) limited = res
    }
    t.ok(limited, 'the revocation endpoint is rate-limited')
    t.equal((await limited!.json()).error, 'slow_down', 'with an OAuth error body')
    t.ok(limited!.headers.get('retry-after'), 'and Retry-After')
  })
  t.end()
})
