// Calendar days in a project's IANA time zone. Days are computed as dates, never by adding
// 24 h to an instant, so daylight-saving changes cannot shift a window.

const formatters = new Map<string, Intl.DateTimeFormat>()

export function isTimeZone(tz: string): boolean {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone !== ''
  } catch {
    return false
  }
}

/** The calendar date (YYYY-MM-DD) of an instant in a time zone. */
export function localDate(instant: Date, timeZone: string): string {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
    formatters.set(timeZone, f)
  }
  return f.format(instant)
}

export function addDays(day: string, days: number): string {
  const d = new Date(`${day}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

/** The `count` days ending with `last`, oldest first. */
export function dayRange(last: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => addDays(last, i - count + 1))
}

export const windows = { '7d': 7, '30d': 30 } as const
export type Window = keyof typeof windows
