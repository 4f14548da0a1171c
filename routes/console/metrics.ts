// A project's Metrics page: daily signups and daily users over a chosen range (7, 30 or 90 days,
// or any from/to), beside the previous period of equal length, as a chart (drawn for desktops and
// for phones) and a table, today's partial day marked; and the day-by-day event summary with a
// sparkline per event. The range lives in the query string, so a view is a link.
import type { FastifyInstance } from 'fastify'
import type { Static } from '@sinclair/typebox'
import { lineChart, sparkline, type Series } from './chart.ts'
import { changeBadge } from './format.ts'
import getDailyOps from '../../tools/get-daily-ops.ts'
import getDailyEventSummary from '../../tools/get-daily-event-summary.ts'
import getRetention from '../../tools/get-retention.ts'
import type { DailyOps } from '../../schemas/metrics.ts'
import { addDays, localDate } from '../../core/time.ts'
import { describe, projectAccess, run, type Form } from './actions.ts'

/** The picker's presets: `range=` in the query string (`window=` of older links is read too). */
const PRESETS = { '7d': 7, '30d': 30, '90d': 90 } as const
type Preset = keyof typeof PRESETS

/** The arguments of the reads for the query string: a preset, or `from`/`to` as sent (the reads judge them). */
function rangeArgs(query: Form, today: string): { preset: Preset | null; args: Record<string, string>; error?: string } {
  const { from, to } = query
  if (from || to) return { preset: null, args: { ...(from ? { from } : {}), ...(to ? { to } : {}) } }
  const preset = query.range ?? query.window ?? '7d'
  if (preset === '90d') return { preset, args: { from: addDays(today, -89), to: today } }
  if (preset === '7d' || preset === '30d') return { preset, args: { window: preset } }
  return { preset: '7d', args: { window: '7d' }, error: `range must be ${Object.keys(PRESETS).join(', ')}, or send from and to` }
}

type Day = Static<typeof DailyOps>['days'][number]
const sum = (days: Day[], f: (d: Day) => number) => days.reduce((n, d) => n + f(d), 0)
const change = (current: number, previous: number) => (previous > 0 ? (current - previous) / previous : null)

export function metricsPages(app: FastifyInstance) {
  app.get<{ Params: { project: string } }>('/console/projects/:project/metrics', async (request, reply) => {
    const query = request.query as Form
    const project = await projectAccess(request, request.params.project)
    // No access: the read answers (404) as on every surface.
    if (!project) await run(request, getDailyOps, {}, request.params.project)
    const today = localDate(app.now(), project!.timezone)
    let { preset, args, error = null } = rangeArgs(query, today)
    if (error) reply.code(400)
    const read = () => Promise.all([
      run(request, getDailyOps, { ...args, compare: true }, request.params.project),
      run(request, getDailyEventSummary, { ...args, compare: true }, request.params.project),
    ])
    let ops, summary
    try {
      ;[ops, summary] = await read()
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 400) throw err
      // A range that does not work: said above the picker, with the last 7 days below it.
      error = describe(err)
      preset = '7d'
      args = { window: '7d' }
      ;[ops, summary] = await read()
      reply.code(400)
    }
    const previous = ops.previous!
    const partial = ops.to === today
    const dates = ops.days.map((d) => d.date)
    const before = previous.days.map((d) => d.date)
    const series: Series[] = [
      { className: 's1', label: `new users (signups), ${previous.from} – ${previous.to}`, values: previous.days.map((d) => d.registered_users), previous: { labels: before } },
      { className: 's2', label: `daily users, ${previous.from} – ${previous.to}`, values: previous.days.map((d) => d.daily_use_users), previous: { labels: before } },
      { className: 's1', label: 'new users (signups)', values: ops.days.map((d) => d.registered_users) },
      { className: 's2', label: 'daily users', values: ops.days.map((d) => d.daily_use_users) },
    ]
    // Two drawings of one chart: wide for desktops, and taller with fewer, larger labels for phones (CSS shows one).
    const chart = lineChart(dates, series, { className: 'wide', partialLast: partial }) +
      lineChart(dates, series, { className: 'narrow', width: 420, height: 300, maxLabels: 5, fontSize: 13, partialLast: partial })
    // The period's totals beside the previous period's (daily users: the average a day, as the overview's).
    const average = (days: Day[]) => Math.round((sum(days, (d) => d.daily_use_users) / Math.max(1, days.length)) * 100) / 100
    const totals = ([
      ['registered_users', 'New users (signups)', (days: Day[]) => sum(days, (d) => d.registered_users)],
      ['daily_use_users', 'Daily users, average a day', average],
      ['signup_events', 'Signup events', (days: Day[]) => sum(days, (d) => d.signup_events)],
      ['daily_use_events', 'Daily use events', (days: Day[]) => sum(days, (d) => d.daily_use_events)],
    ] as const).map(([key, label, of]) => {
      const [current, prior] = [of(ops.days), of(previous.days)]
      return { key, label, current, previous: prior, change: changeBadge(change(current, prior)) }
    })
    // The event summary as one row per event: its daily counts (oldest first) with a sparkline, the total and the previous period's.
    const names = [...new Set([...summary.totals, ...summary.previous!.totals].map((t) => t.event))].sort()
    const events = names.map((event) => {
      const counts = summary.days.map((d) => d.events.find((e) => e.event === event)?.count ?? 0)
      const users = summary.days.map((d) => d.events.find((e) => e.event === event)?.unique_users ?? 0)
      const total = summary.totals.find((t) => t.event === event)?.count ?? 0
      const prior = summary.previous!.totals.find((t) => t.event === event)?.count ?? 0
      return { event, counts, users, total, previous: prior, change: changeBadge(change(total, prior)), peakUsers: Math.max(0, ...users), spark: sparkline(dates, counts) }
    })
    // The picker's own values: the custom range as sent (so a refused one can be corrected), else the days shown.
    const picked = { preset, from: error ? query.from ?? '' : ops.from, to: error ? query.to ?? '' : ops.to }
    const csvQuery = new URLSearchParams(ops.window ? { window: ops.window } : { from: ops.from, to: ops.to }).toString()
    // The retention grid of the range's signups: by day up to a month of cohorts, by week beyond.
    const retention = await run(request, getRetention, { from: ops.from, to: ops.to, ...(ops.days.length > 31 ? { period: 'week' } : {}) }, request.params.project)
    const page = { project, ops, summary, events, chart, totals, partial, today, picked, error, csvQuery, retention, presets: Object.keys(PRESETS) }
    return reply.page('metrics', { title: `Metrics · ${project!.name}`, ...page })
  })
}
