// The metrics page in Chromium on a pinned clock: events ingested through the API show up in
// the SVG chart (two series, one point per day, heights in proportion, round ticks, the previous
// period dashed under them, today's partial day hollow and labelled), in the totals beside the
// previous period's, in the numbers table (the API's daily-ops, each fact once, today marked)
// and in the event summary (one row per event with a sparkline, its total and the previous
// one); the range picker (7, 30, 90 days, any from/to, with and without JavaScript); a range
// that does not work; screenshots at 1280 and 390 px.
import t, { type Test } from 'tap'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import type { Page } from 'playwright-core'
import { bearer, fixedClock, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { FILE_TIMEOUT, browserSkip, clickAndWait, launchChromium, newPage, signIn } from './helpers.ts'
import { niceTicks } from '../../routes/console/chart.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)

// In the past of the real clock, so session cookies (real time) outlive it.
const NOW = '2026-11-20T12:00:00.000Z' // today = 2026-11-20 in the project's UTC

// [event, user, timestamp]: within the last 7 days, plus one user 10 days back (30-day window only).
const EVENTS: [string, string, string][] = [
  ['signup', 'u1', '2026-11-14T09:00:00Z'],
  ['daily_use', 'u1', '2026-11-14T10:00:00Z'],
  ['daily_use', 'u1', '2026-11-15T10:00:00Z'],
  ['signup', 'u2', '2026-11-16T00:00:00Z'],
  ['daily_use', 'u2', '2026-11-16T08:00:00Z'],
  ['daily_use', 'u1', '2026-11-17T08:00:00Z'],
  ['daily_use', 'u1', '2026-11-17T20:00:00Z'],
  ['daily_use', 'u1', '2026-11-20T07:00:00Z'],
  ['daily_use', 'u2', '2026-11-20T08:00:00Z'],
  ['signup', 'u3', '2026-11-20T09:00:00Z'],
  ['page_view', 'u3', '2026-11-20T09:01:00Z'],
  ['page_view', 'u3', '2026-11-20T09:02:00Z'],
  ['page_view', 'u1', '2026-11-20T11:59:00Z'],
  ['signup', 'u0', '2026-11-10T12:00:00Z'],
  ['daily_use', 'u0', '2026-11-10T13:00:00Z'],
]

// Expected daily-ops for the 7-day window: [date, registered, daily use users, signup events, daily use events].
const EXPECTED_7D: [string, number, number, number, number][] = [
  ['2026-11-14', 1, 1, 1, 1],
  ['2026-11-15', 0, 1, 0, 1],
  ['2026-11-16', 1, 1, 1, 1],
  ['2026-11-17', 0, 1, 0, 2],
  ['2026-11-18', 0, 0, 0, 0],
  ['2026-11-19', 0, 0, 0, 0],
  ['2026-11-20', 1, 2, 1, 2],
]

interface Day {
  date: string
  registered_users: number
  daily_use_users: number
  active_users: number
  signup_events: number
  daily_use_events: number
}

/** The body rows of the daily numbers table, as text cells (whitespace collapsed). */
const tableRows = (page: Page) =>
  page.locator('table.daily tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim().replace(/\s+/g, ' '))))

/** The chart's polylines (`previous`: the comparison's): class and [x, y] points. */
const polylines = (page: Page, previous = false) =>
  page.locator(`figure.chart svg.wide polyline${previous ? '.previous' : ':not(.previous)'}`).evaluateAll((els) =>
    els.map((el) => ({ className: el.getAttribute('class'), points: el.getAttribute('points')!.trim().split(/\s+/).map((p) => p.split(',').map(Number)) }))
  )

t.test('metrics page in a browser', { skip }, async (t) => {
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
  t.equal(ingest.json().accepted, EVENTS.length)
  const apiGet = async (what: string, query: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/${what}?${query}&compare=true`, headers: bearer(ws.keys.mcp) })
    if (res.statusCode !== 200) throw new Error(`${what}: ${res.statusCode} ${res.body}`)
    return res.json()
  }

  const browser = await launchChromium(t)
  const page = await newPage(browser)
  await signIn(page, url, ws.user.email, ws.user.password)
  await clickAndWait(page, page.locator('main a', { hasText: 'Metrics' }))
  t.equal(new URL(page.url()).pathname, `/console/projects/${ws.project.slug}/metrics`, 'the home page links to the metrics')

  /** The page shows the API's reads of `query` (a window or from/to), compared; `today`: the range ends today. */
  const check = async (t: Test, query: string, days: number, today = true) => {
    const ops = await apiGet('daily-ops', query)
    const summary = await apiGet('daily-event-summary', query)
    t.equal(ops.days.length, days)
    t.equal(await page.locator('[data-field=period] strong').innerText(), `${ops.from} – ${ops.to}`, 'the page says which days it shows')

    // The chart: an <svg> with two series of one point per day, heights proportional to the values;
    // the previous period's two under them; a partial today: the line stops the day before, a dashed segment reaches a hollow point.
    t.equal(await page.locator('figure.chart svg.wide').count(), 1, 'an <svg> chart')
    const lines = await polylines(page)
    const whole = today ? days - 1 : days
    t.same(lines.map((l) => l.className), ['s1', 's2'], 'two polylines')
    t.same(lines.map((l) => l.points.length), [whole, whole], `${whole} whole days each`)
    const before = await polylines(page, true)
    t.same(before.map((l) => [l.className, l.points.length]), [['s1 previous', days], ['s2 previous', days]], 'the previous period: two lighter lines, a point a day')
    const values = (d: Day) => [d.registered_users, d.daily_use_users]
    const max = niceTicks(Math.max(...ops.days.flatMap(values), ...ops.previous.days.flatMap(values))).at(-1)!
    const top = today ? 23 : 12
    const yOf = (v: number) => top + (260 - top - 28) - (v / max) * (260 - top - 28)
    for (const [i, field] of (['registered_users', 'daily_use_users'] as const).entries()) {
      const got = lines[i]!.points.map((p) => p[1]!)
      t.ok(got.every((y, j) => Math.abs(y - yOf(ops.days[j][field])) < 0.11), `${field}: point heights follow the values`)
      const xs = lines[i]!.points.map((p) => p[0]!)
      t.ok(xs.every((x, j) => j === 0 || x > xs[j - 1]!), `${field}: points left to right`)
      const prior = before[i]!.points.map((p) => p[1]!)
      t.ok(prior.every((y, j) => Math.abs(y - yOf(ops.previous.days[j][field])) < 0.11), `${field}: the previous period's heights follow its values`)
    }
    const partial = await page.locator('figure.chart svg.wide circle.partial').evaluateAll((els) => els.map((el) => ({ cls: el.getAttribute('class'), fill: getComputedStyle(el).fill, title: el.textContent })))
    if (today) {
      t.same(partial.map((p) => [p.cls, p.fill]), [['s1 partial', 'rgb(255, 255, 255)'], ['s2 partial', 'rgb(255, 255, 255)']], "today's points are hollow")
      t.ok(partial.every((p) => p.title!.endsWith('(today so far)')), 'and say so on hover')
      t.equal(await page.locator('figure.chart svg.wide .partial-day text').textContent(), 'today so far', 'a label over the day not over')
      t.equal(await page.locator('figure.chart svg.wide line.partial').count(), 2, 'a dashed segment to each of today\'s points')
    } else {
      t.same(partial, [], 'a range that ends before today has no partial day')
      t.equal(await page.locator('figure.chart .partial-day').count(), 0)
    }

    // Every label is drawn inside the chart (none clipped at an edge).
    const outside = await page.locator('figure.chart svg.wide').evaluate((svg) => {
      const box = (svg as SVGSVGElement).viewBox.baseVal
      return [...svg.querySelectorAll('text')]
        .map((el) => ({ text: el.textContent, b: (el as SVGTextElement).getBBox() }))
        .filter(({ b }) => b.x < box.x || b.y < box.y || b.x + b.width > box.x + box.width || b.y + b.height > box.y + box.height)
        .map(({ text }) => text)
    })
    t.same(outside, [], 'no axis label sticks out of the chart')
    const dots = await page.locator('figure.chart svg.wide circle:not(.previous):not(.partial)').evaluateAll((els) => [...new Set(els.map((el) => `${el.getAttribute('class')} ${getComputedStyle(el).fill}`))].sort())
    t.same(dots, ['s1 rgb(47, 91, 234)', 's2 rgb(22, 160, 133)'], 'the dots have the colours of their series')

    // The totals beside the previous period's, as the API's days add up.
    const sum = (list: Day[], f: keyof Day) => list.reduce((n, d) => n + (d[f] as number), 0)
    const totals = await page.locator('table.totals tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-total'), tr.querySelector('[data-field=current]')!.textContent, tr.querySelector('[data-field=previous]')!.textContent]))
    const avg = (list: Day[]) => String(Math.round((sum(list, 'daily_use_users') / list.length) * 100) / 100)
    t.same(totals, [
      ['registered_users', String(sum(ops.days, 'registered_users')), String(sum(ops.previous.days, 'registered_users'))],
      ['daily_use_users', avg(ops.days), avg(ops.previous.days)],
      ['signup_events', String(sum(ops.days, 'signup_events')), String(sum(ops.previous.days, 'signup_events'))],
      ['daily_use_events', String(sum(ops.days, 'daily_use_events')), String(sum(ops.previous.days, 'daily_use_events'))],
    ], 'the totals of the period and of the previous one')

    // The numbers table is the API's daily-ops; today's row says the day is not over.
    const rows = await tableRows(page)
    t.same(
      rows,
      ops.days.map((d: Day, i: number) => [today && i === days - 1 ? `${d.date} today so far` : d.date, d.registered_users, d.signup_events, d.daily_use_users, d.daily_use_events].map(String)),
      'the table rows are the daily-ops of the API, each fact once (active_users repeats daily_use_users)'
    )
    t.equal(await page.locator('table.daily tr.partial').count(), today ? 1 : 0, 'only today is marked partial')

    // The event summary: one row per event of the period, its total as the API's (and the previous period's), a sparkline of one point per day.
    t.equal(await page.locator('table.numbers').count(), 4, 'the totals, the daily numbers, the event summary, and its pivot')
    const summaryRows = await page.locator('table.events tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({
        event: tr.getAttribute('data-event'),
        total: tr.querySelector('[data-field=total]')!.textContent!.trim(),
        previous: tr.querySelector('[data-field=previous]')!.firstChild!.textContent!.trim(),
        points: tr.querySelectorAll('svg.spark circle').length,
      }))
    )
    const byName = (list: { event: string; count: number }[]) => Object.fromEntries(list.map((e) => [e.event, e.count]))
    const names = [...new Set([...summary.totals, ...summary.previous.totals].map((e: { event: string }) => e.event))]
    t.same(Object.fromEntries(summaryRows.map((r) => [r.event, Number(r.total)])), Object.fromEntries(names.map((n) => [n, byName(summary.totals)[n] ?? 0])), 'one row per event with the API total')
    t.same(Object.fromEntries(summaryRows.map((r) => [r.event, Number(r.previous)])), Object.fromEntries(names.map((n) => [n, byName(summary.previous.totals)[n] ?? 0])), 'and the previous period\'s')
    t.ok(summaryRows.every((r) => r.points === days), `a sparkline of ${days} days each`)
    // The pivot (events × days) holds the same counts as the API's days.
    const pivot = await page.locator('details.pivot tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())))
    const expectedPivot = summaryRows.map((r) => [
      ...summary.days.map((d: { events: { event: string; count: number }[] }) => String(d.events.find((e) => e.event === r.event)?.count || '·')),
      r.total,
    ])
    t.same(pivot, expectedPivot, 'the pivot is events × days of the API')
    return { ops, summaryRows }
  }

  const shoot = async (name: string) => {
    if (!process.env.SHOTS_DIR) return
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 })
      const file = path.join(process.env.SHOTS_DIR, `${name}-${width}.png`)
      await page.screenshot({ path: file, fullPage: true })
      t.comment(`screenshot: ${file}`)
    }
    await page.setViewportSize({ width: 1200, height: 900 })
  }

  await t.test('7 days', async (t) => {
    t.equal(await page.locator('.tabs a.on').innerText(), '7 days', 'the default range is marked')
    const { ops, summaryRows } = await check(t, 'window=7d', 7)
    t.same(
      ops.days.map((d: Day) => [d.date, d.registered_users, d.daily_use_users, d.signup_events, d.daily_use_events]),
      EXPECTED_7D,
      'the API counts the ingested events as expected'
    )
    t.same(await tableRows(page).then((rows) => rows.map((r) => r[0]!.slice(0, 10))), EXPECTED_7D.map((d) => d[0]), 'today and the 6 days before')
    t.same(summaryRows.map((r) => [r.event, r.total, r.previous]), [['daily_use', '7', '1'], ['page_view', '3', '0'], ['signup', '3', '1']], 'events by name with their 7-day totals, and the 7 days before')
    t.equal(await page.locator('tr[data-event=page_view] td[data-label="Peak daily users"]').innerText(), '2', 'page_view today: 2 users')
    t.equal(await page.locator('tr[data-total=registered_users] [data-field=change]').innerText(), '▲ 200 %', 'signups: 3 against 1')
    await shoot('metrics-7d')
  })

  await t.test('30 and 90 days from the picker', async (t) => {
    await clickAndWait(page, page.locator('.tabs a', { hasText: '30 days' }))
    t.equal(new URL(page.url()).searchParams.get('range'), '30d', 'the range is in the address: a link')
    t.equal(await page.locator('.tabs a.on').innerText(), '30 days')
    const { ops, summaryRows } = await check(t, 'window=30d', 30)
    t.equal(ops.days[0].date, '2026-10-22', 'today and the 29 days before')
    t.match(ops.days.find((d: Day) => d.date === '2026-11-10'), { registered_users: 1, daily_use_users: 1 })
    t.same(summaryRows.map((r) => [r.event, r.total]), [['daily_use', '8'], ['page_view', '3'], ['signup', '4']], 'the older events count in the 30-day totals')
    await clickAndWait(page, page.locator('.tabs a', { hasText: '90 days' }))
    t.equal(new URL(page.url()).searchParams.get('range'), '90d')
    t.equal(await page.locator('.tabs a.on').innerText(), '90 days')
    await check(t, 'from=2026-08-23&to=2026-11-20', 90)
    t.same([await page.inputValue('input[name=from]'), await page.inputValue('input[name=to]')], ['2026-08-23', '2026-11-20'], 'the custom fields show the days shown')
    await shoot('metrics-90d')
    await clickAndWait(page, page.locator('.tabs a', { hasText: '7 days' }))
    t.same((await polylines(page)).map((l) => l.points.length), [6, 6], 'and back to 7 days')
  })

  await t.test('a custom range, compared, that ends before today', async (t) => {
    await page.fill('input[name=from]', '2026-11-10')
    await page.fill('input[name=to]', '2026-11-16')
    await clickAndWait(page, page.locator('.range-form button[type=submit]'))
    const address = new URL(page.url())
    t.same([address.searchParams.get('from'), address.searchParams.get('to')], ['2026-11-10', '2026-11-16'], 'from and to in the address')
    t.equal(await page.locator('.tabs a.on').count(), 0, 'no preset is marked')
    await check(t, 'from=2026-11-10&to=2026-11-16', 7, false)
    t.match(await page.locator('[data-field=period]').innerText(), /compared with 2026-11-03 – 2026-11-09/)
    t.match(await page.locator('a', { hasText: 'Download CSV' }).getAttribute('href'), /metrics\.csv\?from=2026-11-10&to=2026-11-16$/, 'the download is of the days shown')
    await shoot('metrics-custom')
  })

  await t.test('a range that does not work is said, and the last 7 days shown', async (t) => {
    for (const [query, says] of [['from=2026-11-16&to=2026-11-10', /to must not be before from/], ['from=2026-11-10', /to is required with from/], ['range=1y', /range must be 7d, 30d, 90d/], ['from=2026-11-01&to=2026-11-21', /to must not be after today/]] as const) {
      const res = await page.goto(`${url}/console/projects/${ws.project.slug}/metrics?${query}`)
      t.equal(res!.status(), 400, query)
      t.match(await page.locator('[data-field=range-error]').innerText(), says, `${query}: said`)
      t.equal(await tableRows(page).then((rows) => rows.length), 7, 'the last 7 days below it')
    }
    t.equal(await page.inputValue('input[name=from]'), '2026-11-01', 'the refused range stays in the form to correct')
  })

  await t.test('the picker works without JavaScript', async (t) => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1200, height: 900 } })
    t.teardown(() => context.close())
    await context.addCookies(await page.context().cookies())
    const plain = await context.newPage()
    await plain.goto(`${url}/console/projects/${ws.project.slug}/metrics`)
    await plain.fill('input[name=from]', '2026-11-01')
    await plain.fill('input[name=to]', '2026-11-20')
    await Promise.all([plain.waitForNavigation(), plain.click('.range-form button[type=submit]')])
    t.equal(new URL(plain.url()).search, '?from=2026-11-01&to=2026-11-20')
    t.equal(await plain.locator('table.daily tbody tr').count(), 20, 'the 20 days asked for')
    await Promise.all([plain.waitForNavigation(), plain.click('.tabs a:has-text("30 days")')])
    t.equal(await plain.locator('table.daily tbody tr').count(), 30)
  })
})
