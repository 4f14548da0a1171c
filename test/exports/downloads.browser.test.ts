// The console's Download CSV links in Chromium with JavaScript off: the board's (with the
// current filters) and the metrics page's save the API's CSV as a file with its name; neither
// page scrolls sideways at 390 px. SHOTS_DIR=… also photographs both pages at 1280 and 390 px.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import type { Browser } from 'playwright-core'
import { bearer, fixedClock, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { ACTION_TIMEOUT, FILE_TIMEOUT, browserSkip, launchChromium, submitSignIn } from '../console/helpers.ts'
import { csvObjects } from './csv.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)
const NOW = '2026-11-20T12:00:00.000Z'

t.test('Download CSV from the board and the metrics page, without JavaScript', { skip }, async (t) => {
  const { app, url } = await listenTestApp(t, { now: fixedClock(NOW) })
  const ws = await seedWorkspace(app)
  const slug = ws.project.slug
  for (let i = 0; i < 8; i++) {
    const res = await app.inject({
      method: 'POST',
      url: `/api/v1/mcp/projects/${slug}/opportunities`,
      headers: bearer(ws.keys.mcp),
      payload: { contribution_type: i % 2 ? 'partnership' : 'content_idea', key_information: i === 1 ? '=1+1, "quoted"' : `Opportunity ${i}`, reason: 'r', suggested_action: 's' },
    })
    if (res.statusCode !== 201) throw new Error(res.body)
  }
  const events = [['signup', 'u1', '2026-11-19T09:00:00Z'], ['daily_use', 'u1', '2026-11-20T10:00:00Z']]
  await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: { events: events.map(([event, distinct_id, timestamp]) => ({ event, distinct_id, timestamp, uuid: randomUUID() })) } })

  const browser: Browser = await launchChromium(t)
  const shots = process.env.SHOTS_DIR
  if (shots) fs.mkdirSync(shots, { recursive: true })

  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    const context = await browser.newContext({ viewport, javaScriptEnabled: false, acceptDownloads: true })
    context.setDefaultTimeout(ACTION_TIMEOUT)
    const page = await context.newPage()
    await page.goto(`${url}/console/login`)
    await submitSignIn(page, ws.user.email, ws.user.password)

    await page.goto(`${url}/console/projects/${slug}/opportunities?view=list&type=partnership`)
    t.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, `board: no sideways scroll at ${viewport.width}`)
    if (shots) await page.screenshot({ path: path.join(shots, `board-${viewport.width}.png`), fullPage: false })
    const [boardFile] = await Promise.all([page.waitForEvent('download'), page.click('text=Download CSV')])
    t.equal(boardFile.suggestedFilename(), `${slug}-opportunities-2026-11-20.csv`)
    const rows = csvObjects(fs.readFileSync((await boardFile.path())!, 'utf8'))
    t.equal(rows.length, 4, 'the filter (partnership) applies')
    t.ok(rows.every((r) => r.contribution_type === 'partnership'))
    t.ok(rows.some((r) => r.key_information === '\'=1+1, "quoted"'), 'the formula cell neutralised')

    await page.goto(`${url}/console/projects/${slug}/metrics?window=30d`)
    t.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, `metrics: no sideways scroll at ${viewport.width}`)
    if (shots) {
      await page.locator('p.download').first().scrollIntoViewIfNeeded()
      await page.screenshot({ path: path.join(shots, `metrics-${viewport.width}.png`), fullPage: false })
    }
    const [metricsFile] = await Promise.all([page.waitForEvent('download'), page.click('text=Download CSV')])
    t.equal(metricsFile.suggestedFilename(), `${ws.project.id}-daily-ops-2026-11-20.csv`)
    const days = csvObjects(fs.readFileSync((await metricsFile.path())!, 'utf8'))
    t.equal(days.length, 30, 'the window shown: 30 days')
    t.same(days.at(-1), { date: '2026-11-20', registered_users: '0', daily_use_users: '1', active_users: '1', signup_events: '0', daily_use_events: '1' })
    await context.close()
  }
})
