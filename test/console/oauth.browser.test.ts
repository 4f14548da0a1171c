// OAuth in Chromium: an MCP client registered over HTTP sends the browser to /oauth/authorize;
// the user signs in, the consent page names the client and what it may do, Allow returns a code
// that buys tokens; Connected apps lists the client and Disconnect revokes its tokens.
import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, submitSignIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

const CLIENT_NAME = 'Acme "Agent" <beta>'

t.test('OAuth consent and connected apps in a browser', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  await seedWorkspace(app) // another workspace, whose project must not appear on the consent page
  const redirectUri = `${url}/test-callback`

  const registered = await fetch(`${url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: CLIENT_NAME, redirect_uris: [redirectUri] }),
  })
  t.equal(registered.status, 201)
  const { client_id } = (await registered.json()) as { client_id: string }
  const verifier = randomBytes(32).toString('base64url')
  const authorize = new URL(`${url}/oauth/authorize`)
  for (const [k, v] of Object.entries({
    response_type: 'code',
    client_id,
    redirect_uri: redirectUri,
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
    state: 'state-123',
    resource: `${url}/mcp`,
  })) authorize.searchParams.set(k, v)
  const token = (form: Record<string, string>) =>
    fetch(`${url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id, ...form }) })

  const browser = await launchChromium(t)
  const page = await newPage(browser)
  let tokens: { access_token: string; refresh_token: string }

  await t.test('sign-in, then a consent page that names the client and what it may do', async (t) => {
    await page.goto(authorize.toString())
    const login = new URL(page.url())
    t.equal(login.pathname, '/console/login', 'not signed in: the sign-in page first')
    t.equal(login.searchParams.get('next'), authorize.pathname + authorize.search, 'which comes back to the authorization request')
    await submitSignIn(page, ws.user.email, ws.user.password)
    t.equal(page.url(), authorize.toString(), 'back on /oauth/authorize')

    t.equal(await page.locator('h1').innerText(), `Connect ${CLIENT_NAME}?`, 'the heading names the client (as text)')
    t.equal(await page.locator('main beta').count(), 0, 'its name creates no element')
    const card = await page.locator('main .card').innerText()
    t.match(card, `${CLIENT_NAME} wants to use growthdesk as ${ws.user.email}`)
    t.match(card, `${url}/mcp`, 'the resource it will call')
    const items = await page.locator('main .card li').allInnerTexts()
    t.same(items, ['Demo project — owner: everything a reviewer can, and update the project card'], 'what it may do, per project of this workspace only')
    t.match(card, `redirected to ${new URL(url).host}`, 'where it goes back to')
    t.equal(await page.locator('button[name=decision][value=allow]').innerText(), 'Allow')
    t.equal(await page.locator('button[name=decision][value=deny]').innerText(), 'Deny')

    await Promise.all([page.waitForURL((u) => u.pathname === '/test-callback'), page.click('button[name=decision][value=allow]')])
    const back = new URL(page.url())
    t.equal(back.searchParams.get('state'), 'state-123')
    t.equal(back.searchParams.get('iss'), url)
    const code = back.searchParams.get('code')!
    t.match(code, /^gdc_/, 'Allow returns a code to the client')

    const res = await token({ grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: redirectUri, resource: `${url}/mcp` })
    t.equal(res.status, 200)
    tokens = (await res.json()) as typeof tokens
    t.match(tokens.access_token, /^gdo_/)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(tokens.access_token) })).statusCode, 200, 'the access token works')
  })

  await t.test('Connected apps lists the client; Disconnect revokes its tokens', async (t) => {
    await page.goto(`${url}/console`)
    await clickAndWait(page, page.locator('header.top nav a', { hasText: 'Connected apps' }))
    t.equal(new URL(page.url()).pathname, '/console/connections')
    const rows = page.locator('main table tbody tr[data-grant]')
    t.equal(await rows.count(), 1, 'one connected app')
    const row = await rows.first().innerText()
    t.match(row, CLIENT_NAME, 'named')
    t.match(row, client_id, 'with its client id')

    await clickAndWait(page, rows.first().locator('button', { hasText: 'Disconnect' }))
    t.equal(new URL(page.url()).pathname, '/console/connections')
    t.match(await page.locator('.flash').innerText(), /Disconnected/)
    t.equal(await page.locator('main table tbody tr[data-grant]').count(), 0, 'no longer listed')
    t.match(await page.locator('main table').innerText(), /No connected apps\./)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(tokens.access_token) })).statusCode, 401, 'the access token is revoked')
    const refresh = await token({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    t.equal(refresh.status, 400, 'and the refresh token no longer buys new ones')
    t.equal(((await refresh.json()) as { error: string }).error, 'invalid_grant')
  })
})
