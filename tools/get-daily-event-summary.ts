import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { DailyEventSummary, RangeParams, WindowParam } from '../schemas/metrics.ts'
import { localDate } from '../core/time.ts'
import { previousPeriod, resolvePeriod, type Period } from '../core/periods.ts'

interface Count { day: string; event: string; events: number; uniqueUsers: number }

/** The period's days (each with its events by name) and its totals per event, from rows sorted by event name. */
function summary(period: Period, rows: readonly Count[]) {
  const byDay = new Map(period.days.map((date) => [date, { date, events: [] as { event: string; count: number; unique_users: number }[] }]))
  const totals = new Map<string, number>()
  for (const r of rows) {
    const day = byDay.get(r.day)
    if (!day) continue
    day.events.push({ event: r.event, count: r.events, unique_users: r.uniqueUsers })
    totals.set(r.event, (totals.get(r.event) ?? 0) + r.events)
  }
  return { from: period.from, to: period.to, days: [...byDay.values()], totals: [...totals].map(([event, count]) => ({ event, count })) }
}

export default defineOperation({
  name: 'get_daily_event_summary',
  title: 'Daily event summary',
  description:
    'Daily event summary: per day and event name, the events and their distinct users over `window` 7d (default) or ' +
    '30d or `from`/`to`, with totals per event; `event` narrows it to one. Shows which events move or went quiet.',
  scope: 'project',
  role: 'viewer',
  input: Type.Object(
    { window: WindowParam, ...RangeParams, event: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only this event name.' })) },
    { additionalProperties: false }
  ),
  output: DailyEventSummary,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Every event name over the last 7 days', args: {} },
      { title: 'Signups over the last 30 days', args: { window: '30d', event: 'signup' } },
      { title: 'Signups in March 2025, with the 31 days before', args: { from: '2025-03-01', to: '2025-03-31', compare: true, event: 'signup' } },
    ],
    invalid: [
      { title: 'An empty event name', args: { event: '' }, field: 'event' },
      { title: 'A list of events: it takes one', args: { events: ['signup', 'daily_use'] }, field: 'events' },
      { title: 'Not a calendar date', args: { from: '2026-02-30', to: '2026-03-01' }, field: 'from' },
    ],
  },
  async handler(args, ctx) {
    const period = resolvePeriod(args, localDate(ctx.now(), ctx.project.timezone))
    const previous = args.compare ? previousPeriod(period) : null
    // One read for both periods: they are adjacent.
    const rows = await ctx.repos.events.dailyCounts(ctx.project.id, (previous ?? period).from, period.to, args.event ? [args.event] : undefined)
    rows.sort((a, b) => (a.event < b.event ? -1 : a.event > b.event ? 1 : 0))
    const { from, to, days, totals } = summary(period, rows)
    return {
      project: ctx.project.id,
      timezone: ctx.project.timezone,
      window: period.window,
      from,
      to,
      days,
      totals,
      previous: previous && summary(previous, rows),
    }
  },
})
