import { Type } from '@sinclair/typebox'
import { Day, NullableTimestamp, StringEnum, Timestamp } from './atoms.ts'

/** The event names that feed daily-ops (DESIGN §5): wire values clients send. */
export const SIGNUP = 'signup'
export const DAILY_USE = 'daily_use'

/** No schema `default`: validation would fill it in, and a `from`/`to` range must not have a window (core/periods.ts). */
export const WindowParam = Type.Optional(
  StringEnum(['7d', '30d'] as const)
)

/** `from`/`to`: any range of at most 400 days, instead of `window`; `compare` adds the previous period (core/periods.ts).
 * Terse: every default tools/list carries them. */
export const RangeParams = {
  from: Type.Optional(Type.String({ format: 'date', description: 'First day, with `to`.' })),
  to: Type.Optional(Type.String({ format: 'date', description: 'Last day: ≤ today, ≤ 400 days.' })),
  compare: Type.Optional(Type.Boolean({ description: 'Add the period before as `previous`.' })),
}

/** The window a read was asked for; null for a `from`/`to` range. A `previous` period is marked
 * `x-repeats` (core/tool-schemas.ts): tool lists publish it as an object, not its shape again. */
const WindowOrRange = Type.Union([StringEnum(['7d', '30d'] as const), Type.Null()], { description: 'null for a from/to range.' })

export const DailyOpsRecord = Type.Object({
  date: Day,
  registered_users: Type.Integer({ description: 'Unique users with a signup event that day.' }),
  daily_use_users: Type.Integer({ description: 'Unique users with a daily_use event that day.' }),
  active_users: Type.Integer({ description: 'Currently equal to daily_use_users.' }),
  signup_events: Type.Integer(),
  daily_use_events: Type.Integer(),
})

const DailyOpsDays = Type.Array(DailyOpsRecord, { description: 'One record per day, oldest first, zeros included.' })

export const DailyOps = Type.Object({
  project: Type.String(),
  timezone: Type.String(),
  window: WindowOrRange,
  from: Day,
  to: Day,
  days: DailyOpsDays,
  previous: Type.Union([Type.Object({ from: Day, to: Day, days: DailyOpsDays }, { 'x-repeats': 'the answer' }), Type.Null()], {
    description: 'With compare: the period of equal length just before, in the same shape; else null.',
  }),
})

export const EventCount = Type.Object({
  event: Type.String(),
  count: Type.Integer({ description: 'Raw number of events.' }),
  unique_users: Type.Integer({ description: 'Distinct users with that event that day.' }),
})

const SummaryDays = Type.Array(Type.Object({ date: Day, events: Type.Array(EventCount) }), { description: 'Oldest first; events by name.' })
const SummaryTotals = Type.Array(Type.Object({ event: Type.String(), count: Type.Integer() }), { description: 'Raw counts over the period.' })

export const DailyEventSummary = Type.Object({
  project: Type.String(),
  timezone: Type.String(),
  window: WindowOrRange,
  from: Day,
  to: Day,
  days: SummaryDays,
  totals: SummaryTotals,
  previous: Type.Union([Type.Object({ from: Day, to: Day, days: SummaryDays, totals: SummaryTotals }, { 'x-repeats': 'the answer' }), Type.Null()], {
    description: 'With compare: the period of equal length just before, in the same shape; else null.',
  }),
})

const Trend = Type.Object({
  today: Type.Number(),
  last_7d: Type.Number(),
  previous_7d: Type.Number(),
  change_7d: Type.Union([Type.Number(), Type.Null()], { description: '(last - previous) / previous; null when previous is 0.' }),
  last_30d: Type.Number(),
  previous_30d: Type.Number(),
  change_30d: Type.Union([Type.Number(), Type.Null()]),
})

export const Overview = Type.Object({
  project: Type.Object({ id: Type.String(), slug: Type.String(), name: Type.String(), timezone: Type.String() }),
  today: Day,
  generated_at: Timestamp(),
  signups: Type.Composite([Trend], { description: 'Sums of registered_users per period.' }),
  daily_users: Type.Composite([Trend], { description: 'Average daily_use_users per day of each period (today: that day).' }),
  unique_users_7d: Type.Integer({ description: 'Distinct users with daily_use in the last 7 days.' }),
  unique_users_30d: Type.Integer({ description: 'Distinct users with daily_use in the last 30 days.' }),
  stickiness: Type.Union([Type.Number(), Type.Null()], { description: 'Average daily users over 30 days / unique users over 30 days (DAU/MAU).' }),
  opportunities: Type.Object({
    total: Type.Integer(),
    pending_review: Type.Integer({ description: 'Status pending.' }),
    unevaluated: Type.Integer({ description: 'No evaluation yet.' }),
    by_status: Type.Record(Type.String(), Type.Integer()),
    by_evaluation: Type.Object({ useful: Type.Integer(), not_useful: Type.Integer(), none: Type.Integer() }),
  }),
  last_event_at: NullableTimestamp(),
})

/** Event properties as sent at ingestion: an object of any JSON values. Said as a schema without
 * an empty `{}` value schema (strict MCP clients flag those); REST serializes it as is. */
const EventProperties = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'The properties sent at ingestion, as sent.' })

export const StreamEvent = Type.Object({
  uuid: Type.String(),
  event: Type.String(),
  distinct_id: Type.String(),
  timestamp: Timestamp(),
  received_at: Timestamp(),
  properties: EventProperties,
})

export const EventStream = Type.Object({
  distinct_id: Type.String({ description: 'Your identity in this project (membership distinct_id, default your email).' }),
  items: Type.Array(StreamEvent),
  next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `before` for older events; null at the end.' }),
  raw_events_since: Type.Union([Type.String({ format: 'date' }), Type.Null()], {
    description: 'How far back raw events go: the first day kept (EVENTS_RETENTION_DAYS drops whole months before it; daily metrics stay exact); null when the project has no events.',
  }),
})

export const IncomingEvent = Type.Object(
  {
    event: Type.String({ minLength: 1, maxLength: 200, description: 'Event name; `signup` and `daily_use` feed daily-ops.' }),
    distinct_id: Type.String({ minLength: 1, maxLength: 200, description: 'The user the event is about.' }),
    timestamp: Type.Optional(Type.String({ format: 'date-time', description: 'ISO-8601 with offset; default: now. At most 24 h ahead.' })),
    properties: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    uuid: Type.Optional(Type.String({ format: 'uuid', description: 'Idempotency key: the uuid identifies the event in the project on its day; a resend counts as a duplicate.' })),
  },
  { additionalProperties: false }
)

export const IngestResult = Type.Object({ accepted: Type.Integer(), duplicates: Type.Integer() })
