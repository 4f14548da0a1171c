// The console's key pages in Chromium: sign-in (wrong password, then right), Profile → MCP
// Access (create a gdm_ key shown once after a redirect, reload, use it, see it masked with its
// id, revoke it after a confirmation) and /console/keys (service and ingest keys: create, use,
// revoke). Every key is checked against the real API.
import t from 'tap'
import type { Page } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import type { KeyKind } from '../../db/keys.ts'
import { FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, submitSignIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The key's row once its use is recorded (recording does not hold up the API response). */
async function waitForUse(app: FastifyInstance, userId: string, kind: KeyKind, display: string) {
  for (let i = 0; i < 300; i++) {
    const row = (await app.repos.apiKeys.listForUser(userId, [kind])).find((k) => k.display === display)
    if (row?.lastUsedAt) return row
    await sleep(100)
  }
  throw new Error(`the use of ${display} was never recorded`)
}

/** The cells of the key table row showing this display form (name, key, id, scope, created, last used, action). */
async function rowCells(page: Page, display: string) {
  const row = page.locator('table.keys tbody tr', { has: page.locator('code', { hasText: display }) })
  return { row, cells: await row.locator('td').allInnerTexts() }
}

t.test('console keys in a browser', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const browser = await launchChromium(t)
  const page = await newPage(browser)
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: url })
  const daily = `/api/v1/mcp/projects/${ws.project.id}/daily-ops`

  await t.test('sign-in: redirected there, a wrong password is refused, the right one signs in', async (t) => {
    await page.goto(`${url}/console`)
    const login = new URL(page.url())
    t.equal(login.pathname, '/console/login', '/console redirects to the sign-in page')
    t.equal(login.searchParams.get('next'), '/console', 'and comes back afterwards')
    t.equal(await page.locator('h1').innerText(), 'Sign in')

    await submitSignIn(page, ws.user.email, 'not-the-password')
    t.equal(new URL(page.url()).pathname, '/console/login', 'still on the sign-in page')
    t.match(await page.locator('.flash.error').innerText(), /Wrong email or password/)
    t.equal(await page.inputValue('input[name=email]'), ws.user.email, 'the email is kept')
    t.equal(await page.inputValue('input[name=password]'), '', 'the password is not')

    await submitSignIn(page, ws.user.email, ws.user.password)
    t.equal(new URL(page.url()).pathname, '/console', 'signed in, back on /console')
    t.equal(await page.locator('h1').innerText(), 'Projects')
    t.match(await page.locator('header.top').innerText(), ws.user.email)
  })

  await t.test('Profile → MCP Access: a gdm_ key shown once, used, masked, revoked', async (t) => {
    await clickAndWait(page, page.locator('header.top nav a', { hasText: 'Profile' }))
    t.equal(new URL(page.url()).pathname, '/console/profile')
    await clickAndWait(page, page.locator('main a', { hasText: 'MCP Access' }))
    const accessUrl = page.url()
    t.equal(new URL(accessUrl).pathname, '/console/profile/mcp-access')
    t.equal(await page.locator('#new-key').count(), 0, 'no key shown before one is created')

    await page.fill('form[action="/console/profile/mcp-access"] input[name=name]', 'Claude on the test laptop')
    const created = await clickAndWait(page, page.locator('button', { hasText: 'Create key' }))
    t.equal(created?.status(), 200)
    t.equal(new URL(page.url()).pathname, '/console/profile/mcp-access/new', 'redirected (Post/Redirect/Get) to the page that shows it once')
    t.equal(created?.request().redirectedFrom()?.method(), 'POST', 'from the POST that created it')
    t.match(created?.headers()['cache-control'], /no-store/, 'the page with the key is not cached')
    const key = (await page.locator('#new-key').innerText()).trim()
    t.match(key, /^gdm_[0-9A-Za-z]{38}$/, 'a full gdm_ key is shown')
    const alert = await page.locator('.secret').innerText()
    t.match(alert, /shown only this once/, 'with the only-once warning')
    const copy = page.locator('button.copy[data-copy="#new-key"]')
    t.equal(await copy.innerText(), 'Copy', 'and a Copy button')
    await copy.click()
    await page.waitForFunction(() => document.querySelector('button.copy')?.textContent === 'Copied')
    t.equal(await page.evaluate(() => navigator.clipboard.readText()), key, 'Copy puts the key on the clipboard')

    // The key works on the project-side API.
    const ok = await app.inject({ method: 'GET', url: daily, headers: bearer(key) })
    t.equal(ok.statusCode, 200, 'the new key works on /api/v1/mcp')
    const display = `gdm_…${key.slice(-4)}`
    const stored = await waitForUse(app, ws.user.id, 'mcp', display)

    // A reload of that page shows the key no more and creates nothing.
    const keysBefore = (await app.repos.apiKeys.listForUser(ws.user.id, ['mcp'])).length
    const reloaded = await page.reload()
    t.notOk((await reloaded!.text()).includes(key.slice(4, -4)), 'a reload does not show the key again')
    t.equal(await page.locator('h1').innerText(), 'This key was already shown')
    t.equal((await app.repos.apiKeys.listForUser(ws.user.id, ['mcp'])).length, keysBefore, 'and creates no key')

    // The list: the key is not in it, only name, masked form, id and times.
    const again = await page.goto(accessUrl)
    const html = await again!.text()
    t.notOk(html.includes(key), 'the full key is nowhere in the HTML any more')
    t.notOk(html.includes(key.slice(4, -4)), 'nor its secret part')
    t.notOk(html.includes(key.slice(4, 20)), 'nor a piece of it')
    t.equal(await page.locator('#new-key').count(), 0)
    t.notMatch(await page.locator('main').innerText(), /shown only this once/)
    const { row, cells } = await rowCells(page, display)
    t.equal(await row.count(), 1, 'one row for the key')
    t.equal(cells[0], 'Claude on the test laptop', 'its name')
    t.equal(cells[1], display, 'gdm_… and the last 4 characters')
    t.match(cells[2], new RegExp(`^${stored.id}\\s+Copy$`), 'its id, with a Copy button')
    await row.locator('td.key-id button.copy').click()
    await page.waitForFunction(() => document.querySelector('td.key-id button.copy')?.textContent === 'Copied')
    t.equal(await page.evaluate(() => navigator.clipboard.readText()), stored.id, 'Copy puts the id on the clipboard')
    t.equal(cells[3]!.replace(/\s+/g, ' '), 'all projects read & write no expiry', 'not narrowed: every project, read & write, no expiry')
    // Times for people: relative text, the exact time in datetime (and on hover).
    const times = await row.locator('td.when time').evaluateAll((els) => els.map((el) => [el.getAttribute('datetime'), el.getAttribute('title')]))
    t.match(times[0]![0], ISO, 'created time')
    t.equal(times[0]![0], stored.createdAt.toISOString())
    t.match(times[1]![0], ISO, 'last-used time')
    t.equal(times[1]![0], stored.lastUsedAt!.toISOString())
    t.ok(times.every(([, title]) => title), 'the exact time on hover')
    t.same([cells[4], cells[5]], ['just now', 'just now'], 'shown as relative times')

    // Revoke it: the button asks first, naming the key; Cancel changes nothing.
    await clickAndWait(page, row.locator('a', { hasText: 'Revoke' }))
    t.equal(new URL(page.url()).pathname, `/console/keys/${stored.id}/revoke`, 'a confirmation page')
    t.equal(await page.locator('h1').innerText(), 'Revoke “Claude on the test laptop”?')
    t.match(await page.locator('main').innerText(), display, 'naming its display form')
    await clickAndWait(page, page.locator('main a', { hasText: 'Cancel' }))
    t.equal(page.url(), accessUrl, 'Cancel goes back')
    t.equal((await app.inject({ method: 'GET', url: daily, headers: bearer(key) })).statusCode, 200, 'and the key still works')
    await clickAndWait(page, (await rowCells(page, display)).row.locator('a', { hasText: 'Revoke' }))
    await clickAndWait(page, page.locator('button', { hasText: 'Revoke this key' }))
    t.equal(page.url(), accessUrl, 'back on MCP Access')
    t.match(await page.locator('.flash').innerText(), /revoked/)
    const after = await rowCells(page, display)
    t.match(await after.row.getAttribute('class'), /revoked/, 'the row is marked revoked')
    t.equal(after.cells.at(-1), 'revoked just now', 'revoked, and when')
    t.equal(await after.row.locator('a', { hasText: 'Revoke' }).count(), 0, 'no Revoke button any more')
    const refused = await app.inject({ method: 'GET', url: daily, headers: bearer(key) })
    t.equal(refused.statusCode, 401, 'the revoked key gets 401')
    t.equal((await app.inject({ method: 'GET', url: daily, headers: bearer(ws.keys.mcp) })).statusCode, 200, 'other keys still work')
  })

  await t.test('/console/keys: service and ingest keys', async (t) => {
    await clickAndWait(page, page.locator('header.top nav a', { hasText: 'Keys' }))
    const keysUrl = page.url()
    t.equal(new URL(keysUrl).pathname, '/console/keys')

    // A service key.
    const serviceForm = page.locator('form', { has: page.locator('input[name=kind][value=service]') })
    await serviceForm.locator('input[name=name]').fill('nightly job')
    await clickAndWait(page, serviceForm.locator('button', { hasText: 'Create service key' }))
    t.equal(new URL(page.url()).pathname, '/console/keys/new')
    const service = (await page.locator('#new-key').innerText()).trim()
    t.match(service, /^gds_[0-9A-Za-z]{38}$/, 'a gds_ key is shown')
    t.match(await page.locator('.secret').innerText(), /shown only this once/)
    t.equal(await page.locator('button.copy').count(), 1, 'with a Copy button')
    const tools = await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(service) })
    t.equal(tools.statusCode, 200, 'the service key works on GET /v1/tools')
    t.ok(tools.json().tools.length > 0)

    // An ingest key for the project.
    await clickAndWait(page, page.locator('main a', { hasText: 'Back to Keys' }))
    t.equal(page.url(), keysUrl, 'the new-key page leads back to Keys')
    const ingestForm = page.locator('form', { has: page.locator('input[name=kind][value=ingest]') })
    await ingestForm.locator('input[name=name]').fill('web app')
    await ingestForm.locator('select[name=project]').selectOption(ws.project.id)
    await clickAndWait(page, ingestForm.locator('button', { hasText: 'Create ingest key' }))
    const ingest = (await page.locator('#new-key').innerText()).trim()
    t.match(ingest, /^gdi_[0-9A-Za-z]{38}$/, 'a gdi_ key is shown')
    const events = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ingest), payload: { events: [{ event: 'signup', distinct_id: 'user-1' }] } })
    t.equal(events.statusCode, 200, 'the ingest key records events')
    t.equal(events.json().accepted, 1)

    // Shown again: neither key is in the page; both rows are.
    const again = await page.goto(keysUrl)
    const html = await again!.text()
    t.notOk(html.includes(service) || html.includes(service.slice(4, -4)), 'the service key is not in the HTML')
    t.notOk(html.includes(ingest) || html.includes(ingest.slice(4, -4)), 'the ingest key is not in the HTML')
    const serviceRow = await rowCells(page, `gds_…${service.slice(-4)}`)
    t.same([...serviceRow.cells.slice(0, 2), serviceRow.cells[3]!.split('\n')[0]], ['nightly job', `gds_…${service.slice(-4)}`, 'all projects'])
    t.match(serviceRow.cells[2], /^key_[0-9A-Za-z]+\s+Copy$/, 'its id')
    t.match(await serviceRow.row.locator('time').first().getAttribute('datetime'), ISO)
    const ingestRow = await rowCells(page, `gdi_…${ingest.slice(-4)}`)
    t.same([...ingestRow.cells.slice(0, 2), ingestRow.cells[3]!.split('\n')[0]], ['web app', `gdi_…${ingest.slice(-4)}`, `project ${ws.project.slug}`], 'the ingest key names its project')

    // Revoke the service key.
    await clickAndWait(page, serviceRow.row.locator('a', { hasText: 'Revoke' }))
    t.equal(await page.locator('h1').innerText(), 'Revoke “nightly job”?')
    await clickAndWait(page, page.locator('button', { hasText: 'Revoke this key' }))
    t.equal(page.url(), keysUrl)
    t.match(await page.locator('.flash').innerText(), /revoked/)
    t.match(await serviceRow.row.getAttribute('class'), /revoked/)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(service) })).statusCode, 401, 'the revoked service key gets 401')
    const still = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ingest), payload: { events: [{ event: 'daily_use', distinct_id: 'user-1' }] } })
    t.equal(still.statusCode, 200, 'the ingest key still works')
    t.equal(await ingestRow.row.locator('a', { hasText: 'Revoke' }).count(), 1)
  })
})
