// Every console page at 390 × 844 (a phone) and 800 × 1000 (a tablet) with data on it: nothing scrolls sideways
// (document.documentElement.scrollWidth ≤ window.innerWidth), the top bar takes at most two
// lines with every destination on the screen, tables become cards, and the Revoke links lie
// within the screen. With SHOTS_DIR set, each page is also photographed there
// at 390 × 844 and 1280 × 800 (the wide one is held to the same rule).
import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { createHash, randomBytes, randomUUID } from 'node:crypto'
import type { Browser, Page } from 'playwright-core'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { ACTION_TIMEOUT, FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, submitSignIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)
const SHOTS = process.env.SHOTS_DIR
const PHONE = { width: 390, height: 844 }
const DESKTOP = { width: 1280, height: 800 }
// Between the two: where the phone's cards are off and a wide table can still overflow.
const TABLET = { width: 800, height: 1000 }

// Long words that do not wrap by themselves: a page must still fit.
const LONG = 'a-very-long-name-without-any-space-at-all-that-keeps-going-and-going-for-eighty-chars'

async function context(browser: Browser, viewport: { width: number; height: number }): Promise<Page> {
  const ctx = await browser.newContext({ viewport })
  ctx.setDefaultTimeout(ACTION_TIMEOUT)
  ctx.setDefaultNavigationTimeout(ACTION_TIMEOUT)
  return ctx.newPage()
}

t.test('every console page fits a phone', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const api = `/api/v1/mcp/projects/${ws.project.id}`

  // Data on every page: events, opportunities (one reviewed, for a history), an OAuth connection.
  const now = Date.now()
  const events = ['signup', 'daily_use', 'page_view', `${LONG.replace(/-/g, '_').slice(0, 60)}`].flatMap((event, i) =>
    Array.from({ length: 12 }, (_, d) => ({ event, distinct_id: `u${d % 5}`, timestamp: new Date(now - (d * 2.5 + i) * 86_400_000 - 3_600_000).toISOString(), uuid: randomUUID() }))
  )
  const ingest = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events } })
  t.equal(ingest.statusCode, 200, 'events ingested')
  let opportunity = ''
  for (const [type, info] of [['partner_channel', 'Newsletter swap with Foo'], ['potential_user_opportunity', `Lead ${LONG}`], ['community_signal', 'A thread about us']]) {
    const res = await app.inject({ method: 'POST', url: `${api}/opportunities`, headers: bearer(ws.keys.mcp), payload: { contribution_type: type, key_information: info, reason: `Because ${LONG}`, suggested_action: 'Reach out.', source_url: `https://example.com/${LONG}/${LONG}` } })
    t.equal(res.statusCode, 201, `opportunity ${type} submitted`)
    opportunity = res.json().event_id
  }
  const review = await app.inject({ method: 'PATCH', url: `${api}/opportunities/${opportunity}/review`, headers: bearer(ws.keys.mcp), payload: { status: 'contacted', evaluation: 'useful', note: `Called them ${LONG}` } })
  t.equal(review.statusCode, 200, 'one reviewed')

  const redirectUri = `${url}/test-callback`
  const registered = await fetch(`${url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: `Agent ${LONG}`, redirect_uris: [redirectUri] }) })
  t.equal(registered.status, 201)
  const { client_id } = (await registered.json()) as { client_id: string }
  const authorize = new URL(`${url}/oauth/authorize`)
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url')
  const params = { response_type: 'code', client_id, redirect_uri: redirectUri, state: 's', code_challenge: challenge, code_challenge_method: 'S256', resource: `${url}/mcp` }
  for (const [k, v] of Object.entries(params)) authorize.searchParams.set(k, v)

  const browser = await launchChromium(t)
  const phone = await context(browser, PHONE)
  const tablet = await context(browser, TABLET)
  const desktop = SHOTS ? await context(browser, DESKTOP) : undefined
  if (SHOTS) fs.mkdirSync(SHOTS, { recursive: true })
  const errors: string[] = []
  phone.on('pageerror', (err) => errors.push(err.message))

  /** The page now shown in `page` fits its width; photographed when SHOTS_DIR is set. */
  const fits = async (t: Test, page: Page, name: string) => {
    const { scrollWidth, innerWidth, wide } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      // What sticks out, to say so when it fails.
      wide: [...document.querySelectorAll('body *')].filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && !el.closest('.scroll-x')).slice(0, 5).map((el) => `${el.tagName.toLowerCase()}.${el.className}`),
    }))
    t.ok(scrollWidth <= innerWidth, `${name} at ${innerWidth} px: scrollWidth ${scrollWidth} ≤ ${innerWidth}${wide.length ? ` (wider: ${wide.join(', ')})` : ''}`)
    if (innerWidth === PHONE.width) await topBarFits(t, page, name)
    if (SHOTS) await page.screenshot({ path: path.join(SHOTS, `${name}-${innerWidth}.png`), fullPage: true })
  }

  /**
   * On the phone, the top bar of a signed-in page takes at most two lines (it took three), and
   * every destination in it is still shown, whole, on the screen. Its lines are counted from its
   * height, one line being the brand's height plus the gap between lines.
   */
  const topBarFits = async (t: Test, page: Page, name: string) => {
    const bar = await page.evaluate(() => {
      const header = document.querySelector('header.top')
      if (!header?.querySelector('nav')) return null
      const style = getComputedStyle(header)
      const frame = ['padding-top', 'padding-bottom', 'border-top-width', 'border-bottom-width'].reduce((sum, p) => sum + parseFloat(style.getPropertyValue(p)), 0)
      const content = header.getBoundingClientRect().height - frame
      const line = header.querySelector('.brand')!.getBoundingClientRect().height
      const gap = parseFloat(style.rowGap) || 0
      const offScreen = (r: DOMRect) => r.width === 0 || r.left < 0 || r.right > window.innerWidth + 0.5
      const hidden = [...header.querySelectorAll('nav a, button')].filter((el) => offScreen(el.getBoundingClientRect())).map((el) => el.textContent!.trim())
      return { lines: Math.round((content + gap) / (line + gap)), hidden }
    })
    if (!bar) return
    t.ok(bar.lines <= 2, `${name}: the top bar takes ${bar.lines} lines at ${PHONE.width} px (at most 2)`)
    t.same(bar.hidden, [], `${name}: every link of the top bar and Sign out are shown on the screen`)
  }

  /** Opens `address` on the phone (and the desktop, for photographs) and checks it fits. */
  const visit = async (t: Test, name: string, address: string, status = 200) => {
    const res = await phone.goto(`${url}${address}`)
    t.equal(res!.status(), status, `${name}: ${status}`)
    await fits(t, phone, name)
    await tablet.goto(`${url}${address}`)
    await fits(t, tablet, name)
    if (desktop) {
      await desktop.goto(`${url}${address}`)
      await fits(t, desktop, name)
    }
  }

  await t.test('signed out: the sign-in page', async (t) => {
    await visit(t, 'login', '/console/login')
  })

  await t.test('signed in: every page', async (t) => {
    for (const page of [phone, tablet, desktop]) {
      if (!page) continue
      await page.goto(`${url}/console/login`)
      await submitSignIn(page, ws.user.email, ws.user.password)
    }
    // Keys of every kind, named at length; one revoked.
    for (const [address, kind] of [['/console/keys', 'service'], ['/console/keys', 'ingest'], ['/console/profile/mcp-access', 'mcp']] as const) {
      await phone.goto(`${url}${address}`)
      const form = kind === 'mcp' ? phone.locator('form[action="/console/profile/mcp-access"]') : phone.locator(`form[action="/console/keys"]:has(input[name=kind][value=${kind}])`)
      await form.locator('input[name=name]').fill(`${kind} ${LONG}`.slice(0, 100))
      await clickAndWait(phone, form.locator('button[type=submit]'))
      if (kind === 'service') await fits(t, phone, 'new-key')
    }
    await visit(t, 'new-key-already-shown', '/console/keys/new')

    await visit(t, 'home', '/console')
    // The New project form, opened and refused (a taken slug): the reasons fit too.
    await phone.locator('details.new-project summary').click()
    const form = phone.locator('form[action="/console/projects"]')
    await form.locator('input[name=name]').fill(`Project ${LONG}`)
    await form.locator('input[name=slug]').fill(ws.project.slug)
    await clickAndWait(phone, form.locator('button[type=submit]'))
    t.ok(await phone.locator('#project-error').isVisible(), 'the refusal is shown')
    await fits(t, phone, 'home-new-project-refused')
    await visit(t, 'overview', `/console/projects/${ws.project.slug}`)
    await visit(t, 'board', `/console/projects/${ws.project.slug}/opportunities`)
    // One column at a time on the phone, with the status switcher.
    t.equal(await phone.locator('section.column').evaluateAll((cols) => cols.filter((c) => (c as HTMLElement).offsetParent !== null).length), 1, 'the phone shows one column of the board')
    t.ok(await phone.locator('.column-switch').isVisible(), 'and a switcher')
    await visit(t, 'opportunity', `/console/projects/${ws.project.slug}/opportunities/${opportunity}`)
    await visit(t, 'history', `/console/projects/${ws.project.slug}/opportunities/${opportunity}/history`)
    await visit(t, 'metrics-7d', `/console/projects/${ws.project.slug}/metrics`)
    t.ok(await phone.locator('figure.chart svg.narrow').isVisible(), 'the phone gets the chart drawn for it')
    t.notOk(await phone.locator('figure.chart svg.wide').isVisible(), 'and not the wide one')
    await visit(t, 'metrics-30d', `/console/projects/${ws.project.slug}/metrics?window=30d`)
    await visit(t, 'keys', '/console/keys')
    // Tables are cards: no header row shown, every Revoke link within the screen.
    t.notOk(await phone.locator('table.keys thead').first().isVisible(), 'the key table header is hidden: rows are cards')
    const revokes = await phone.locator('a.button.danger', { hasText: 'Revoke' }).evaluateAll((as) => as.map((a) => a.getBoundingClientRect()).map((r) => r.left >= 0 && r.right <= window.innerWidth && r.width > 0))
    t.ok(revokes.length >= 3 && revokes.every(Boolean), `every Revoke link (${revokes.length}) is on the screen`)
    const keyId = await phone.locator('table.keys tr[data-key-id]').first().getAttribute('data-key-id')
    await visit(t, 'revoke-key', `/console/keys/${keyId}/revoke?back=/console/keys`)
    await clickAndWait(phone, phone.locator('button', { hasText: 'Revoke this key' }))
    await fits(t, phone, 'keys-after-revoke')
    await visit(t, 'mcp-access', '/console/profile/mcp-access')
    await visit(t, 'profile', '/console/profile')
    await visit(t, 'workspace', '/console/workspace')
    await visit(t, 'members', '/console/members')

    // The consent page, then an OAuth connection for Connected apps.
    await visit(t, 'consent', authorize.pathname + authorize.search)
    await Promise.all([phone.waitForURL((u) => u.pathname === '/test-callback'), phone.click('button[name=decision][value=allow]')])
    await visit(t, 'connections', '/console/connections')
    t.equal(await phone.locator('tr[data-grant]').count(), 1, 'one connected app listed')

    await visit(t, 'error-404', '/console/no-such-page', 404)
    await visit(t, 'error-bad-filter', `/console/projects/${ws.project.slug}/opportunities?status=nope`, 400)
    t.same(errors, [], 'no script errors')
  })
})
