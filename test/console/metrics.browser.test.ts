// The metrics page in Chromium on a pinned clock: events ingested through the API show up in
// the SVG chart (two series, one point per day, heights in proportion, round ticks), in the
// numbers table (the API's daily-ops, each fact once) and in the event summary (one row per
// event with a sparkline and its total); 7 and 30 days.
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

/** The body rows of the n-th table.numbers on the page, as text cells. */
const tableRows = (page: Page, n: number) =>
  page.locator('table.numbers').nth(n).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent!.trim())))

/** The chart's polylines: class and [x, y] points. */
const polylines = (page: Page) =>
  page.locator('figure.chart svg.wide polyline').evaluateAll((els) =>
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
  const apiGet = async (what: string, window: string) => {
    const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/${what}?window=${window}`, headers: bearer(ws.keys.mcp) })
    if (res.statusCode !== 200) throw new Error(`${what}: ${res.statusCode} ${res.body}`)
    return res.json()
  }

  const browser = await launchChromium(t)
  const page = await newPage(browser)
  await signIn(page, url, ws.user.email, ws.user.password)
  await clickAndWait(page, page.locator('main a', { hasText: 'Metrics' }))
  t.equal(new URL(page.url()).pathname, `/console/projects/${ws.project.slug}/metrics`, 'the home page links to the metrics')

  const check = async (t: Test, window: '7d' | '30d', days: number) => {
    const ops = await apiGet('daily-ops', window)
    const summary = await apiGet('daily-event-summary', window)
    t.equal(ops.days.length, days)
    t.equal(await page.locator('.tabs a.on').innerText(), window === '7d' ? '7 days' : '30 days', 'the window is marked')

    // The chart: an <svg> with two series of one point per day, heights proportional to the values.
    t.equal(await page.locator('figure.chart svg.wide').count(), 1, 'an <svg> chart')
    const lines = await polylines(page)
    t.same(lines.map((l) => l.className), ['s1', 's2'], 'two polylines')
    t.same(lines.map((l) => l.points.length), [days, days], `${days} points each`)
    const max = niceTicks(Math.max(...ops.days.flatMap((d: Day) => [d.registered_users, d.daily_use_users]))).at(-1)!
    const yOf = (v: number) => 12 + 220 - (v / max) * 220
    const ys = (field: 'registered_users' | 'daily_use_users') => ops.days.map((d: Day) => yOf(d[field]))
    for (const [i, field] of (['registered_users', 'daily_use_users'] as const).entries()) {
      const got = lines[i]!.points.map((p) => p[1]!)
      t.ok(got.every((y, j) => Math.abs(y - ys(field)[j]) < 0.11), `${field}: point heights follow the values`)
      const xs = lines[i]!.points.map((p) => p[0]!)
      t.ok(xs.every((x, j) => j === 0 || x > xs[j - 1]!), `${field}: points left to right`)
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
    const dots = await page.locator('figure.chart svg.wide circle').evaluateAll((els) => [...new Set(els.map((el) => `${el.getAttribute('class')} ${getComputedStyle(el).fill}`))].sort())
    t.same(dots, ['s1 rgb(47, 91, 234)', 's2 rgb(22, 160, 133)'], 'the dots have the colours of their series')

    // The numbers table is the API's daily-ops.
    const rows = await tableRows(page, 0)
    t.same(
      rows,
      ops.days.map((d: Day) => [d.date, d.registered_users, d.signup_events, d.daily_use_users, d.daily_use_events].map(String)),
      'the table rows are the daily-ops of the API, each fact once (active_users repeats daily_use_users)'
    )

    // The event summary: one row per event of the window, its total as the API's, a sparkline of one point per day.
    t.equal(await page.locator('table.numbers').count(), 3, 'daily numbers, the event summary, and its pivot')
    const summaryRows = await page.locator('table.events tbody tr').evaluateAll((trs) =>
      trs.map((tr) => ({ event: tr.getAttribute('data-event'), total: tr.querySelector('[data-field=total]')!.textContent!.trim(), points: tr.querySelectorAll('svg.spark circle').length }))
    )
    const totals = Object.fromEntries(summary.totals.map((e: { event: string; count: number }) => [e.event, e.count]))
    t.same(Object.fromEntries(summaryRows.map((r) => [r.event, Number(r.total)])), totals, 'one row per event with the API total')
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

  await t.test('7 days', async (t) => {
    const { ops, summaryRows } = await check(t, '7d', 7)
    t.same(
      ops.days.map((d: Day) => [d.date, d.registered_users, d.daily_use_users, d.signup_events, d.daily_use_events]),
      EXPECTED_7D,
      'the API counts the ingested events as expected'
    )
    t.same(await tableRows(page, 0).then((rows) => rows.map((r) => r[0])), EXPECTED_7D.map((d) => d[0]), 'today and the 6 days before')
    t.same(summaryRows.map((r) => [r.event, r.total]), [['daily_use', '7'], ['page_view', '3'], ['signup', '3']], 'events by name with their 7-day totals')
    t.equal(await page.locator('tr[data-event=page_view] td[data-label="Peak daily users"]').innerText(), '2', 'page_view today: 2 users')

    if (process.env.SHOTS_DIR) {
      const file = path.join(process.env.SHOTS_DIR, 'metrics-7d.png')
      await page.screenshot({ path: file, fullPage: true })
      t.comment(`screenshot: ${file}`)
    }
  })

  await t.test('30 days', async (t) => {
    await clickAndWait(page, page.locator('.tabs a', { hasText: '30 days' }))
    t.equal(new URL(page.url()).searchParams.get('window'), '30d')
    const { ops, summaryRows } = await check(t, '30d', 30)
    t.equal(ops.days[0].date, '2026-10-22', 'today and the 29 days before')
    t.match(ops.days.find((d: Day) => d.date === '2026-11-10'), { registered_users: 1, daily_use_users: 1 })
    t.same(summaryRows.map((r) => [r.event, r.total]), [['daily_use', '8'], ['page_view', '3'], ['signup', '4']], 'the older events count in the 30-day totals')
    await clickAndWait(page, page.locator('.tabs a', { hasText: '7 days' }))
    t.same((await polylines(page)).map((l) => l.points.length), [7, 7], 'and back to 7 days')
  })
})
