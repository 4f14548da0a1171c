// The console's defences over HTTP (app.inject, no browser): security headers, the session
// cookie, CSRF on every form, rate-limited sign-in, sign-out, no open redirect after sign-in,
// and the workspace settings that only an owner may change.
import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import { addMember, bearer, buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { Agent, csrfOf } from './helpers.ts'
import { createHash, createHmac } from 'node:crypto'
import { rowsOf } from '../../db/client.ts'
import { sql } from '../../db/orm.ts'
import { sealContexts } from '../../db/secret-box.ts'

const CSRF_MESSAGE = /The form expired or did not come from this site/

t.test('console security', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const mcpKeys = async () => (await app.repos.apiKeys.listForUser(ws.user.id, ['mcp'])).length
  const toolNames = async (key = ws.keys.service) => {
    const res = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(key) })
    if (res.statusCode !== 200) throw new Error(`/v1/tools: ${res.statusCode} ${res.body}`)
    return (res.json().tools as { name: string }[]).map((x) => x.name)
  }

  t.test('security headers on console pages', async (t) => {
    const owner = new Agent(app, '10.0.1.1')
    const anonymous = [await owner.get('/console/login')]
    await owner.signIn(ws.user.email, ws.user.password)
    const pages = [...anonymous]
    for (const url of ['/console', '/console/keys', '/console/profile/mcp-access', '/console/workspace', `/console/projects/${ws.project.slug}/metrics`]) pages.push(await owner.get(url))
    pages.push(await owner.post('/console/keys', { kind: 'service' })) // an error page (no CSRF token)
    for (const res of pages) {
      const where = `${res.raw.req.url} (${res.statusCode})`
      const csp = String(res.headers['content-security-policy'] ?? '')
      const directives = new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]))
      t.same(directives.get('default-src'), ["'self'"], `${where}: default-src 'self'`)
      t.same(directives.get('script-src'), ["'self'"], `${where}: scripts from this origin only, no inline`)
      t.same(directives.get('object-src'), ["'none'"], `${where}: no plugins`)
      const frames = directives.get('frame-ancestors')
      const xfo = String(res.headers['x-frame-options'] ?? '')
      t.ok((frames && frames.every((v) => v === "'self'" || v === "'none'")) || /^(DENY|SAMEORIGIN)$/i.test(xfo), `${where}: not framable by other sites`)
      t.equal(res.headers['x-content-type-options'], 'nosniff', `${where}: nosniff`)
      t.match(res.headers['cache-control'], /no-store/, `${where}: not cached`)
      t.ok(res.headers['referrer-policy'], `${where}: a referrer policy`)
      t.notMatch(res.body, /<script(?![^>]*\ssrc=)[^>]*>/i, `${where}: no inline script (the CSP would block it)`)
      t.notMatch(res.body, /\son[a-z]+="/i, `${where}: no inline event handler`)
    }
    t.equal(pages.at(-1)!.statusCode, 403)
  })

  t.test('no session before sign-in; then an HttpOnly, SameSite=Lax cookie whose id is stored only hashed', async (t) => {
    const sessionRows = async () => rowsOf<{ sid: string }>(await app.db.execute(sql`select sid from sessions`)).map((r) => r.sid)
    const rowsBefore = await sessionRows()
    const agent = new Agent(app, '10.0.2.1')
    const login = await agent.get('/console/login')
    const cookies = [login.headers['set-cookie']].flat()
    t.notOk(cookies.find((c) => c?.startsWith('gd_session=')), 'the sign-in page starts no session')
    const csrfCookie = cookies.find((c) => c?.startsWith('gd_csrf='))
    t.ok(csrfCookie, 'its CSRF secret is a cookie of its own')
    t.match(csrfCookie, /;\s*HttpOnly/i, 'HttpOnly')
    t.match(csrfCookie, /;\s*SameSite=Lax/i, 'SameSite=Lax')
    for (let i = 0; i < 20; i++) await new Agent(app, '10.0.2.9').get('/console/login')
    t.same(await sessionRows(), rowsBefore, 'anonymous visits store nothing')
    const wrong = await new Agent(app, '10.0.2.8').post('/console/login', { _csrf: csrfOf(login.body), email: ws.user.email, password: 'wrong' })
    t.equal(wrong.statusCode, 403, 'a form posted with another visitor\'s token is refused')
    const visitor = new Agent(app, '10.0.2.8')
    const form = await visitor.get('/console/login')
    const failed = await visitor.post('/console/login', { _csrf: csrfOf(form.body), email: ws.user.email, password: 'wrong' })
    t.equal(failed.statusCode, 401)
    t.match(failed.body, /Wrong email or password/, 'the failure is said on the page')
    t.same(await sessionRows(), rowsBefore, 'a failed sign-in stores nothing either')

    const signedIn = await agent.post('/console/login', { _csrf: csrfOf(login.body), email: ws.user.email, password: ws.user.password })
    t.equal(signedIn.statusCode, 302)
    const header = [signedIn.headers['set-cookie']].flat().find((c) => c?.startsWith('gd_session='))
    t.match(header, /;\s*HttpOnly/i, 'HttpOnly')
    t.match(header, /;\s*SameSite=Lax/i, 'SameSite=Lax')
    t.match(header, /;\s*Path=\//i)
    t.notMatch(header, /;\s*Secure/i, 'not Secure on a plain-http deployment')
    t.equal((await agent.get('/console')).statusCode, 200, 'signed in')

    const sid = decodeURIComponent(agent.cookies.get('gd_session')!).replace(/\.[^.]*$/, '')
    const added = (await sessionRows()).filter((r) => !rowsBefore.includes(r))
    t.same(added, [createHash('sha256').update(sid).digest('hex')], 'one row, under the SHA-256 of the id')

    // The cookie secret is stored sealed (a dump alone does not have it). Even someone who also
    // has the server key, and so the cookie secret, and the stored id: a cookie forged from them opens nothing.
    const [{ value: sealed }] = rowsOf<{ value: string }>(await app.db.execute(sql`select value from app_secrets where name = 'cookie_secret'`)) as [{ value: string }]
    t.match(sealed, /^enc:v1:/, 'the cookie secret is stored sealed')
    const secret = app.secrets.box.open(sealed, sealContexts.appSecret('cookie_secret'))
    const forged = new Agent(app, '10.0.2.2')
    const storedId = added[0]!
    forged.cookies.set('gd_session', `${storedId}.${createHmac('sha256', secret).update(storedId).digest('base64').replace(/=+$/, '')}`)
    t.equal((await forged.get('/console')).statusCode, 302, 'a cookie forged from the database does not sign in')
  })

  t.test('an https deployment behind a TLS proxy (TRUST_PROXY) sets __Host- Secure cookies', async (t) => {
    const secure = await buildTestApp(t, { config: { publicUrl: 'https://growthdesk.example', trustProxy: true } })
    const res = await secure.inject({ method: 'GET', url: '/console/login', headers: { 'x-forwarded-proto': 'https', host: 'growthdesk.example' } })
    t.match(res.headers['strict-transport-security'], /max-age=/, 'HSTS on an https deployment')
    const header = [res.headers['set-cookie']].flat().find((c) => c?.startsWith('__Host-gd_csrf='))
    t.ok(header, 'a __Host- CSRF cookie')
    t.match(header ?? '', /;\s*Secure/i, 'marked Secure')
  })

  t.test('a form posted without its CSRF token is refused and changes nothing', async (t) => {
    const owner = new Agent(app, '10.0.3.1')
    await owner.signIn(ws.user.email, ws.user.password)
    const count = await mcpKeys()
    const services = (await app.repos.apiKeys.listForUser(ws.user.id, ['service'])).length
    const cases: [string, Record<string, string>][] = [
      ['/console/profile/mcp-access', { name: 'forged' }],
      ['/console/profile/mcp-access', { name: 'forged', _csrf: 'not-a-token' }],
      ['/console/keys', { kind: 'service', name: 'forged' }],
    ]
    for (const [url, form] of cases) {
      const res = await owner.post(url, form)
      t.equal(res.statusCode, 403, `${url} ${form._csrf ? 'with a wrong token' : 'without a token'}: 403`)
      t.match(res.headers['content-type'], /text\/html/, 'an error page')
      t.match(res.body, CSRF_MESSAGE)
      t.notMatch(res.body, /id="new-key"/, 'no key shown')
    }
    // A token from another session does not work either.
    const other = new Agent(app, '10.0.3.2')
    await other.signIn(ws.user.email, ws.user.password)
    const foreign = csrfOf((await other.get('/console/profile/mcp-access')).body)
    t.equal((await owner.post('/console/profile/mcp-access', { _csrf: foreign, name: 'forged' })).statusCode, 403, "another session's token: 403")
    t.equal(await mcpKeys(), count, 'no MCP key was created')
    t.equal((await app.repos.apiKeys.listForUser(ws.user.id, ['service'])).length, services, 'no service key was created')
    // Revoking and sign-out need the token too.
    const keyId = (await app.repos.apiKeys.listForUser(ws.user.id, ['mcp']))[0]!.id
    t.equal((await owner.post(`/console/keys/${keyId}/revoke`, {})).statusCode, 403)
    t.equal((await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/daily-ops`, headers: bearer(ws.keys.mcp) })).statusCode, 200, 'the key was not revoked')
    t.equal((await owner.post('/console/logout', {})).statusCode, 403, 'sign-out without a token: 403')
    t.equal((await owner.get('/console')).statusCode, 200, 'still signed in')
    // The same form with its token works: the refusals above were about the token only.
    const ok = await owner.submit('/console/profile/mcp-access', '/console/profile/mcp-access', { name: 'real' })
    t.equal(ok.statusCode, 303)
    t.match((await owner.get(String(ok.headers.location))).body, /id="new-key">gdm_/)
    t.equal(await mcpKeys(), count + 1)
  })

  t.test('sign-in is rate-limited per IP', async (t) => {
    // The limit counts in windows aligned to the clock (5 minutes): 11 attempts straddling a
    // boundary could fall 5 and 6 into two windows. Start well inside one.
    const window = 5 * 60_000
    const left = window - (Date.now() % window)
    if (left < 20_000) await sleep(left + 50)
    const attacker = new Agent(app, '10.0.4.1')
    const csrf = csrfOf((await attacker.get('/console/login')).body)
    for (let i = 1; i <= 10; i++) {
      const res = await attacker.post('/console/login', { _csrf: csrf, email: ws.user.email, password: `guess-${i}` })
      t.equal(res.statusCode, 401, `failed attempt ${i}: 401`)
      t.match(res.body, /Wrong email or password/)
    }
    const limited = await attacker.post('/console/login', { _csrf: csrf, email: ws.user.email, password: 'guess-11' })
    t.equal(limited.statusCode, 429, 'the 11th attempt: 429')
    t.match(limited.headers['content-type'], /text\/html/)
    t.match(limited.body, /Slow down/)
    t.match(limited.body, /Too many attempts/)
    const right = await attacker.post('/console/login', { _csrf: csrf, email: ws.user.email, password: ws.user.password })
    t.equal(right.statusCode, 429, 'even the right password waits')
    t.notOk(right.headers.location)
    t.equal((await attacker.get('/console')).statusCode, 302, 'not signed in')
    const someoneElse = new Agent(app, '10.0.4.2')
    t.equal((await someoneElse.signIn(ws.user.email, ws.user.password)).headers.location, '/console', 'another IP can still sign in')
  })

  t.test('sign-out destroys the session', async (t) => {
    const agent = new Agent(app, '10.0.5.1')
    await agent.signIn(ws.user.email, ws.user.password)
    t.equal((await agent.get('/console')).statusCode, 200)
    const cookie = agent.cookies.get('gd_session')!
    const out = await agent.submit('/console', '/console/logout', {})
    t.equal(out.statusCode, 302)
    t.equal(out.headers.location, '/console/login')
    const replay = new Agent(app, '10.0.5.1')
    replay.cookies.set('gd_session', cookie)
    const res = await replay.get('/console')
    t.equal(res.statusCode, 302, 'the old cookie no longer opens /console')
    t.match(res.headers.location, /^\/console\/login\?next=/)
    t.equal((await replay.get('/console/keys')).statusCode, 302)
  })

  t.test('no open redirect through next', async (t) => {
    const evil = ['https://evil.example', '//evil.example', '///evil.example', '/\\evil.example', '\\\\evil.example', 'javascript:alert(1)', 'https://evil.example/console', '/console@evil.example', '/consolex', ' //evil.example']
    const anonymous = new Agent(app, '10.0.6.1')
    for (const next of evil) {
      const page = await anonymous.get(`/console/login?next=${encodeURIComponent(next)}`)
      t.match(page.body, /name="next" value="\/console"/, `the sign-in form carries /console, not ${JSON.stringify(next)}`)
    }
    const res = await anonymous.signIn(ws.user.email, ws.user.password, 'https://evil.example')
    t.equal(res.headers.location, '/console', 'signing in with next=https://evil.example lands on /console')
    for (const next of evil) {
      const again = await anonymous.get(`/console/login?next=${encodeURIComponent(next)}`)
      t.equal(again.statusCode, 302)
      t.equal(again.headers.location, '/console', `signed in, next=${JSON.stringify(next)} lands on /console`)
    }
    const second = new Agent(app, '10.0.6.2')
    t.equal((await second.signIn(ws.user.email, ws.user.password, '//evil.example')).headers.location, '/console', 'next=//evil.example lands on /console')
    const third = new Agent(app, '10.0.6.3')
    t.equal((await third.signIn(ws.user.email, ws.user.password, '/console/keys')).headers.location, '/console/keys', 'a console path is kept')
    // The review form's "back" field is held to the same rule.
    const opp = await app.inject({
      method: 'POST',
      url: `/api/v1/mcp/projects/${ws.project.id}/opportunities`,
      headers: bearer(ws.keys.mcp),
      payload: { contribution_type: 'lead', key_information: 'k', reason: 'r', suggested_action: 's' },
    })
    const id = opp.json().event_id
    const board = `/console/projects/${ws.project.slug}/opportunities`
    const review = await third.submit(board, `${board}/${id}/review`, { status: 'reviewing', orig_status: 'pending', back: 'https://evil.example/' })
    t.equal(review.statusCode, 302)
    t.equal(review.headers.location, `${board}#${id}`, 'back=https://evil.example returns to the board')

    // A Location that is not printable ASCII made Node throw while writing the response: the
    // process died. `next` is held to printable ASCII, and the review's anchor is encoded.
    for (const next of ['/console/\u2603', '/console/\u0000', '/console/\u00e9', '/console/a b']) {
      const res = await third.get(`/console/login?next=${encodeURIComponent(next)}`)
      t.equal(res.headers.location, '/console', `signed in, next=${JSON.stringify(next)} lands on /console`)
    }
    const page = await third.get(board)
    const odd = await third.post(`${board}/%E2%98%83/review`, { _csrf: csrfOf(page.body), status: 'reviewing', orig_status: 'pending' })
    t.equal(odd.statusCode, 302, 'a review of an id that is no id is refused with a message')
    t.equal(odd.headers.location, `${board}#%E2%98%83`, 'and the anchor back to it is encoded')
    t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'the server is still up')
  })

  t.test('a path value no record can have (a NUL, broken Unicode) is a 404 page, not a 500', async (t) => {
    const agent = new Agent(app, '10.0.6.9')
    await agent.signIn(ws.user.email, ws.user.password)
    for (const url of ['/console/projects/a%00b/opportunities', '/console/projects/a%00b/metrics', `/console/projects/${ws.project.slug}/opportunities/opp_a%00b/history`]) {
      const res = await agent.get(url)
      t.equal(res.statusCode, 404, url)
      t.match(res.headers['content-type'], /^text\/html/, 'an error page')
    }
    const page = await agent.get('/console/connections')
    const res = await agent.post('/console/connections/grt_a%00b/revoke', { _csrf: csrfOf(page.body) })
    t.equal(res.statusCode, 404, 'a form whose path holds a NUL')
  })

  t.test('workspace settings: the owner disables a tool; others cannot', async (t) => {
    const owner = new Agent(app, '10.0.7.1')
    await owner.signIn(ws.user.email, ws.user.password)
    t.ok((await toolNames()).includes('get_overview'), 'get_overview is listed at first')
    const page = await owner.get('/console/workspace')
    t.equal(page.statusCode, 200)
    t.match(page.body, /<tr data-tool="get_overview">[\s\S]*?<button type="submit">Disable<\/button>/, 'the owner has a Disable button')
    const res = await owner.post('/console/workspace/tools/get_overview', { _csrf: csrfOf(page.body), enabled: 'false' })
    t.equal(res.statusCode, 302)
    t.equal(res.headers.location, '/console/workspace')
    const after = await owner.get('/console/workspace')
    t.match(after.body, /get_overview is disabled\./, 'a flash says so')
    t.match(after.body, /<tr data-tool="get_overview">[\s\S]*?<td data-label="State">disabled<\/td>[\s\S]*?Enable<\/button>/)
    t.notOk((await toolNames()).includes('get_overview'), 'GET /v1/tools no longer lists it')
    t.equal((await app.inject({ method: 'POST', url: '/v1/tools/get_overview', headers: bearer(ws.keys.service), payload: { project: ws.project.id } })).statusCode >= 400, true, 'nor can it be called')

    // A member who is not the workspace owner (even a project owner's reviewer) sees no buttons.
    const member = await addMember(app, ws.project.id, 'reviewer')
    const other = new Agent(app, '10.0.7.2')
    await other.signIn(member.user.email, member.user.password)
    const theirs = await other.get('/console/workspace')
    t.equal(theirs.statusCode, 200)
    t.match(theirs.body, /Only workspace owners can change this\./)
    const table = /<table[^>]*>[\s\S]*<\/table>/.exec(theirs.body)![0]
    t.notMatch(table, /<button|<form/, 'no buttons or forms in the tool table')
    t.match(table, /<tr data-tool="get_overview">[\s\S]*?<td data-label="State">disabled<\/td>/, 'but the state is shown')
    for (const [tool, enabled] of [['get_overview', 'true'], ['get_daily_ops', 'false']] as const) {
      const forged = await other.post(`/console/workspace/tools/${tool}`, { _csrf: csrfOf(theirs.body), enabled })
      t.equal(forged.statusCode, 403, `a forged POST (${tool} enabled=${enabled}) gets 403`)
      t.match(forged.headers['content-type'], /text\/html/, 'an error page')
      t.match(forged.body, /Only a workspace owner/)
    }
    const names = await toolNames()
    t.notOk(names.includes('get_overview'), 'get_overview stays disabled')
    t.ok(names.includes('get_daily_ops'), 'get_daily_ops stays enabled')

    // The owner turns it back on.
    const again = await owner.submit('/console/workspace', '/console/workspace/tools/get_overview', { enabled: 'true' })
    t.equal(again.statusCode, 302)
    t.ok((await toolNames()).includes('get_overview'), 'enabled again, listed again')
  })

  t.end()
})
