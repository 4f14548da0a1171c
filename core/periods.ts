// The days a metrics read covers (issue 29): the spec's `window` (7d or 30d, ending today in the
// project's zone) or any `from`/`to` range of at most MAX_RANGE_DAYS days, and the previous period
// of equal length for a comparison. Every metrics read that takes a period resolves it here, so
// the rules and their errors are one.
import { DAY_MS, dayMs } from '../db/days.ts'
import { appError } from './errors.ts'
import { addDays, dayRange, windows, type Window } from './time.ts'

/** The longest `from`/`to` range, in days (both ends included). */
export const MAX_RANGE_DAYS = 400

export interface PeriodArgs {
  window?: Window
  from?: string
  to?: string
}

export interface Period {
  /** The window asked for (or the default), null for a `from`/`to` range. */
  window: Window | null
  from: string
  to: string
  /** Every day of it, oldest first (shared: copy it to change it). */
  days: readonly string[]
}

/** A real calendar date (the schema's pattern admits 2026-02-30). */
export function isCalendarDay(day: string): boolean {
  return /^\d{4}-\d{2}-\d{2}$/.test(day) && new Date(dayMs(day)).toISOString().slice(0, 10) === day
}

/** Days from `from` to `to`, both included (1 for the same day). */
export function daysBetween(from: string, to: string): number {
  return Math.round((dayMs(to) - dayMs(from)) / DAY_MS) + 1
}

/**
 * The period of a read: `from` and `to` together (a range, ≤ MAX_RANGE_DAYS days, `to` may be
 * today or earlier and never after it), or `window` (default `defaultWindow`), never both.
 * InvalidArguments, naming the argument, otherwise.
 */
export function resolvePeriod(args: PeriodArgs, today: string, defaultWindow: Window = '7d'): Period {
  const { from, to } = args
  if (from === undefined && to === undefined) {
    const window = args.window ?? defaultWindow
    const days = dayRange(today, windows[window])
    return { window, from: days[0]!, to: today, days }
  }
  const bad = (path: string, message: string, text: string) => appError('InvalidArguments', text, [{ path, message }])
  if (args.window !== undefined) throw bad('window', 'must not be sent with from/to', 'Send either window or from and to, not both.')
  if (from === undefined) throw bad('from', 'is required with to', 'A range needs from as well as to.')
  if (to === undefined) throw bad('to', 'is required with from', 'A range needs to as well as from.')
  if (!isCalendarDay(from)) throw bad('from', 'must be a calendar date (YYYY-MM-DD)', `'${from}' is not a calendar date.`)
  if (!isCalendarDay(to)) throw bad('to', 'must be a calendar date (YYYY-MM-DD)', `'${to}' is not a calendar date.`)
  if (to < from) throw bad('to', 'must not be before from', `to (${to}) is before from (${from}).`)
  if (to > today) throw bad('to', `must not be after today (${today} in the project's time zone)`, `to (${to}) is after today (${today}) in the project's time zone.`)
  const n = daysBetween(from, to)
  if (n > MAX_RANGE_DAYS) throw bad('from', `the range must span at most ${MAX_RANGE_DAYS} days`, `The range spans ${n} days; at most ${MAX_RANGE_DAYS}.`)
  return { window: null, from, to, days: dayRange(to, n) }
}

/** The period of equal length that ends the day before `p` starts. */
export function previousPeriod(p: Period): Period {
  const to = addDays(p.from, -1)
  const days = dayRange(to, p.days.length)
  return { window: p.window, from: days[0]!, to, days }
}
