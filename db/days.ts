// Calendar days as YYYY-MM-DD strings: pure arithmetic, no time zone. It lives in db/, the
// lowest layer with code, so that the repositories (which date the counter rows they read) and
// core/ (periods, windows, a project's local days: core/time.ts) share one copy.

export const DAY_MS = 86_400_000

/** UTC midnight of a YYYY-MM-DD date, in ms: days of the calendar are all 24 h long in UTC. */
export const dayMs = (day: string) => Date.UTC(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10)))

/** The YYYY-MM-DD date of a UTC instant in ms (years 1–9999, as PostgreSQL's date::text writes them). */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

export function addDays(day: string, days: number): string {
  return dayOf(dayMs(day) + days * DAY_MS)
}

/** Ranges already written out: every call of a day asks for the same few (7 or 30 days to today). */
const ranges = new Map<string, readonly string[]>()

/** The `count` days ending with `last`, oldest first (shared and frozen: copy it to change it). */
export function dayRange(last: string, count: number): readonly string[] {
  const key = `${last}/${count}`
  let range = ranges.get(key)
  if (!range) {
    const end = dayMs(last)
    range = Object.freeze(Array.from({ length: count }, (_, i) => dayOf(end + (i - count + 1) * DAY_MS)))
    if (ranges.size >= 64) ranges.clear()
    ranges.set(key, range)
  }
  return range
}

/** The days after each first day asked for, filled in as they are asked for (a read of a day asks for the same few). */
const spans = new Map<string, string[]>()

/**
 * The day `n` days after `first` (n ≥ 0): addDays, remembered per `first`. A 30-day read of the
 * counters dates its rows by their offset from the first day; a Date and its ISO string for each
 * row cost ~3 % of such a call's server CPU.
 */
export function dayAfter(first: string, n: number): string {
  let days = spans.get(first)
  if (!days) {
    if (spans.size >= 64) spans.clear()
    spans.set(first, (days = []))
  }
  return (days[n] ??= addDays(first, n))
}
