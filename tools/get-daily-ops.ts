import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { DAILY_USE, DailyOps, SIGNUP, WindowParam } from '../schemas/metrics.ts'
import { dayRange, localDate, windows } from '../core/time.ts'

export default defineOperation({
  name: 'get_daily_ops',
  title: 'Daily operational metrics',
  description:
    'Daily metrics: registrations and daily use, one record a day over `window` 7d or 30d in the project time zone, ' +
    'oldest first, zeros included (active_users = daily_use_users). Exact counts.',
  scope: 'project',
  role: 'viewer',
  input: Type.Object({ window: WindowParam }, { additionalProperties: false }),
  output: DailyOps,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  // MCP App hosts chart the days (routes/mcp-apps.ts); the text stays for the model.
  ui: { resourceUri: 'ui://growthdesk/daily-ops' },
  examples: {
    valid: [
      { title: 'The last 7 days', args: {} },
      { title: 'The last 30 days', args: { window: '30d' } },
    ],
    invalid: [
      { title: 'A window that does not exist', args: { window: '90d' }, field: 'window' },
      { title: 'A day: the window ends today', args: { window: '7d', day: '2026-11-20' }, field: 'day' },
    ],
  },
  async handler(args, ctx) {
    const window = args.window ?? '7d'
    const days = dayRange(localDate(ctx.now(), ctx.project.timezone), windows[window])
    const rows = await ctx.repos.events.dailyCounts(ctx.project.id, days[0]!, days.at(-1)!, [SIGNUP, DAILY_USE])
    const byDay = new Map(days.map((date) => [date, { date, registered_users: 0, daily_use_users: 0, active_users: 0, signup_events: 0, daily_use_events: 0 }]))
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
    return { project: ctx.project.id, timezone: ctx.project.timezone, window, days: [...byDay.values()] }
  },
})
