import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { DAILY_USE, Overview, SIGNUP } from '../schemas/metrics.ts'
import { addDays, dayRange, localDate } from '../core/time.ts'
import { statuses } from '../schemas/opportunities.ts'

const change = (current: number, previous: number) => (previous === 0 ? null : Math.round(((current - previous) / previous) * 10000) / 10000)
const round = (n: number) => Math.round(n * 100) / 100

export default defineOperation({
  name: 'get_overview',
  title: 'Project overview (KPIs)',
  description:
    'KPIs of a project, to start with: signups and daily users today, over 7 and 30 days and against the previous ' +
    'period (change = (last − previous) / previous), unique users, stickiness (DAU/MAU), opportunities by status and ' +
    'evaluation.',
  scope: 'project',
  role: 'viewer',
  input: Type.Object({}, { additionalProperties: false }),
  output: Overview,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'The project’s KPIs today', args: {} }],
    invalid: [{ title: 'A window: the overview has its own', args: { window: '30d' }, field: 'window' }],
  },
  async handler(_args, ctx) {
    const { project } = ctx
    const now = ctx.now()
    const today = localDate(now, project.timezone)
    const days = dayRange(today, 60)
    const read = await ctx.repos.events.overview(project.id, {
      from: days[0]!, to: today, names: [SIGNUP, DAILY_USE], since7: addDays(today, -6), since30: addDays(today, -29),
    })
    const { counts, unique7, unique30, totals, lastEventAt } = read!
    const series = (event: string) => {
      const byDay = new Map(counts.filter((c) => c.event === event).map((c) => [c.day, c.uniqueUsers]))
      return days.map((d) => byDay.get(d) ?? 0) // oldest first, today last
    }
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0)
    const trend = (values: number[], combine: (v: number[]) => number) => {
      const last7 = combine(values.slice(-7)); const prev7 = combine(values.slice(-14, -7))
      const last30 = combine(values.slice(-30)); const prev30 = combine(values.slice(-60, -30))
      return {
        today: values.at(-1)!,
        last_7d: round(last7),
        previous_7d: round(prev7),
        change_7d: change(last7, prev7),
        last_30d: round(last30),
        previous_30d: round(prev30),
        change_30d: change(last30, prev30),
      }
    }
    const average = (v: number[]) => sum(v) / v.length
    const daily = series(DAILY_USE)
    const avg30 = average(daily.slice(-30))

    const byStatus: Record<string, number> = Object.fromEntries(statuses.map((s) => [s, 0]))
    const byEvaluation = { useful: 0, not_useful: 0, none: 0 }
    let total = 0
    for (const t of totals) {
      total += t.n
      byStatus[t.status] = (byStatus[t.status] ?? 0) + t.n
      byEvaluation[t.evaluation === '' ? 'none' : t.evaluation] += t.n
    }
    return {
      project: { id: project.id, slug: project.slug, name: project.name, timezone: project.timezone },
      today,
      generated_at: now.toISOString(),
      signups: trend(series(SIGNUP), sum),
      daily_users: trend(daily, average),
      unique_users_7d: unique7,
      unique_users_30d: unique30,
      stickiness: unique30 === 0 ? null : Math.round((avg30 / unique30) * 10000) / 10000,
      opportunities: { total, pending_review: byStatus.pending ?? 0, unevaluated: byEvaluation.none, by_status: byStatus, by_evaluation: byEvaluation },
      last_event_at: lastEventAt?.toISOString() ?? null,
    }
  },
})
