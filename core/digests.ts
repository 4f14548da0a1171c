// A project's digest: when it is due (a daily or weekly slot at an hour of the project's zone),
// which days it covers, what it says (numbers against the previous period, opportunities,
// alerts), and the same as a plain-text mail. The scheduler (plugins/digests.ts) and the tools
// (get_digest, set_digest, preview_digest) share these rules.
import type { Repositories } from '../db/repositories/index.ts'
import type { Digest, DigestFrequency, DigestSchedule } from '../schemas/digests.ts'
import { weekdayNames } from '../schemas/digests.ts'
import { addDays, dayRange, localDate, startOfDay } from './time.ts'
import { previousPeriod, type Period } from './periods.ts'

export interface Schedule {
  frequency: DigestFrequency
  hour: number
  /** ISO weekday (1 = Monday) of a weekly digest; null for daily. */
  weekday: number | null
}

/** The days of a digest of each frequency. */
const LENGTH: Record<DigestFrequency, number> = { daily: 1, weekly: 7 }
export const TOP_EVENTS = 10
export const TOP_NEW = 5
export const MAX_ALERTS = 50

/** A weekday as set_digest takes it (1–7 or a name, any case) as its ISO number; null for anything else. */
export function weekdayNumber(weekday: number | string): number | null {
  const n = typeof weekday === 'number' ? weekday : weekdayNames.indexOf(weekday.toLowerCase() as (typeof weekdayNames)[number]) + 1
  return Number.isInteger(n) && n >= 1 && n <= 7 ? n : null
}

/** ISO weekday of a calendar date (1 = Monday … 7 = Sunday). */
export function isoWeekday(day: string): number {
  return ((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7) + 1
}

const hourFormatters = new Map<string, Intl.DateTimeFormat>()
/** The local hour (0–23) of an instant in a time zone. */
export function localHour(instant: Date, timeZone: string): number {
  let f = hourFormatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', hourCycle: 'h23' })
    hourFormatters.set(timeZone, f)
  }
  return Number(f.format(instant))
}

/**
 * The first instant of `day` whose local hour is `hour` or later (the hour a clock change skips
 * starts at the first minute after it): the first minute of the day, found by halving, whose
 * local hour has reached it. Local hours only grow within a day (a repeated hour repeats its number).
 */
export function hourStart(day: string, hour: number, timeZone: string): Date {
  const start = startOfDay(day, timeZone).getTime() / 60_000
  const end = startOfDay(addDays(day, 1), timeZone).getTime() / 60_000
  if (hour === 0) return new Date(start * 60_000)
  let before = start
  let first = end
  while (first - before > 1) {
    const mid = Math.floor((before + first) / 2)
    if (localHour(new Date(mid * 60_000), timeZone) < hour) before = mid
    else first = mid
  }
  return new Date(first * 60_000)
}

/**
 * The latest slot at or before `now`: the local day whose hour has come (weekly: the latest such
 * day on the weekday). A slot's digest covers the days before it.
 */
export function latestSlot(s: Schedule, now: Date, timeZone: string): string {
  const today = localDate(now, timeZone)
  const reached = localHour(now, timeZone) >= s.hour
  if (s.frequency === 'daily') return reached ? today : addDays(today, -1)
  const back = (isoWeekday(today) - s.weekday! + 7) % 7
  return back === 0 && !reached ? addDays(today, -7) : addDays(today, -back)
}

/** The period a slot's digest covers: the day before it (daily) or the 7 days before it (weekly). */
export function slotPeriod(frequency: DigestFrequency, slot: string): Period {
  const to = addDays(slot, -1)
  const days = dayRange(to, LENGTH[frequency])
  return { window: null, from: days[0]!, to, days }
}

/** When the slot after `slot` comes. */
const nextSlot = (s: Schedule, slot: string) => addDays(slot, LENGTH[s.frequency])

/**
 * When the next digest is due: the latest slot if its period has not been sent (it goes out at
 * the next tick), else the following one.
 */
export function nextDigestAt(s: Schedule, lastPeriodEnd: string | null, now: Date, timeZone: string): Date {
  const latest = latestSlot(s, now, timeZone)
  const slot = lastPeriodEnd === null || lastPeriodEnd < slotPeriod(s.frequency, latest).to ? latest : nextSlot(s, latest)
  return hourStart(slot, s.hour, timeZone)
}

interface DigestRowLike extends Schedule {
  projectId: string
  enabled: boolean
  lastPeriodEnd: string | null
  lastSentAt: Date | null
  createdAt: Date
  updatedAt: Date
}

/** A stored schedule as the tools answer it. */
export function toSchedule(row: DigestRowLike, timeZone: string, now: Date): DigestSchedule {
  return {
    project: row.projectId,
    timezone: timeZone,
    frequency: row.frequency,
    hour: row.hour,
    weekday: row.weekday,
    enabled: row.enabled,
    last_period_end: row.lastPeriodEnd,
    last_sent_at: row.lastSentAt?.toISOString() ?? null,
    next_at: row.enabled ? nextDigestAt(row, row.lastPeriodEnd, now, timeZone).toISOString() : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

const change = (value: number, previous: number) => (previous === 0 ? null : Math.round(((value - previous) / previous) * 10000) / 10000)
const round = (n: number) => Math.round(n * 100) / 100

export interface DigestProject {
  id: string
  slug: string
  name: string
  timezone: string
}

/** What the digest of `period` says, read now (`now` is its generated_at). */
export async function buildDigest(repos: Repositories, project: DigestProject, frequency: DigestFrequency, period: Period, now: Date): Promise<Digest> {
  const previous = previousPeriod(period)
  const { timezone } = project
  const [current, before, opportunities, alerts] = await Promise.all([
    repos.digests.eventTotals(project.id, period.from, period.to),
    repos.digests.eventTotals(project.id, previous.from, previous.to),
    repos.digests.opportunities(project.id, startOfDay(period.from, timezone), startOfDay(addDays(period.to, 1), timezone), TOP_NEW),
    repos.digests.alertEvents(project.id, period.from, period.to, MAX_ALERTS),
  ])
  const of = (rows: typeof current, event: string) => rows.find((r) => r.event === event)
  const registrations = [of(current, 'signup')?.dailyUsers ?? 0, of(before, 'signup')?.dailyUsers ?? 0] as const
  const users = [(of(current, 'daily_use')?.dailyUsers ?? 0) / period.days.length, (of(before, 'daily_use')?.dailyUsers ?? 0) / previous.days.length] as const
  const events = [...current]
    .sort((a, b) => b.events - a.events || (a.event < b.event ? -1 : 1))
    .slice(0, TOP_EVENTS)
    .map((r) => {
      const prev = of(before, r.event)?.events ?? 0
      return { event: r.event, count: r.events, previous: prev, change: change(r.events, prev) }
    })
  return {
    project: { id: project.id, slug: project.slug, name: project.name, timezone },
    frequency,
    period: { from: period.from, to: period.to },
    previous: { from: previous.from, to: previous.to },
    metrics: {
      registrations: { value: registrations[0], previous: registrations[1], change: change(...registrations) },
      daily_users: { value: round(users[0]), previous: round(users[1]), change: change(...users) },
      events,
    },
    opportunities: { new: opportunities.new, pending: opportunities.pending, adopted: opportunities.adopted, top_new: opportunities.topNew },
    alerts,
    generated_at: now.toISOString(),
  }
}

/** A change in words: null is a previous value of 0 (new, or nothing either time). */
const percent = (c: number | null, value: number) => (c === null ? (value === 0 ? 'no change' : 'new') : `${c >= 0 ? '+' : '−'}${Math.abs(Math.round(c * 1000) / 10)} %`)
const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** The digest as a mail: a subject and plain text readable in any client. */
export function digestMail(d: Digest, publicUrl: string): { subject: string; text: string } {
  const span = d.period.from === d.period.to ? d.period.to : `${d.period.from} – ${d.period.to}`
  const subject = `${d.project.name}: ${d.frequency} digest, ${span}`
  const m = d.metrics
  const vs = d.frequency === 'daily' ? 'the day before' : 'the 7 days before'
  const lines = [
    `${d.project.name} (${d.project.slug}), ${span}, ${d.project.timezone} time — compared with ${vs} (${d.previous.from === d.previous.to ? d.previous.to : `${d.previous.from} – ${d.previous.to}`}).`,
    '',
    'Users',
    `  Registrations: ${m.registrations.value} (${percent(m.registrations.change, m.registrations.value)}; before: ${m.registrations.previous})`,
    `  Daily users, average per day: ${m.daily_users.value} (${percent(m.daily_users.change, m.daily_users.value)}; before: ${m.daily_users.previous})`,
    '',
    'Top events',
    ...(m.events.length === 0 ? ['  No events.'] : m.events.map((e) => `  ${e.event}: ${e.count} (${percent(e.change, e.count)}; before: ${e.previous})`)),
    '',
    'Opportunities',
    `  New: ${d.opportunities.new} · pending review now: ${d.opportunities.pending} · adopted: ${d.opportunities.adopted}`,
    ...d.opportunities.top_new.map((o) => `  - ${oneLine(o.key_information, 160)} (${o.event_id})`),
    '',
    'Alerts',
    ...(d.alerts.length === 0 ? ['  None fired or resolved.'] : d.alerts.map((a) => `  ${a.day} ${a.name}: ${a.kind} at ${a.value}`)),
    '',
    `Review board: ${publicUrl}/console/projects/${encodeURIComponent(d.project.slug)}/opportunities`,
    `Digest settings: ${publicUrl}/console/projects/${encodeURIComponent(d.project.slug)}/digest`,
  ]
  return { subject, text: `${lines.join('\n')}\n` }
}
