// "After the decision" in Chromium: an adopted opportunity's page shows, per metric, the average
// day before and after its decision, the change, how unusual it is, a chart with the decision day
// marked, and the caveat; a pending one's page has no such panel. At 1280 and 390 px it fits
// (nothing sideways at 390). Screenshots go to /tmp/impact-*.png (or SHOTS_DIR).
import t from 'tap'
import { bearer, fixedClock, ingestEvents, listenTestApp, seedWorkspace } from '../helpers/app.ts'
import { dayRange } from '../../core/time.ts'
import { ACTION_TIMEOUT, FILE_TIMEOUT, browserSkip, launchChromium, signIn } from './helpers.ts'

t.setTimeout(FILE_TIMEOUT)
const skip = browserSkip(t)
const SHOTS = process.env.SHOTS_DIR || '/tmp'

const DECIDED = '2026-11-06T14:00:00.000Z' // decision day 2026-11-06
const NOW = '2026-11-26T10:00:00.000Z' // 14 closed after-days: 11-07 to 11-20

t.test('the impact panel of an adopted opportunity, 1280 and 390 px', { skip }, async (t) => {
  const clock = fixedClock(NOW)
  const { app, url } = await listenTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const api = `/api/v1/mcp/projects/${ws.project.id}/opportunities`

  // Daily users rising from about 36 to 43 before and about 52 after, with a weekly wobble; signups about the same.
  const events: [string, string, string][] = []
  const wobble = [0, 3, -2, 4, -3, 1, -1]
  const add = (days: readonly string[], base: number, signups: number, rise = 0) => days.forEach((d, i) => {
    for (let u = 0; u < base + Math.floor(i * rise) + wobble[i % 7]!; u++) events.push(['daily_use', `u${u}`, `${d}T${String(8 + (u % 10)).padStart(2, '0')}:00:00Z`])
    for (let s = 0; s < signups + (i % 3); s++) events.push(['signup', `s${s}-${d}`, `${d}T09:30:00Z`])
  })
  add(dayRange('2026-11-05', 14), 36, 5, 0.5)
  add(dayRange('2026-11-20', 14), 52, 5)
  let accepted = 0
  for (let i = 0; i < events.length; i += 1000) accepted += (await ingestEvents(app, ws.keys.ingest, events.slice(i, i + 1000))).accepted
  t.equal(accepted, events.length)

  const submit = async (text: string) => {
    const res = await app.inject({ method: 'POST', url: '/v1/tools/submit_opportunity', headers: bearer(ws.keys.service), payload: { project: ws.project.id, contribution_type: 'content_idea', key_information: text, reason: 'Readers keep asking for it.', suggested_action: 'Write it this month.' } })
    return res.json().result.event_id as string
  }
  const adopted = await submit('Publish a step-by-step onboarding guide with the three most asked questions')
  const pending = await submit('A podcast host offers a guest slot in March')
  clock.set(DECIDED)
  const review = await app.inject({ method: 'PATCH', url: `${api}/${adopted}/review`, headers: bearer(ws.keys.mcp), payload: { status: 'adopted', evaluation: 'useful', note: 'Agreed: starting next sprint.' } })
  t.equal(review.statusCode, 200, review.body)
  clock.set(NOW)
  const impact = (await app.inject({ method: 'GET', url: `${api}/${adopted}/impact`, headers: bearer(ws.keys.mcp) })).json()
  const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1))
  const daily = impact.metrics.find((m: { metric: string }) => m.metric === 'daily_users')

  const browser = await launchChromium(t)
  const errors: string[] = []
  for (const [width, height] of [[1280, 900], [390, 844]] as const) {
    const context = await browser.newContext({ viewport: { width, height } })
    context.setDefaultTimeout(ACTION_TIMEOUT)
    context.setDefaultNavigationTimeout(ACTION_TIMEOUT)
    t.teardown(() => context.close())
    const page = await context.newPage()
    page.on('pageerror', (err) => errors.push(err.message))
    await signIn(page, url, ws.user.email, ws.user.password)

    await page.goto(`${url}/console/projects/${ws.project.slug}/opportunities/${adopted}`)
    const panel = page.locator('section.impact')
    t.ok(await panel.isVisible(), `${width}: the panel is shown`)
    t.equal(await panel.locator('h2').textContent(), 'After the decision')
    t.match(await panel.locator('.impact-moment').textContent(), /Became adopted .*The 14 days before 2026-11-06 against the 14 days after; that day itself is in neither\./s)
    t.equal(await panel.locator('.impact-metric').count(), 2, 'registrations and daily users')
    const users = panel.locator('.impact-metric[data-metric="daily_users"]')
    t.equal((await users.locator('.impact-numbers').textContent())?.replace(/\s+/g, ' ').trim(), `${fmt(daily.before_mean)} a day → ${fmt(daily.after_mean)} a day`)
    t.match(await users.locator('.impact-change').textContent(), /^\+1\d(\.\d)? a day \(\+\d+(\.\d)?%\)$/)
    t.equal(await users.getAttribute('data-unusualness'), daily.unusualness)
    t.match(await users.locator('.badge.unusualness').textContent(), new RegExp(`z = ${daily.z}\\)`))
    // Already rising before: the trend alone gives a typical swing or more, and the panel says so.
    t.ok(Math.abs(daily.trend_change) >= daily.spread, `a trend of ${daily.trend_change} against a spread of ${daily.spread}`)
    t.match(await users.locator('.impact-trend').textContent(), /^Already rising before the decision: that trend alone gives \+\d+(\.\d)? a day\.$/)
    t.equal(await panel.locator('.impact-metric[data-metric="registrations"] .impact-trend').count(), 0, 'no trend line for flat registrations')
    t.equal(await users.locator('svg.impact-chart circle').count(), 28, '14 days before and 14 after, the decision day in neither')
    t.equal(await users.locator('svg.impact-chart line.decision').count(), 1, 'the decision day is marked')
    t.match(await panel.locator('.impact-caveat').textContent(), /what happened after the decision, not what the decision caused/)
    const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth }))
    t.ok(scrollWidth <= innerWidth, `${width}: nothing sideways (${scrollWidth} ≤ ${innerWidth})`)
    await panel.scrollIntoViewIfNeeded()
    await page.screenshot({ path: `${SHOTS}/impact-${width}.png`, fullPage: width === 390 })
    await panel.screenshot({ path: `${SHOTS}/impact-panel-${width}.png` })

    await page.goto(`${url}/console/projects/${ws.project.slug}/opportunities/${pending}`)
    t.equal(await page.locator('section.impact').count(), 0, `${width}: a pending opportunity has no impact panel`)
  }
  t.same(errors, [], 'no page errors')
})
