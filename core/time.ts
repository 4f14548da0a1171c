// Calendar days in a project's IANA time zone. Days are computed as dates, never by adding
// 24 h to an instant, so daylight-saving changes cannot shift a window.
import { dayMs } from '../db/days.ts'

export { addDays, dayRange } from '../db/days.ts'

const formatters = new Map<string, Intl.DateTimeFormat>()
/** The last date computed per zone, with the UTC minute it holds for: every zone's offset is a
 * whole number of minutes, so the date cannot change within one (formatting costs ~10 µs). */
const lastDates = new Map<string, { minute: number; date: string }>()

export function isTimeZone(tz: string): boolean {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone !== ''
  } catch {
    return false
  }
}

/** The calendar date (YYYY-MM-DD) of an instant in a time zone. */
export function localDate(instant: Date, timeZone: string): string {
  const minute = Math.floor(instant.getTime() / 60_000)
  const last = lastDates.get(timeZone)
  if (last?.minute === minute) return last.date
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
    formatters.set(timeZone, f)
  }
  const date = f.format(instant)
  // Bounded like the formatters: one entry per zone in use.
  lastDates.set(timeZone, { minute, date })
  return date
}

/**
 * The first instant of a calendar day in a time zone: its local midnight, or the first minute
 * after it where a clock change skips midnight. Found among the minutes from 15 h before to 15 h
 * after the day's UTC midnight (every zone's offset is within that) as the first whose local date
 * is the day: the zone's own rules, no offset arithmetic.
 */
export function startOfDay(day: string, timeZone: string): Date {
  let before = Math.floor((dayMs(day) - 15 * 3_600_000) / 60_000)
  let first = Math.floor((dayMs(day) + 15 * 3_600_000) / 60_000)
  while (first - before > 1) {
    const mid = Math.floor((before + first) / 2)
    if (localDate(new Date(mid * 60_000), timeZone) < day) before = mid
    else first = mid
  }
  return new Date(first * 60_000)
}

export const windows = { '7d': 7, '30d': 30 } as const
export type Window = keyof typeof windows
