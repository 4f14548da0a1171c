// Alerts on the wire: an alert (a daily metric or the review queue against a threshold or its own
// recent weekdays), and an alert event (a firing or a recovery).
import { Type, type Static } from '@sinclair/typebox'
import { Day, NullableTimestamp, PageOf, StringEnum, Timestamp } from './atoms.ts'

export const alertMetrics = ['registrations', 'daily_users', 'event_count', 'event_users', 'pending_opportunities', 'oldest_pending_age_hours'] as const
export const alertConditions = ['above', 'below', 'anomaly'] as const

export const AlertId = Type.String({ pattern: '^alr_[0-9A-Za-z]{1,40}$', description: 'The alert id (alr_…).' })

export const AlertFields = {
  name: Type.String({ minLength: 1, maxLength: 200, description: 'What the team calls it (shown in the console and in every message).' }),
  metric: StringEnum(alertMetrics, {
    description:
      'registrations (unique users who signed up that day), daily_users (unique daily_use users that day), event_count / ' +
      'event_users (an event\'s count / unique users that day; needs `event`), pending_opportunities (the review queue now), ' +
      'oldest_pending_age_hours (how long the oldest pending opportunity has waited).',
  }),
  event: Type.String({ minLength: 1, maxLength: 200, description: 'The event of event_count / event_users (refused for the other metrics).' }),
  condition: StringEnum(alertConditions, {
    description: 'above / below `threshold`, or anomaly: the day far outside the range of its last 4–8 same weekdays (daily metrics only).',
  }),
  threshold: Type.Number({ minimum: 0, maximum: 1e12, description: 'The bound of above / below (refused for anomaly).' }),
  enabled: Type.Boolean({ description: 'false: not evaluated (its state stays as it was).' }),
}

export const Alert = Type.Object({
  id: Type.String(),
  name: Type.String(),
  metric: StringEnum(alertMetrics),
  event: Type.Union([Type.String(), Type.Null()]),
  condition: StringEnum(alertConditions),
  threshold: Type.Union([Type.Number(), Type.Null()]),
  enabled: Type.Boolean(),
  state: StringEnum(['ok', 'firing'] as const, { description: 'Where its last evaluation left it.' }),
  last_value: Type.Union([Type.Number(), Type.Null()], { description: 'The value its last evaluation judged (null: not evaluated yet).' }),
  last_evaluated_at: NullableTimestamp('When it was last evaluated (null: not yet; it is at the project\'s next change or day close).'),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type Alert = Static<typeof Alert>

export const AlertEvent = Type.Object({
  id: Type.String({ description: 'ale_…' }),
  alert_id: Type.String(),
  kind: StringEnum(['triggered', 'resolved'] as const),
  day: Day,
  value: Type.Number(),
  // An object of any JSON values, said without an empty `{}` value schema (strict MCP clients flag those).
  detail: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'What the value was held against: the threshold, or the expected range (low, high) and method; and its basis (today_so_far, closed_day, now).' }),
  at: Timestamp(),
})
export type AlertEvent = Static<typeof AlertEvent>

export const AlertEventPage = PageOf(AlertEvent)
