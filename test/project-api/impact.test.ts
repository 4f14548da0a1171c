// get_opportunity_impact over a known dataset: a step in daily users after an adopted
// opportunity's decision, with the clock pinned. The means, the change and z are exact; the
// decision day is in neither period; days not closed yet are left out and counted; an
// opportunity never adopted or done is a 409 and a merged or unknown one a 404; REST, /v1/tools
// and MCP answer the same.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { addMember, bearer, buildTestApp, expectStatus, fixedClock, ingestEvents, seedWorkspace } from '../helpers/app.ts'
import { mcp, rest } from '../helpers/triage.ts'
import { addDays, dayRange } from '../../core/time.ts'

const base = (project: string) => `/api/v1/mcp/projects/${project}`
const DECIDED = '2026-11-10T15:00:00.000Z' // the decision day: 2026-11-10 (UTC project)
const NOW = '2026-11-20T12:00:00.000Z' // today: 2026-11-20, every day of a 7-day after-period has closed

// Daily users (distinct users with daily_use) of the 7 days before and after the decision day.
const BEFORE = [6, 14, 6, 14, 6, 14, 10] // mean 10, sample sd 4
const AFTER = [16, 20, 18, 22, 14, 18, 18] // mean 18: change 8, z = 8 / 4 = 2 (and the first three's mean too)
const ON_THE_DAY = 40 // the decision day itself: if it were counted, no mean above would hold

async function opportunity(app: FastifyInstance, projectId: string, userId: string, text: string) {
  const { opportunity: o } = await app.repos.opportunities.submit({ projectId, submittedBy: userId, contributionType: 'partnership', keyInformation: text, reason: 'r', suggestedAction: 'a', receivedAt: new Date('2026-11-01T10:00:00Z') })
  return o.event_id
}

t.test('get_opportunity_impact', async (t) => {
  const clock = fixedClock(DECIDED)
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const key = ws.keys.mcp
  const get = (id: string, query = '', k = key) => app.inject({ method: 'GET', url: `${base(project)}/opportunities/${id}/impact${query}`, headers: bearer(k) })
  const review = async (id: string, status: string) => expectStatus(t, await app.inject({ method: 'PATCH', url: `${base(project)}/opportunities/${id}/review`, headers: bearer(key), payload: { status } }), 200)

  // The dataset: daily_use of distinct users each day, two signups a day before the decision
  // and four after, page views by 3 users a day (2 views each) after it only.
  const events: [string, string, string][] = []
  const day = (d: string, hour: number) => `${d}T${String(hour).padStart(2, '0')}:00:00Z`
  const users = (d: string, n: number, event = 'daily_use') => {
    for (let u = 0; u < n; u++) events.push([event, `u${u}@${d}`, day(d, 8 + (u % 12))])
  }
  dayRange('2026-11-09', 7).forEach((d, i) => { users(d, BEFORE[i]!); users(d, 2, 'signup') })
  dayRange('2026-11-17', 7).forEach((d, i) => {
    users(d, AFTER[i]!)
    users(d, 4, 'signup')
    for (let u = 0; u < 3; u++) events.push(['page_view', `v${u}`, day(d, 9)], ['page_view', `v${u}`, day(d, 10)])
  })
  users('2026-11-10', ON_THE_DAY)
  users('2026-11-10', 30, 'signup')
  clock.set(NOW) // events up to a day ahead only
  t.equal((await ingestEvents(app, ws.keys.ingest, events)).accepted, events.length)

  clock.set('2026-11-07T09:00:00.000Z')

  const adopted = await opportunity(app, project, ws.user.id, 'Adopted after review')
  await review(adopted, 'reviewing')
  clock.set('2026-11-08T09:00:00.000Z')
  await review(adopted, 'contacted')
  clock.set(DECIDED)
  await review(adopted, 'adopted')
  clock.set(NOW)

  t.test('the numbers: means, change, z against the before-days\' spread, and both series', async (t) => {
    const res = await get(adopted, '?days=7')
    expectStatus(t, res, 200)
    const r = res.json()
    t.match(r, {
      event_id: adopted,
      status: 'adopted',
      timezone: 'UTC',
      today: '2026-11-20',
      decision: { status: 'adopted', at: DECIDED, day: '2026-11-10', adopted_at: DECIDED, done_at: null },
      days: 7,
      before: { from: '2026-11-03', to: '2026-11-09', days_counted: 7, days_left_out: 0 },
      after: { from: '2026-11-11', to: '2026-11-17', days_counted: 7, days_left_out: 0 },
    })
    t.same(r.metrics.map((m: { metric: string }) => m.metric), ['registrations', 'daily_users'], 'the default metrics, in order')
    const [registrations, daily] = r.metrics
    t.same(daily, {
      metric: 'daily_users',
      label: 'Daily users',
      before_mean: 10,
      after_mean: 18,
      change: 8,
      relative_change: 0.8,
      before_sd: 4,
      spread: 4,
      z: 2,
      unusualness: 'very_unusual',
      // The before-days' slope: 12 / 28 a day; their middle (day 3) to the after-days' (day 11) is 8 days.
      before_trend: 0.43,
      trend_change: 3.43,
      before: dayRange('2026-11-09', 7).map((date, i) => ({ date, value: BEFORE[i] })),
      after: dayRange('2026-11-17', 7).map((date, i) => ({ date, value: AFTER[i] })),
    })
    // A flat before-period (2 a day, sd 0): the spread is √2, not 0, so z is finite: 2 / √2.
    t.match(registrations, { before_mean: 2, after_mean: 4, change: 2, relative_change: 1, before_sd: 0, spread: 1.41, z: 1.41, unusualness: 'unusual', before_trend: 0, trend_change: 0 })
    t.match(r.note, /Measured from when it became adopted\. Before: the 7 days 2026-11-03 to 2026-11-09; after: the 7 days 2026-11-11 to 2026-11-17\. The decision day, 2026-11-10 \(UTC\), is in neither\. Every day of both periods has closed\./)
    t.match(r.caveat, /what happened after the decision, not what the decision caused/)
  })

  t.test('the decision day is in neither period', async (t) => {
    const r = (await get(adopted, '?days=7')).json()
    for (const m of r.metrics) {
      t.notOk([...m.before, ...m.after].some((d: { date: string }) => d.date === '2026-11-10'), `${m.metric}: no value of 2026-11-10`)
      t.notOk([...m.before, ...m.after].some((d: { value: number }) => d.value >= 30), `${m.metric}: the decision day's ${ON_THE_DAY} users and 30 signups are nowhere`)
    }
  })

  t.test('default: 14 days either side; days before any event are zeros', async (t) => {
    const r = (await get(adopted)).json()
    t.equal(r.days, 14)
    t.match(r.before, { from: '2026-10-27', to: '2026-11-09', days_counted: 14, days_left_out: 0 })
    // Today (2026-11-20) is the 10th after-day: 9 have closed; the 10th to 14th have not.
    t.match(r.after, { from: '2026-11-11', to: '2026-11-24', days_counted: 9, days_left_out: 5 })
    const daily = r.metrics[1]
    t.same(daily.before.map((d: { value: number }) => d.value), [0, 0, 0, 0, 0, 0, 0, ...BEFORE])
    t.same(daily.after.map((d: { value: number }) => d.value), [...AFTER, 0, 0])
    t.equal(daily.before_mean, 5)
    t.match(r.note, /5 days of the after-period have not closed yet and are left out \(today, 2026-11-20, is partial\)\./)
  })

  t.test('an after-period still under way: today and later are left out and counted', async (t) => {
    clock.set('2026-11-14T12:00:00.000Z')
    t.teardown(() => clock.set(NOW))
    const r = (await get(adopted, '?days=7')).json()
    t.match(r.after, { from: '2026-11-11', to: '2026-11-17', days_counted: 3, days_left_out: 4 })
    const daily = r.metrics[1]
    t.same(daily.after, dayRange('2026-11-13', 3).map((date, i) => ({ date, value: AFTER[i] })), 'the closed days only: not today, 2026-11-14')
    t.equal(daily.after_mean, 18, 'today\'s 22 so far is not in the mean (it would be 19)')
    t.equal(daily.z, 2)
    t.equal(daily.trend_change, 2.57, 'the before-trend over 6 days, middle to middle (0.43 × 6)')
    t.match(r.note, /4 days of the after-period have not closed yet and are left out \(today, 2026-11-14, is partial\)\./)

    // Decided today: no after-day has closed; nothing to compare yet, and it says so.
    clock.set('2026-11-10T20:00:00.000Z')
    const early = (await get(adopted, '?days=7')).json()
    t.match(early.after, { days_counted: 0, days_left_out: 7 })
    t.match(early.metrics[1], { before_mean: 10, after_mean: null, change: null, relative_change: null, z: null, unusualness: null, before_trend: 0.43, trend_change: null, after: [] })
    t.match(early.note, /7 days of the after-period have not closed yet .*: there is no after-day to compare yet\./)
  })

  t.test('any event, as users or as a count', async (t) => {
    const res = await get(adopted, '?days=7&metrics=users:page_view&metrics=events:page_view')
    expectStatus(t, res, 200)
    const [users, count] = res.json().metrics
    t.match(users, { metric: 'users:page_view', label: 'Users with page_view', before_mean: 0, after_mean: 3, change: 3, relative_change: null, spread: 1, z: 3, unusualness: 'very_unusual' })
    t.match(count, { metric: 'events:page_view', label: 'page_view events', before_mean: 0, after_mean: 6, z: 6 })
    const one = await get(adopted, '?days=7&metrics=signup_events')
    t.same(one.json().metrics.map((m: { metric: string }) => m.metric), ['signup_events'], 'one metric in the query string is a list of one')
  })

  t.test('adopted, then done: measured from the later unless asked; both times are there', async (t) => {
    const id = await opportunity(app, project, ws.user.id, 'Adopted, then done')
    clock.set('2026-11-05T10:00:00.000Z')
    await review(id, 'adopted')
    clock.set(DECIDED)
    await review(id, 'done')
    clock.set(NOW)
    const latest = (await get(id, '?days=7')).json()
    t.match(latest.decision, { status: 'done', at: DECIDED, day: '2026-11-10', adopted_at: '2026-11-05T10:00:00.000Z', done_at: DECIDED })
    t.match(latest.note, /^It became both adopted \(2026-11-05T10:00:00.000Z\) and done \(2026-11-10T15:00:00.000Z\): measured from done, the later\./)
    const asked = (await get(id, '?days=7&decision=adopted')).json()
    t.match(asked.decision, { status: 'adopted', day: '2026-11-05' })
    t.match(asked.before, { from: '2026-10-29', to: '2026-11-04' })
    t.match(asked.note, /measured from adopted, as asked\./)

    // Setting the status it already has is no new decision: the moment stays.
    clock.set('2026-11-12T10:00:00.000Z')
    await review(id, 'done')
    clock.set(NOW)
    t.equal((await get(id, '?days=7')).json().decision.at, DECIDED)
  })

  t.test('never adopted or done: 409 saying its status; merged or unknown: 404; nothing changes', async (t) => {
    const pending = await opportunity(app, project, ws.user.id, 'Still pending')
    let res = await get(pending)
    expectStatus(t, res, 409)
    t.same(res.json(), { error: { code: 'conflict', message: `Opportunity '${pending}' is pending and has never been adopted or done: there is no decision to measure from. Its impact can be read once its status becomes adopted or done.` } })

    res = await get(adopted, '?decision=done')
    expectStatus(t, res, 409)
    t.equal(res.json().error.message, `Opportunity '${adopted}' has never become done (it is adopted); it became adopted at ${DECIDED}: ask for that decision, or leave decision out.`)

    // Adopted once, then dropped: the decision was made, and its moment is still there.
    const dropped = await opportunity(app, project, ws.user.id, 'Adopted then ignored')
    clock.set(DECIDED)
    await review(dropped, 'adopted')
    clock.set(NOW)
    await review(dropped, 'ignored')
    const r = (await get(dropped, '?days=7')).json()
    t.match(r, { status: 'ignored', decision: { status: 'adopted', at: DECIDED } })

    res = await get('opp_doesNotExist1')
    expectStatus(t, res, 404)
    t.equal(res.json().error.message, `Opportunity 'opp_doesNotExist1' was not found in project '${ws.project.slug}'.`)

    const source = await opportunity(app, project, ws.user.id, 'A duplicate report')
    await review(source, 'adopted')
    expectStatus(t, await app.inject({ method: 'POST', url: `${base(project)}/opportunities/${adopted}/merge`, headers: bearer(key), payload: { source_ids: [source] } }), 200)
    res = await get(source)
    expectStatus(t, res, 404)
    t.equal(res.json().error.message, `Opportunity '${source}' is merged into '${adopted}': it has no decision of its own; read the impact of '${adopted}'.`)

    // Another workspace's opportunity is not found either.
    const other = await seedWorkspace(app)
    const theirs = await opportunity(app, other.project.id, other.user.id, 'Theirs')
    expectStatus(t, await get(theirs), 404)
  })

  t.test('bad input: 400 invalid_arguments naming the argument', async (t) => {
    const cases: [string, string, string][] = [
      ['?days=2', 'days', 'must be >= 3'],
      ['?days=91', 'days', 'must be <= 90'],
      ['?days=seven', 'days', 'must be integer'],
      ['?metrics=revenue', 'metrics[0]', 'must match pattern'],
      ['?metrics=', 'metrics[0]', 'must match pattern'],
      ['?metrics=users:', 'metrics[0]', 'must match pattern'],
      ['?metrics=daily_users&metrics=daily_users', 'metrics', 'must NOT have duplicate items'],
      ['?decision=contacted', 'decision', 'must be one of "adopted", "done"'],
      ['?window=7d', 'window', 'is not a known field'],
    ]
    for (const [query, path, message] of cases) {
      const res = await get(adopted, query)
      expectStatus(t, res, 400)
      const { error } = res.json()
      t.equal(error.code, 'invalid_arguments', query)
      t.ok(error.details.every((d: { path: string }) => d.path === path), `${query}: ${JSON.stringify(error.details)}`)
      t.ok(error.details.some((d: { message: string }) => d.message.startsWith(message)), `${query}: ${message}`)
    }
    expectStatus(t, await get('mem_5Nq1Yc8ZrT3wLx7DfH2k'), 400)
  })

  t.test('a viewer reads it; REST, /v1/tools and MCP answer the same', async (t) => {
    const viewer = await addMember(app, project, 'viewer')
    const viaRoute = await get(adopted, '?days=7&metrics=daily_users&metrics=users:page_view', viewer.keys.mcp)
    expectStatus(t, viaRoute, 200)
    const args = { project, event_id: adopted, days: 7, metrics: ['daily_users', 'users:page_view'] }
    const viaTools = await rest(app, viewer.keys.service, 'get_opportunity_impact', args)
    const viaMcp = await mcp(app, viewer.keys.mcp, 'get_opportunity_impact', args)
    t.equal(viaTools.status, 200)
    t.same(viaTools.body.result, viaRoute.json(), '/v1/tools = REST route')
    t.same(viaMcp.body.result, viaRoute.json(), 'MCP = REST route')
    const pending = await opportunity(app, project, ws.user.id, 'Pending, asked everywhere')
    const errors = await Promise.all([
      get(pending).then((r) => ({ status: r.statusCode, body: r.json() })),
      rest(app, ws.keys.service, 'get_opportunity_impact', { project, event_id: pending }),
      mcp(app, ws.keys.mcp, 'get_opportunity_impact', { project, event_id: pending }),
    ])
    t.same(errors[1], errors[0], '/v1/tools: the same 409')
    t.same(errors[2], errors[0], 'MCP: the same error')
  })

  t.test('the decision day is a day of the project\'s time zone', async (t) => {
    const id = await opportunity(app, project, ws.user.id, 'Adopted late in the evening, New York time')
    clock.set('2026-11-11T03:30:00.000Z') // 22:30 on 2026-11-10 in New York
    await review(id, 'adopted')
    clock.set(NOW)
    const res = await rest(app, ws.keys.service, 'update_project', { project, timezone: 'America/New_York' })
    t.equal(res.status, 200)
    const r = (await get(id, '?days=3')).json()
    t.match(r, { timezone: 'America/New_York', decision: { day: '2026-11-10' }, before: { to: '2026-11-09' }, after: { from: '2026-11-11' } })
    t.equal(addDays(r.decision.day, 1), r.after.from)
  })
})
