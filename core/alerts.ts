// Alerts, judged without a database: given an alert's definition and the numbers of its metric,
// is it firing, on which day, at what value, and against what. plugins/alerts.ts reads the
// numbers and records the changes of state; everything here is a pure function of its inputs.
import { addDays } from './time.ts'
import { alertConditions, alertMetrics } from '../schemas/alerts.ts'

export { alertConditions, alertMetrics }
export const dailyMetrics = ['registrations', 'daily_users', 'event_count', 'event_users'] as const
export const queueMetrics = ['pending_opportunities', 'oldest_pending_age_hours'] as const
export type AlertMetric = (typeof alertMetrics)[number]
export type AlertCondition = (typeof alertConditions)[number]

/** The metrics that name an event (`event` is required for them and refused for the others). */
export const eventMetrics: readonly AlertMetric[] = ['event_count', 'event_users']

export const isDailyMetric = (metric: AlertMetric) => (dailyMetrics as readonly string[]).includes(metric)
export const needsEvent = (metric: AlertMetric) => eventMetrics.includes(metric)
export const needsThreshold = (condition: AlertCondition) => condition !== 'anomaly'

/** At most this many alerts per project: enough for every metric twice over, few enough to evaluate at once. */
export const MAX_ALERTS_PER_PROJECT = 50

/** What an alert is: the fields that decide how it is judged. */
export interface AlertDefinition {
  metric: AlertMetric
  condition: AlertCondition
  threshold: number | null
}

/**
 * Why a definition cannot be kept, as (argument, message) pairs: the event goes with the event
 * metrics only, the threshold with above/below only, and an anomaly needs a daily series (the
 * review queue keeps no history to compare with).
 */
export function definitionProblems(d: AlertDefinition & { event: string | null }): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = []
  if (needsEvent(d.metric) && d.event === null) problems.push({ path: 'event', message: `is required for the metric ${d.metric}: the event whose numbers it watches` })
  if (!needsEvent(d.metric) && d.event !== null) problems.push({ path: 'event', message: `is only for event_count and event_users; ${d.metric} names no event` })
  if (needsThreshold(d.condition) && d.threshold === null) problems.push({ path: 'threshold', message: `is required for the condition ${d.condition}` })
  if (!needsThreshold(d.condition) && d.threshold !== null) problems.push({ path: 'threshold', message: 'is not taken by an anomaly alert: its range comes from the metric\'s own recent weekdays' })
  if (d.condition === 'anomaly' && !isDailyMetric(d.metric)) problems.push({ path: 'condition', message: `anomaly needs a daily series; ${d.metric} is the review queue now, with no history to compare with (use above or below)` })
  return problems
}

/** The verdict of one evaluation. */
export interface Judgement {
  firing: boolean
  /** The project-zone day the value is of. */
  day: string
  value: number
  /** What the value was held against (the webhook message's `detail`). */
  detail: Record<string, unknown>
}

// ---------------------------------------------------------------------------------------------
// The anomaly method: median and MAD of the same weekdays, with a Poisson floor.

/** How many past same weekdays an anomaly compares with, at most and at least. */
export const ANOMALY_WEEKS = 8
export const ANOMALY_MIN_WEEKS = 4
/** How many scales from the median a day must be to be anomalous. */
export const ANOMALY_K = 3
/** 1.4826 × MAD estimates a normal distribution's standard deviation. */
const MAD_SCALE = 1.4826

export const ANOMALY_METHOD = 'median_mad_same_weekdays'

export interface AnomalyBand {
  median: number
  mad: number
  /** The scale used: 1.4826 × MAD, or √median when that is larger (never below 1). */
  scale: number
  low: number
  high: number
  /** How many past same weekdays it was computed from. */
  weeks: number
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const round = (n: number) => Math.round(n * 100) / 100

/**
 * The expected range of a day from its past same weekdays (newest first or any order): null
 * with fewer than ANOMALY_MIN_WEEKS of them. Median and MAD, not mean and standard deviation:
 * one past spike moves neither. Counts are Poisson-like, so the scale never drops below
 * √median (and 1): a flat series (MAD 0) or a small one (median 2) does not make every
 * wobble an anomaly.
 */
export function anomalyBand(history: readonly number[]): AnomalyBand | null {
  if (history.length < ANOMALY_MIN_WEEKS) return null
  const m = median(history)
  const mad = median(history.map((v) => Math.abs(v - m)))
  const scale = Math.max(MAD_SCALE * mad, Math.sqrt(Math.max(m, 1)))
  return { median: m, mad, scale: round(scale), low: round(Math.max(0, m - ANOMALY_K * scale)), high: round(m + ANOMALY_K * scale), weeks: history.length }
}

/**
 * The same weekdays before `day` (7, 14, … days before) within the metric's history: at most
 * ANOMALY_WEEKS, none before `firstDay` (its event's first day in the project: a week before it
 * is not a week of zeros, it is no week at all). Newest first.
 */
export function sameWeekdays(day: string, firstDay: string | null, valueOf: (day: string) => number): number[] {
  const values: number[] = []
  if (firstDay === null) return values
  for (let w = 1; w <= ANOMALY_WEEKS; w++) {
    const past = addDays(day, -7 * w)
    if (past < firstDay) break
    values.push(valueOf(past))
  }
  return values
}

function bandDetail(band: AnomalyBand | null) {
  return band
    ? { method: ANOMALY_METHOD, expected: band.median, low: band.low, high: band.high, scale: band.scale, weeks: band.weeks }
    : { method: ANOMALY_METHOD, expected: null, low: null, high: null, scale: null, weeks: 0 }
}

// ---------------------------------------------------------------------------------------------
// Daily metrics: today so far, and the last closed day.

/** A daily metric's numbers as an evaluation sees them. */
export interface DailyNumbers {
  /** Today in the project's zone: its value is today so far. */
  today: string
  /** The first day of the metric's event in the project (null: none yet): an anomaly's history starts there. */
  firstDay: string | null
  /** The value of a day (0 for a day without data). */
  valueOf(day: string): number
}

/**
 * A daily metric only grows during its day, so:
 * - `above` is judged on today so far (once past the threshold, the day is past it): it fires
 *   the moment it crosses, and resolves when a new day starts below it;
 * - `below` is judged on the last closed day, never on a partial one (every morning starts at
 *   zero): it fires when a day closed below the threshold, and resolves as soon as today so far
 *   reaches it again (the numbers recovered; no need to wait for the day to end) or a later day
 *   closes at or above it; a day before the event's first is not judged;
 * - `anomaly` fires on a spike as it happens (today so far above its range: more can only come)
 *   and on a drop once the day has closed (the closed day below its range), and resolves when
 *   neither holds: today back within reach of its range, or a new day.
 */
export function judgeDaily(alert: AlertDefinition, n: DailyNumbers): Judgement {
  const closed = addDays(n.today, -1)
  const today = n.valueOf(n.today)
  const yesterday = n.valueOf(closed)
  if (alert.condition === 'above') {
    const threshold = alert.threshold!
    return { firing: today > threshold, day: n.today, value: today, detail: { threshold, basis: 'today_so_far' } }
  }
  if (alert.condition === 'below') {
    const threshold = alert.threshold!
    // Today reached it; or the closed day is from before the event was ever recorded (a new
    // project, a new event): no day to hold against the threshold yet.
    if (today >= threshold || n.firstDay === null || n.firstDay > closed) return { firing: false, day: n.today, value: today, detail: { threshold, basis: 'today_so_far' } }
    return { firing: yesterday < threshold, day: closed, value: yesterday, detail: { threshold, basis: 'closed_day' } }
  }
  const todayBand = anomalyBand(sameWeekdays(n.today, n.firstDay, n.valueOf))
  if (todayBand && today > todayBand.high) {
    return { firing: true, day: n.today, value: today, detail: { ...bandDetail(todayBand), direction: 'spike', basis: 'today_so_far' } }
  }
  const closedBand = anomalyBand(sameWeekdays(closed, n.firstDay, n.valueOf))
  // Today so far back at its own range's floor: recovered (a floor of 0 proves nothing).
  const recovered = todayBand !== null && todayBand.low > 0 && today >= todayBand.low
  if (closedBand && yesterday < closedBand.low && !recovered) {
    return { firing: true, day: closed, value: yesterday, detail: { ...bandDetail(closedBand), direction: 'drop', basis: 'closed_day' } }
  }
  return { firing: false, day: n.today, value: today, detail: { ...bandDetail(todayBand), basis: 'today_so_far' } }
}

/** A review-queue metric is a value now: above or below is judged on it as it is. */
export function judgeNow(alert: AlertDefinition, today: string, value: number): Judgement {
  const threshold = alert.threshold!
  const firing = alert.condition === 'above' ? value > threshold : value < threshold
  return { firing, day: today, value, detail: { threshold, basis: 'now' } }
}
