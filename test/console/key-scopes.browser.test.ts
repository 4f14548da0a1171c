// Narrowed keys made in the console, in Chromium: a project-scoped, read-only key made through
// the MCP Access form (and a service key through /console/keys), read off the one-time page,
// works only for that project and only for reads over the APIs. Then both key pages at 1280
// and 390 px: no sideways scroll, the key tables as cards; screenshots in SHOTS_DIR when it is set.
import path from 'node:path'
import t from 'tap'
import type { Page } from 'playwright-core'
import { addProject, bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

const shots = process.env.SHOTS_DIR

/** The cells of the row of the key listed as `display`, by their labels. */
async function rowByLabel(page: Page, display: string) {
  const row = page.locator('table.keys tbody tr', { has: page.locator('code', { hasText: display }) })
  const cells = await row.locator('td[data-label]').evaluateAll((tds) => Object.fromEntries(tds.map((td) => [td.getAttribute('data-label'), (td as HTMLElement).innerText.trim()])))
  return cells as Record<string, string>
}

t.test('keys narrowed in the console work only where and as narrowed', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const other = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Other project', slug: 'other-project' })
  const browser = await launchChromium(t)
  const page = await newPage(browser)
  await signIn(page, url, ws.user.email, ws.user.password)

  await t.test('MCP Access: a read-only gdm_ key for one project', async (t) => {
    await page.goto(`${url}/console/profile/mcp-access`)
    const form = page.locator('form[action="/console/profile/mcp-access"]')
    await form.locator('input[name=name]').fill('read-only reporter')
    await form.locator('select[name=project]').selectOption(ws.project.id)
    await form.locator('input[name=read_only]').check()
    await form.locator('select[name=expires]').selectOption('30')
    await clickAndWait(page, form.locator('button[type=submit]'))
    t.equal(new URL(page.url()).pathname, '/console/profile/mcp-access/new')
    const key = (await page.locator('#new-key').innerText()).trim()
    t.match(key, /^gdm_[0-9A-Za-z]{38}$/, 'the key is read off the one-time page')

    const base = '/api/v1/mcp/projects'
    const read = await app.inject({ method: 'GET', url: `${base}/${ws.project.id}/daily-ops`, headers: bearer(key) })
    t.equal(read.statusCode, 200, 'a read of its project: 200')
    const overview = await app.inject({ method: 'GET', url: `${base}/${ws.project.slug}/overview`, headers: bearer(key) })
    t.equal(overview.statusCode, 200, 'another read of its project (by slug): 200')
    const write = await app.inject({
      method: 'POST',
      url: `${base}/${ws.project.id}/opportunities`,
      headers: bearer(key),
      payload: { contribution_type: 'partnership', key_information: 'A newsletter wants to feature us', reason: 'Reach', suggested_action: 'Reply' },
    })
    t.equal(write.statusCode, 403, 'a write: 403')
    t.match(write.json().error.code, /^(forbidden|review_access_required)$/)
    const elsewhere = await app.inject({ method: 'GET', url: `${base}/${other.id}/daily-ops`, headers: bearer(key) })
    t.ok([403, 404].includes(elsewhere.statusCode), `another project: ${elsewhere.statusCode}`)
    const unscoped = await app.inject({ method: 'GET', url: `${base}/${other.id}/daily-ops`, headers: bearer(ws.keys.mcp) })
    t.equal(unscoped.statusCode, 200, 'while an unnarrowed key of the same user reads the other project')
    const mcp = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'submit_opportunity', arguments: { project: ws.project.id, contribution_type: 'partnership', key_information: 'x', reason: 'y', suggested_action: 'z' } } }),
    })
    t.equal(mcp.status, 200)
    const answer = await mcp.json() as { result?: { isError?: boolean; content: { text: string }[] } }
    t.equal(answer.result?.isError, true, 'over MCP too, a write is refused')
    t.match(answer.result?.content[0]?.text, /forbidden|review_access_required/)

    await page.goto(`${url}/console/profile/mcp-access`)
    const cells = await rowByLabel(page, `gdm_…${key.slice(-4)}`)
    t.match(cells.Scope, new RegExp(`^project ${ws.project.slug}\\s+read-only\\s+expires (in \\d+ \\w+|\\w{3} \\d{1,2}, \\d{4})$`), 'the table shows the project, read-only and the expiry')
  })

  await t.test('Keys: a read-only gds_ key for one project, and a bad date refused', async (t) => {
    await page.goto(`${url}/console/keys`)
    const form = page.locator('form', { has: page.locator('input[name=kind][value=service]') })
    await form.locator('input[name=name]').fill('dashboard')
    await form.locator('select[name=project]').selectOption(ws.project.id)
    await form.locator('input[name=read_only]').check()
    await form.locator('input[name=expires_on]').fill('2999-12-31')
    await clickAndWait(page, form.locator('button[type=submit]'))
    const key = (await page.locator('#new-key').innerText()).trim()
    t.match(key, /^gds_/)
    const call = (tool: string, args: object) => app.inject({ method: 'POST', url: `/v1/tools/${tool}`, headers: bearer(key), payload: args })
    t.equal((await call('get_daily_ops', { project: ws.project.id })).statusCode, 200, 'a read tool on its project: 200')
    t.equal((await call('add_memory', { project: ws.project.id, content: 'x' })).statusCode, 403, 'a write tool: 403')
    t.ok([403, 404].includes((await call('get_daily_ops', { project: other.id })).statusCode), 'another project: 403/404')

    await page.goto(`${url}/console/keys`)
    const cells = await rowByLabel(page, `gds_…${key.slice(-4)}`)
    t.same(cells.Scope!.split(/\n+/), [`project ${ws.project.slug}`, 'read-only', 'expires Dec 31, 2999'], 'a date far ahead, in the viewer\'s words (en-US)')
    t.equal(await page.locator('table.keys tbody tr', { has: page.locator('code', { hasText: `gds_…${key.slice(-4)}` }) }).locator('td.scope time').getAttribute('datetime'), '2999-12-31T23:59:59.999Z', 'the exact expiry in datetime')

    const before = (await app.repos.apiKeys.listForUser(ws.user.id, ['service'])).length
    await page.goto(`${url}/console/keys`)
    const again = page.locator('form', { has: page.locator('input[name=kind][value=service]') })
    await again.locator('input[name=expires_on]').fill('2001-01-01')
    await clickAndWait(page, again.locator('button[type=submit]'))
    t.equal(new URL(page.url()).pathname, '/console/keys', 'a past date: back on Keys')
    t.match(await page.locator('.flash.error').innerText(), /in the past/, 'with a clear error')
    t.equal((await app.repos.apiKeys.listForUser(ws.user.id, ['service'])).length, before, 'and no key')
  })

  for (const [width, height] of [[1280, 800], [390, 844]] as const) {
    await t.test(`both key pages at ${width} px`, async (t) => {
      await page.setViewportSize({ width, height })
      for (const [name, address] of [['keys', '/console/keys'], ['mcp-access', '/console/profile/mcp-access']] as const) {
        await page.goto(`${url}${address}`)
        const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
        t.ok(scrollWidth <= innerWidth, `${name} at ${width}: no sideways scroll (${scrollWidth} ≤ ${innerWidth})`)
        const head = await page.locator('table.keys thead').first().boundingBox()
        if (width < 700) t.ok(!head || head.height <= 1, `${name}: the table head is hidden: rows are cards`)
        const revoke = page.locator('table.keys a', { hasText: 'Revoke' }).first()
        const box = await revoke.boundingBox()
        t.ok(box && box.x >= 0 && box.x + box.width <= innerWidth, `${name}: Revoke is on screen`)
        if (shots) {
          const file = path.join(shots, `${name}-${width}.png`)
          await page.screenshot({ path: file, fullPage: true })
          t.comment(`screenshot: ${file}`)
        }
      }
    })
  }
})
