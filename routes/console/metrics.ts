// A project's Metrics page: daily signups and daily users as a chart (drawn for desktops and
// for phones), and the day-by-day event summary with a sparkline per event.
import type { FastifyInstance } from 'fastify'
import { lineChart, sparkline } from './chart.ts'
import getDailyOps from '../../tools/get-daily-ops.ts'
import getDailyEventSummary from '../../tools/get-daily-event-summary.ts'
import { projectAccess, run, type Form } from './actions.ts'

export function metricsPages(app: FastifyInstance) {
  app.get<{ Params: { project: string } }>('/console/projects/:project/metrics', async (request, reply) => {
    const window = (request.query as Form).window === '30d' ? '30d' : '7d'
    const [ops, summary] = await Promise.all([
      run(request, getDailyOps, { window }, request.params.project),
      run(request, getDailyEventSummary, { window }, request.params.project),
    ])
    const project = await projectAccess(request, request.params.project)
    const dates = ops.days.map((d) => d.date)
    const series = [
      { className: 's1', label: 'new users (signups)', values: ops.days.map((d) => d.registered_users) },
      { className: 's2', label: 'daily users', values: ops.days.map((d) => d.daily_use_users) },
    ]
    // Two drawings of one chart: wide for desktops, and taller with fewer, larger labels for phones (CSS shows one).
    const chart = lineChart(dates, series, { className: 'wide' }) + lineChart(dates, series, { className: 'narrow', width: 420, height: 300, maxLabels: 5, fontSize: 13 })
    // The event summary as one row per event: its daily counts (oldest first) with a sparkline and the total.
    const names = [...new Set(summary.totals.map((t) => t.event))].sort()
    const events = names.map((event) => {
      const counts = summary.days.map((d) => d.events.find((e) => e.event === event)?.count ?? 0)
      const users = summary.days.map((d) => d.events.find((e) => e.event === event)?.unique_users ?? 0)
      return { event, counts, users, total: summary.totals.find((t) => t.event === event)?.count ?? 0, peakUsers: Math.max(0, ...users), spark: sparkline(summary.days.map((d) => d.date), counts) }
    })
    return reply.page('metrics', { title: `Metrics · ${project!.name}`, project, ops, summary, events, chart })
  })
}
