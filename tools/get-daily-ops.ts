import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { DAILY_USE, DailyOps, RangeParams, SIGNUP, WindowParam } from '../schemas/metrics.ts'
import { localDate } from '../core/time.ts'
import { previousPeriod, resolvePeriod, type Period } from '../core/periods.ts'

interface Count { day: string; event: string; events: number; uniqueUsers: number }

/** One record per day of the period, zeros included, from the counters of (at least) its days. */
function records(period: Period, rows: readonly Count[]) {
  const byDay = new Map(period.days.map((date) => [date, { date, registered_users: 0, daily_use_users: 0, active_users: 0, signup_events: 0, daily_use_events: 0 }]))
  for (const r of rows) {
    const rec = byDay.get(r.day)
    if (!rec) continue
    if (r.event === SIGNUP) {
      rec.registered_users = r.uniqueUsers
      rec.signup_events = r.events
    } else {
      rec.daily_use_users = rec.active_users = r.uniqueUsers
      rec.daily_use_events = r.events
    }
  }
  return [...byDay.values()]
}

export default defineOperation({
  name: 'get_daily_ops',
  title: 'Daily operational metrics',
  description:
    'Daily metrics: registrations and daily use, one record a day (project time zone, oldest first, zeros included) ' +
    'over `window` 7d (default) or 30d, or `from`/`to`; active_users = daily_use_users.',
  scope: 'project',
  role: 'viewer',
  input: Type.Object({ window: WindowParam, ...RangeParams }, { additionalProperties: false }),
  output: DailyOps,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  // MCP App hosts chart the days (routes/mcp-apps.ts); the text stays for the model.
  ui: { resourceUri: 'ui://growthdesk/daily-ops' },
  examples: {
    valid: [
      { title: 'The last 7 days', args: {} },
      { title: 'The last 30 days', args: { window: '30d' } },
      { title: 'March 2025, with the 31 days before', args: { from: '2025-03-01', to: '2025-03-31', compare: true } },
    ],
    invalid: [
      { title: 'A window that does not exist', args: { window: '90d' }, field: 'window' },
      { title: 'A day: the window ends today', args: { window: '7d', day: '2026-11-20' }, field: 'day' },
      { title: 'A range needs both ends', args: { from: '2026-10-01' }, field: 'to' },
    ],
  },
  async handler(args, ctx) {
    const period = resolvePeriod(args, localDate(ctx.now(), ctx.project.timezone))
    const previous = args.compare ? previousPeriod(period) : null
    // One read for both periods: they are adjacent.
    const rows = await ctx.repos.events.dailyCounts(ctx.project.id, (previous ?? period).from, period.to, [SIGNUP, DAILY_USE])
    return {
      project: ctx.project.id,
      timezone: ctx.project.timezone,
      window: period.window,
      from: period.from,
      to: period.to,
      days: records(period, rows),
      previous: previous && { from: previous.from, to: previous.to, days: records(previous, rows) },
    }
  },
})
