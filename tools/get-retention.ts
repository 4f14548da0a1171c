// get_retention: exact retention by cohort, from the rollups kept at ingestion (db/repositories/retention.ts).
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { previousPeriod, resolvePeriod, daysBetween, type Period } from '../core/periods.ts'
import { addDays, dayRange, localDate } from '../core/time.ts'
import { RETENTION_PERIODS, Retention, RetentionArgs } from '../schemas/retention.ts'
import type { RetentionRow, RetentionUnit } from '../db/repositories/retention.ts'

/** The Monday of a day's ISO week. */
const mondayOf = (day: string) => addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7))
const round = (x: number) => Math.round(x * 10_000) / 10_000

/**
 * Periods 0..periods of a cohort that have ended before `today` (today is not over: its day, and
 * the week it is in, are incomplete).
 */
function completePeriods(unit: RetentionUnit, cohort: string, today: string, periods: number) {
  const elapsed = daysBetween(cohort, today) - 1 // whole days from the cohort's start to today
  const ended = unit === 'day' ? elapsed : Math.floor(elapsed / 7)
  return Math.min(periods + 1, Math.max(0, ended))
}

/** The answer's cohorts of [from, to] (dense, oldest first; for weeks a Monday to a Sunday) and their users-weighted overall row. */
function cohortsOf(rows: RetentionRow[], unit: RetentionUnit, from: string, to: string, today: string, periods: number) {
  const byCohort = new Map(rows.map((r) => [r.cohort, r]))
  const step = unit === 'day' ? 1 : 7
  const cohorts: { cohort: string; users: number; complete: number; returned: (number | null)[]; fractions: (number | null)[] }[] = []
  for (let c = from; c <= to; c = addDays(c, step)) {
    const row = byCohort.get(c)
    const users = row?.users ?? 0
    const counts = new Array<number>(periods + 1).fill(0)
    for (const [k, n] of row?.returned ?? []) counts[k] = n
    const complete = completePeriods(unit, c, today, periods)
    const returned = counts.map((n, k) => (k < complete ? n : null))
    cohorts.push({ cohort: c, users, complete, returned, fractions: returned.map((n) => (n === null || users === 0 ? null : round(n / users))) })
  }
  const base = Array.from({ length: periods + 1 }, (_, k) => cohorts.reduce((sum, c) => sum + (k < c.complete ? c.users : 0), 0))
  const returned = base.map((_, k) => (cohorts.some((c) => k < c.complete) ? cohorts.reduce((sum, c) => sum + (c.returned[k] ?? 0), 0) : null))
  const overall = {
    users: cohorts.reduce((sum, c) => sum + c.users, 0),
    base,
    returned,
    fractions: returned.map((n, k) => (n === null || base[k] === 0 ? null : round(n / base[k]!))),
  }
  return { from, to, cohorts, overall }
}

/** Week cohorts are whole ISO weeks: every week with a day in the range, Monday to Sunday. */
function wholeWeeks(range: Period): Period {
  const from = mondayOf(range.from)
  const to = addDays(mondayOf(range.to), 6)
  return { ...range, from, to, days: dayRange(to, daysBetween(from, to)) }
}

export default defineOperation({
  name: 'get_retention',
  title: 'Retention by cohort',
  description:
    'Metrics: retention. Cohorts = users whose first `start_event` ever (default signup) falls on a day or ISO week of ' +
    '`window` or `from`/`to`; per cohort, users and how many did `return_event` (default daily_use) in each of ' +
    '`periods` days or weeks after (period 0 = its own), as counts and fractions, plus a users-weighted overall row. ' +
    'Periods not over yet are null (`complete` counts the ended ones). Exact, from rollups; `compare` adds the previous period.',
  scope: 'project',
  role: 'viewer',
  toolset: 'metrics',
  input: RetentionArgs,
  output: Retention,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  // It folds the queued first sightings into the cells before it reads (retention_apply), a
  // write that a replica refuses: read replicas never serve it.
  reads: 'primary',
  examples: {
    valid: [
      { title: 'Day-by-day retention of the last 7 days\u2019 signups', args: {} },
      { title: 'Weekly retention of the last 30 days\u2019 signups, 4 weeks on, against the 30 days before', args: { period: 'week', periods: 4, window: '30d', compare: true } },
      { title: 'Users who came back to the same event, for a chosen range', args: { start_event: 'daily_use', return_event: 'daily_use', from: '2025-05-26', to: '2025-06-08', periods: 14 } },
    ],
    invalid: [
      { title: 'A period that does not exist', args: { period: 'month' }, field: 'period' },
      { title: 'No period after the cohort', args: { periods: 0 }, field: 'periods' },
      { title: 'More days than the bound', args: { periods: 91 }, field: 'periods' },
      { title: 'A date that is not one', args: { from: '2026-02-30x', to: '2026-03-01' }, field: 'from' },
    ],
  },
  async handler(args, ctx) {
    const unit = args.period ?? 'day'
    const bounds = RETENTION_PERIODS[unit]
    const periods = args.periods ?? bounds.default
    if (periods > bounds.max) {
      throw appError('InvalidArguments', `periods is ${periods}; with period=${unit} it is at most ${bounds.max}.`, [
        { path: 'periods', message: `must be at most ${bounds.max} with period=${unit}` },
      ])
    }
    const { timezone } = ctx.project
    const today = localDate(ctx.now(), timezone)
    const range = resolvePeriod(args, today)
    // Week cohorts are whole ISO weeks: every week with a day in the range.
    const current = unit === 'day' ? range : wholeWeeks(range)
    const previous = args.compare ? previousPeriod(current) : undefined
    const start = args.start_event ?? 'signup'
    const ret = args.return_event ?? 'daily_use'
    // One statement for both periods: the previous one ends the day before the current one starts.
    const rows = await ctx.repos.retention.cohorts(ctx.project.id, { unit, start, ret, from: (previous ?? current).from, to: current.to, periods })
    const answer = {
      project: ctx.project.id,
      timezone,
      today,
      start_event: start,
      return_event: ret,
      period: unit,
      periods,
      window: range.window,
      ...cohortsOf(rows.filter((r) => r.cohort >= current.from), unit, current.from, current.to, today, periods),
    }
    if (!previous) return answer
    return { ...answer, previous: cohortsOf(rows.filter((r) => r.cohort < current.from), unit, previous.from, previous.to, today, periods) }
  },
})
