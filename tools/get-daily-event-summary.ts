import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { DailyEventSummary, WindowParam } from '../schemas/metrics.ts'
import { dayRange, localDate, windows } from '../core/time.ts'

export default defineOperation({
  name: 'get_daily_event_summary',
  title: 'Daily event summary',
  description:
    'Daily event summary: per day and event name, the events and their distinct users over `window` 7d or 30d, with ' +
    'totals per event; `event` narrows it to one. Shows which events move or went quiet.',
  scope: 'project',
  role: 'viewer',
  input: Type.Object(
    { window: WindowParam, event: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only this event name.' })) },
    { additionalProperties: false }
  ),
  output: DailyEventSummary,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Every event name over the last 7 days', args: {} },
      { title: 'Signups over the last 30 days', args: { window: '30d', event: 'signup' } },
    ],
    invalid: [
      { title: 'An empty event name', args: { event: '' }, field: 'event' },
      { title: 'A list of events: it takes one', args: { events: ['signup', 'daily_use'] }, field: 'events' },
    ],
  },
  async handler(args, ctx) {
    const window = args.window ?? '7d'
    const days = dayRange(localDate(ctx.now(), ctx.project.timezone), windows[window])
    const rows = await ctx.repos.events.dailyCounts(ctx.project.id, days[0]!, days.at(-1)!, args.event ? [args.event] : undefined)
    rows.sort((a, b) => (a.event < b.event ? -1 : a.event > b.event ? 1 : 0))
    const byDay = new Map(days.map((date) => [date, { date, events: [] as { event: string; count: number; unique_users: number }[] }]))
    const totals = new Map<string, number>()
    for (const r of rows) {
      byDay.get(r.day)?.events.push({ event: r.event, count: r.events, unique_users: r.uniqueUsers })
      totals.set(r.event, (totals.get(r.event) ?? 0) + r.events)
    }
    return {
      project: ctx.project.id,
      timezone: ctx.project.timezone,
      window,
      days: [...byDay.values()],
      totals: [...totals].map(([event, count]) => ({ event, count })),
    }
  },
})
