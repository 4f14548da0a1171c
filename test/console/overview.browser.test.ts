// The project overview and "new project" in Chromium on a pinned clock: the KPIs on a project's
// page are get_overview's over the API (with ▲/▼ changes, status links into the board and data
// freshness), with a chart of the last 30 days (today's partial day marked); a project made in the console exists afterwards, and a taken slug, a bad slug or
// a bad time zone is an error on the form that creates nothing.
import t from 'tap'
import { randomUUID } from 'node:crypto'
import path from 'node:path'
import { bearer, fixedClock, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

const NOW = '2026-11-20T12:00:00.000Z'

// Signups: 3 in the last 7 days, 1 in the 7 before (▲ 200 %); daily use: this week and last.
const EVENTS: [string, string, string][] = [
  ['signup', 'u0', '2026-11-08T09:00:00Z'],
  ['daily_use', 'u0', '2026-11-08T10:00:00Z'],
  ['daily_use', 'u0', '2026-11-09T10:00:00Z'],
  ['daily_use', 'u0', '2026-11-10T10:00:00Z'],
  ['signup', 'u1', '2026-11-15T09:00:00Z'],
  ['daily_use', 'u1', '2026-11-15T10:00:00Z'],
  ['signup', 'u2', '2026-11-19T09:00:00Z'],
  ['daily_use', 'u2', '2026-11-19T10:00:00Z'],
  ['signup', 'u3', '2026-11-20T09:00:00Z'],
  ['daily_use', 'u3', '2026-11-20T09:30:00Z'],
  ['daily_use', 'u1', '2026-11-20T10:00:00Z'],
]

t.test('project overview and new project in a browser', { skip }, async (t) => {
  const clock = fixedClock(NOW)
  const { app, url } = await listenTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const ingest = await app.inject({
    method: 'POST',
    url: '/v1/events',
    headers: bearer(ws.keys.ingest),
    payload: { events: EVENTS.map(([event, distinct_id, timestamp]) => ({ event, distinct_id, timestamp, uuid: randomUUID() })) },
  })
  t.equal(ingest.statusCode, 200, ingest.body)
  const api = `/api/v1/mcp/projects/${ws.project.id}`
  const submit = async (key_information: string) => {
    const res = await app.inject({ method: 'POST', url: `${api}/opportunities`, headers: bearer(ws.keys.mcp), payload: { contribution_type: 'partner_channel', key_information, reason: 'r', suggested_action: 's' } })
    if (res.statusCode !== 201) throw new Error(`submit: ${res.statusCode} ${res.body}`)
    return res.json().event_id as string
  }
  await submit('one'); await submit('two')
  const third = await submit('three')
  t.equal((await app.inject({ method: 'PATCH', url: `${api}/opportunities/${third}/review`, headers: bearer(ws.keys.mcp), payload: { status: 'contacted' } })).statusCode, 200)
  const overviewRes = await app.inject({ method: 'GET', url: `${api}/overview`, headers: bearer(ws.keys.mcp) })
  t.equal(overviewRes.statusCode, 200, overviewRes.body)
  const o = overviewRes.json()
  t.equal(o.signups.last_7d, 3, 'the API counts 3 signups this week')
  t.equal(o.signups.change_7d, 2, 'and ▲ 200 % on the week before')

  const browser = await launchChromium(t)
  const page = await newPage(browser)
  await signIn(page, url, ws.user.email, ws.user.password)
  const overview = `${url}/console/projects/${ws.project.slug}`

  await t.test('the overview shows get_overview', async (t) => {
    await clickAndWait(page, page.locator('ul.cards h2 a', { hasText: 'Demo project' }))
    t.equal(page.url(), overview, 'the home card links to the overview')
    const field = (kpi: string, name: string) => page.locator(`[data-kpi="${kpi}"] [data-field="${name}"]`).innerText()
    for (const kpi of ['signups', 'daily_users'] as const) {
      for (const f of ['today', 'last_7d', 'last_30d'] as const) t.equal(await field(kpi, f), String(o[kpi][f]), `${kpi} ${f}`)
    }
    t.equal(await field('signups', 'change_7d'), '▲ 200 %', 'a rise as ▲ with its percentage')
    t.match(await page.locator('[data-kpi="signups"] [data-field="change_7d"]').getAttribute('class'), /\bup\b/)
    t.equal(o.daily_users.change_30d, null, 'no daily use in the 30 days before')
    t.equal(await field('daily_users', 'change_30d'), '—', 'no previous period: neutral')
    t.match(await page.locator('[data-kpi="daily_users"] [data-field="change_30d"]').getAttribute('class'), /\bneutral\b/)
    t.equal(await field('unique', 'unique_users_7d'), String(o.unique_users_7d))
    t.equal(await field('unique', 'unique_users_30d'), String(o.unique_users_30d))
    t.equal(await field('unique', 'stickiness'), `${Math.round(o.stickiness * 1000) / 10} %`)
    t.equal(await page.locator('[data-field="pending_review"]').innerText(), String(o.opportunities.pending_review))
    t.equal(o.opportunities.pending_review, 2)
    const byStatus = await page.locator('ul.statuses a').evaluateAll((as) => Object.fromEntries(as.map((a) => [a.getAttribute('data-status'), a.querySelector('strong')!.textContent])))
    t.same(byStatus, Object.fromEntries(Object.entries(o.opportunities.by_status).map(([k, v]) => [k, String(v)])), 'opportunities by status, as the API counts them')

    // Freshness: the last event 2 h before the pinned now; the exact time on hover.
    const last = page.locator('[data-kpi="freshness"] time')
    t.equal(await last.getAttribute('datetime'), o.last_event_at)
    t.equal(await last.innerText(), '2 h ago')
    t.ok(await last.getAttribute('title'), 'the exact time on hover')

    // In the viewer's own zone: console.js restates the exact time there (the text stays relative).
    const ny = await browser.newContext({ timezoneId: 'America/New_York', locale: 'en-US', storageState: await page.context().storageState() })
    t.teardown(() => ny.close())
    const nyPage = await ny.newPage()
    await nyPage.goto(overview)
    const nyLast = nyPage.locator('[data-kpi="freshness"] time')
    await nyPage.waitForFunction(() => !document.querySelector('[data-kpi="freshness"] time')!.getAttribute('title')!.endsWith(' UTC'))
    t.match(await nyLast.getAttribute('title'), /Nov 20, 2026.*5:00:00\s?AM EST/, 'the exact time in the viewer\'s zone (10:00 UTC = 5:00 EST)')
    t.equal(await nyLast.innerText(), '2 h ago')
    t.match(await page.locator('[data-kpi="freshness"]').getAttribute('class'), /\bfresh\b/)

    // The last 30 days as a chart: get_daily_ops' 30-day window, one titled point a day, today's hollow and labelled.
    const ops = (await app.inject({ method: 'GET', url: `${api}/daily-ops?window=30d`, headers: bearer(ws.keys.mcp) })).json()
    const chart = page.locator('figure[data-kpi="chart"] svg.wide')
    t.equal(await chart.count(), 1, 'a chart on the overview')
    for (const [cls, field] of [['s1', 'registered_users'], ['s2', 'daily_use_users']] as const) {
      const titles = await chart.locator(`circle.${cls}`).evaluateAll((els) => els.map((el) => el.textContent))
      t.same(titles, ops.days.map((d: Record<string, number | string>, i: number) => `${d.date}: ${d[field]}${i === 29 ? ' (today so far)' : ''}`), `${field}: a point a day of the 30, as the API counts them`)
      t.equal(await chart.locator(`polyline.${cls}`).evaluate((el) => el.getAttribute('points')!.trim().split(/\s+/).length), 29, `${field}: the line stops at yesterday`)
    }
    t.equal(await chart.locator('circle.partial').count(), 2, "today's points are hollow")
    t.equal(await chart.locator('.partial-day text').textContent(), 'today so far')
    t.ok(ops.days.some((d: { registered_users: number }) => d.registered_users > 0), 'the chart has data to show')
    if (process.env.SHOTS_DIR) {
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 })
        await page.screenshot({ path: path.join(process.env.SHOTS_DIR, `overview-${width}.png`), fullPage: true })
        const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
        t.ok(scrollWidth <= innerWidth, `${width} px: nothing scrolls sideways`)
      }
      await page.setViewportSize({ width: 1200, height: 900 })
    }

    // The status links open the board filtered by that status.
    await clickAndWait(page, page.locator('ul.statuses a[data-status="contacted"]'))
    t.equal(new URL(page.url()).searchParams.get('status'), 'contacted')
    t.equal(await page.locator('main [data-event-id]').count(), 1, 'the board shows the one contacted')
    await clickAndWait(page, page.locator('.crumbs a', { hasText: 'Demo project' }))
    t.equal(page.url(), overview, 'the board crumbs lead back to the overview')
  })

  await t.test('a stale project warns', async (t) => {
    clock.set('2026-11-22T12:00:00.000Z')
    await page.goto(overview)
    t.match(await page.locator('[data-kpi="freshness"]').getAttribute('class'), /\bstale\b/)
    t.match(await page.locator('[data-kpi="freshness"]').innerText(), /no event in the last 24 hours/)
    clock.set(NOW)
  })

  await t.test('create a project in the console', async (t) => {
    await page.goto(`${url}/console`)
    await page.locator('details.new-project summary').click() // the form opens from its heading
    const form = page.locator('form[action="/console/projects"]')
    await form.locator('input[name=name]').fill('Side Quest')
    await form.locator('input[name=slug]').fill('side-quest')
    await form.locator('select[name=timezone]').selectOption('Europe/Berlin')
    await form.locator('textarea[name=description]').fill('A second bet.')
    await clickAndWait(page, form.locator('button[type=submit]'))
    t.equal(new URL(page.url()).pathname, '/console/projects/side-quest', 'on the new project page')
    t.match(await page.locator('h1').innerText(), /Side Quest/)
    t.match(await page.locator('.flash.ok').innerText(), /created/)
    t.match(await page.locator('[data-kpi="freshness"]').innerText(), /No event recorded yet/)
    t.match(await page.locator('[data-kpi="freshness"]').getAttribute('class'), /\bstale\b/, 'no event at all: a warning')
    await page.reload()
    t.equal(new URL(page.url()).pathname, '/console/projects/side-quest', 'a reload re-sends nothing (Post/Redirect/Get)')
    const count = async () => (await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })).json().items.length
    t.equal(await count(), 2, 'two projects now')

    const tryCreate = async (fields: { name: string; slug: string; timezone?: string }) => {
      await page.goto(`${url}/console`)
      await page.locator('details.new-project summary').click()
      const form = page.locator('form[action="/console/projects"]')
      await form.locator('input[name=name]').fill(fields.name)
      await form.locator('input[name=slug]').fill(fields.slug)
      if (fields.timezone) await form.locator('select[name=timezone]').selectOption(fields.timezone)
      return clickAndWait(page, form.locator('button[type=submit]'))
    }
    let res = await tryCreate({ name: 'Again', slug: 'side-quest' })
    t.equal(res!.status(), 409, 'a taken slug: 409')
    t.equal(new URL(page.url()).pathname, '/console/projects', 'the form is shown again')
    t.match(await page.locator('#project-error').innerText(), /slug 'side-quest' is taken/)
    t.match(await page.locator('.field-error').innerText(), /Slug is taken/)
    t.equal(await page.locator('form[action="/console/projects"] input[name=name]').inputValue(), 'Again', 'with what was typed')
    res = await tryCreate({ name: 'Bad', slug: 'Bad Slug!' })
    t.equal(res!.status(), 400, 'a bad slug: 400')
    t.match(await page.locator('#project-error').innerText(), /slug/)
    t.equal(await count(), 2, 'nothing was created')
  })
})
