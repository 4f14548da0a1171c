// The retention page in Chromium on a pinned clock: the grid (views/retention-grid.eta) shows
// get_retention's answer cell by cell — the share as text, shaded by tenths, the counts in the
// title, periods not over yet marked and never 0 — by day and by week, at 1280 and 390 px (the
// grid scrolls inside itself; the page does not scroll sideways).
// Screenshots go to /tmp/retention-*.png (or SHOTS_DIR).
import t, { type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { bearer, fixedClock, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { ACTION_TIMEOUT, FILE_TIMEOUT, browserSkip, launchChromium, newPage, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)
const SHOTS = process.env.SHOTS_DIR || '/tmp'

// In the past of the real clock, so session cookies (real time) outlive it.
const NOW = '2026-11-20T12:00:00.000Z' // a Friday; today = 2026-11-20 in the project's UTC

interface Cohort { cohort: string; users: number; complete: number; returned: (number | null)[]; fractions: (number | null)[] }

/** Each grid row: its header, users and cells (text, class, title). */
const gridRows = (page: Page) =>
  page.locator('table.retention-grid tbody tr').evaluateAll((trs) => trs.map((tr) => ({
    head: tr.querySelector('th')!.textContent!.trim(),
    users: tr.querySelector('td.users')!.textContent!.trim(),
    cells: [...tr.querySelectorAll('td.ret')].map((td) => ({ text: td.textContent!.trim(), className: td.className, title: td.getAttribute('title') ?? '' })),
  })))

t.test('retention grid in a browser', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t, { now: fixedClock(NOW) })
  const ws = await seedWorkspace(app)
  // 12 users over the last 12 days; user i signs up on day -i and comes back on some days after.
  const events: { event: string; distinct_id: string; timestamp: string; uuid: string }[] = []
  for (let i = 0; i < 12; i++) {
    const signup = Date.parse(NOW) - i * 86_400_000 - 3_600_000
    events.push({ event: 'signup', distinct_id: `u${i}`, timestamp: new Date(signup).toISOString(), uuid: randomUUID() })
    for (let d = 0; d <= i; d += 1 + (i % 3)) events.push({ event: 'daily_use', distinct_id: `u${i}`, timestamp: new Date(signup + d * 86_400_000).toISOString(), uuid: randomUUID() })
  }
  const res = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events } })
  t.equal(res.statusCode, 200, res.body)
  const api = async (query: string) => {
    const r = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/retention?${query}`, headers: bearer(ws.keys.mcp) })
    t.equal(r.statusCode, 200)
    return r.json() as { period: string; periods: number; cohorts: Cohort[]; overall: { users: number; returned: (number | null)[]; fractions: (number | null)[] } }
  }

  const browser = await launchChromium(t)
  const page = await newPage(browser)
  const errors: string[] = []
  page.on('pageerror', (err) => errors.push(err.message))
  await signIn(page, url, ws.user.email, ws.user.password)
  const base = `${url}/console/projects/${ws.project.slug}/retention`

  const check = async (t: Test, query: string, unit: 'Day' | 'Week') => {
    const answer = await api(query)
    const rows = await gridRows(page)
    t.equal(rows.length, answer.cohorts.length + 1, 'the overall row and one row per cohort')
    t.equal(rows[0]!.head, 'All cohorts')
    t.equal(rows[0]!.users, String(answer.overall.users))
    const headers = await page.locator('table.retention-grid thead th').allInnerTexts()
    t.same(headers.slice(2), Array.from({ length: answer.periods + 1 }, (_, k) => `${unit} ${k}`), 'a column per period')
    const newestFirst = [...answer.cohorts].reverse()
    let pending = 0
    let shaded = 0
    for (const [i, c] of newestFirst.entries()) {
      const row = rows[i + 1]!
      t.ok(row.head.endsWith(c.cohort), `row ${i + 1} is cohort ${c.cohort}`)
      t.equal(row.users, String(c.users))
      for (const [k, cell] of row.cells.entries()) {
        const n = c.returned[k]
        if (n === null) {
          pending++
          t.ok(cell.className.includes('pending') && cell.text === '…', `${c.cohort} ${k}: marked not over, not 0`)
        } else if (c.users > 0) {
          shaded++
          const f = c.fractions[k]!
          t.equal(cell.text, `${Math.round(f * 1000) / 10}%`, `${c.cohort} ${k}: the share`)
          t.ok(cell.className.includes(`ret-q${Math.round(f * 10)}`), `${c.cohort} ${k}: shaded by it`)
          t.match(cell.title, `${n} of ${c.users} users`, `${c.cohort} ${k}: counts in the title`)
        }
      }
    }
    t.ok(pending > 0 && shaded > 0, `both kinds of cells (${shaded} shaded, ${pending} not over)`)
    for (const [k, cell] of rows[0]!.cells.entries()) {
      const n = answer.overall.returned[k]
      if (n === null) t.equal(cell.text, '…')
      else t.match(cell.title, `${n} of`, `overall ${k}: counts in the title`)
    }
  }

  t.test('by day, at 1280 px', async (t) => {
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.goto(`${base}?window=30d`)
    await check(t, 'window=30d', 'Day')
    await page.screenshot({ path: `${SHOTS}/retention-1280.png`, fullPage: true })
  })

  t.test('by week, chosen in the form', async (t) => {
    await page.selectOption('select[name=period]', 'week')
    await Promise.all([page.waitForNavigation(), page.click('form.retention-form button[type=submit]')])
    t.equal(new URL(page.url()).searchParams.get('period'), 'week')
    await check(t, 'period=week&window=30d', 'Week')
    await page.screenshot({ path: `${SHOTS}/retention-week-1280.png`, fullPage: true })
  })

  t.test('at 390 px the grid scrolls inside itself', async (t) => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 } })
    phone.setDefaultTimeout(ACTION_TIMEOUT)
    t.teardown(() => phone.close())
    const p = await phone.newPage()
    p.on('pageerror', (err) => errors.push(err.message))
    await signIn(p, url, ws.user.email, ws.user.password)
    await p.goto(`${base}?window=7d&start_event=signup&return_event=daily_use`)
    const sizes = await p.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
    t.ok(sizes.scrollWidth <= sizes.innerWidth, `no sideways scroll of the page (${sizes.scrollWidth} ≤ ${sizes.innerWidth})`)
    const grid = await p.locator('figure.retention .scroll-x').evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }))
    t.ok(grid.scrollWidth > grid.clientWidth, 'the grid is wider than the phone and scrolls')
    const stuck = await p.locator('table.retention-grid tbody th').first().evaluate((el) => getComputedStyle(el).position)
    t.equal(stuck, 'sticky', 'the cohort column stays while scrolling')
    await p.screenshot({ path: `${SHOTS}/retention-390.png`, fullPage: true })
  })

  t.test('a bad event name is refused with the reason', async (t) => {
    const r = await page.goto(`${base}?start_event=${'x'.repeat(201)}`)
    t.equal(r!.status(), 400)
    t.match(await page.locator('main').innerText(), /start_event/)
  })

  t.test('no script errors', async (t) => {
    t.same(errors, [])
  })
})
