// A project's digest: its schedule (daily or weekly, at an hour of the project's zone) and what
// it says, the data of a `digest.ready` message (docs/digests.md).
import { Type, type Static } from '@sinclair/typebox'
import { Day, NullableTimestamp, StringEnum, Timestamp } from './atoms.ts'

export const digestFrequencies = ['daily', 'weekly'] as const
export type DigestFrequency = (typeof digestFrequencies)[number]

/** ISO weekdays by name: index + 1 is the number (1 = Monday … 7 = Sunday). */
export const weekdayNames = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const

export const DigestFrequency = StringEnum(digestFrequencies, { description: 'daily: the day that just closed; weekly: the 7 days ending yesterday.' })

export const DigestScheduleInput = {
  frequency: DigestFrequency,
  hour: Type.Integer({ minimum: 0, maximum: 23, description: 'The hour (0–23) of the project\'s time zone it goes out at.' }),
  // A name is checked by set_digest, which names the day's choices in one message (an enum in the union would add one error per branch).
  weekday: Type.Union([Type.Integer({ minimum: 1, maximum: 7 }), Type.String({ maxLength: 20 })], {
    description: `Weekly only (and required there): the day it goes out, 1 = Monday … 7 = Sunday, or its English name (${weekdayNames.join(', ')}; any case).`,
  }),
  enabled: Type.Boolean({ description: 'false pauses it. Omitted: a new schedule is enabled, an existing one keeps its state.' }),
}

export const DigestSchedule = Type.Object({
  project: Type.String({ description: 'The project id.' }),
  timezone: Type.String({ description: 'The project\'s time zone: the hour and the days are its.' }),
  frequency: StringEnum(digestFrequencies),
  hour: Type.Integer(),
  weekday: Type.Union([Type.Integer(), Type.Null()], { description: 'ISO weekday (1 = Monday … 7 = Sunday) of a weekly digest; null for daily.' }),
  enabled: Type.Boolean(),
  last_period_end: Type.Union([Day, Type.Null()], { description: 'The last day of the latest period sent (or skipped when the schedule was set); null before any.' }),
  last_sent_at: NullableTimestamp('When the latest digest was queued.'),
  next_at: NullableTimestamp('When the next digest is due (null while paused).'),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type DigestSchedule = Static<typeof DigestSchedule>

const Nullable = (n: ReturnType<typeof Type.Number>) => Type.Union([n, Type.Null()])
const Change = Nullable(Type.Number({ description: '(value − previous) / previous; null when previous is 0.' }))
const Range = Type.Object({ from: Day, to: Day })

/** What a digest says: the `data` of `digest.ready`, and preview_digest's answer. */
export const Digest = Type.Object({
  project: Type.Object({ id: Type.String(), slug: Type.String(), name: Type.String(), timezone: Type.String() }),
  frequency: StringEnum(digestFrequencies),
  period: Range,
  previous: Range,
  metrics: Type.Object({
    registrations: Type.Object({ value: Type.Integer(), previous: Type.Integer(), change: Change }),
    daily_users: Type.Object({ value: Type.Number({ description: 'Average per day.' }), previous: Type.Number(), change: Change }),
    events: Type.Array(Type.Object({ event: Type.String(), count: Type.Integer(), previous: Type.Integer(), change: Change }), { description: 'The top events by count (at most 10).' }),
  }),
  opportunities: Type.Object({
    new: Type.Integer({ description: 'Submitted in the period.' }),
    pending: Type.Integer({ description: 'Pending review now.' }),
    adopted: Type.Integer({ description: 'Became adopted in the period (and still are).' }),
    top_new: Type.Array(Type.Object({ event_id: Type.String(), key_information: Type.String() }), { description: 'New ones with the most reports first (at most 5).' }),
  }),
  alerts: Type.Array(Type.Object({
    id: Type.String({ description: 'The alert id.' }),
    name: Type.String(),
    kind: StringEnum(['triggered', 'resolved'] as const),
    day: Day,
    value: Type.Number(),
  }), { description: 'Alerts that fired or resolved on a day of the period, oldest first (at most 50).' }),
  generated_at: Timestamp(),
})
export type Digest = Static<typeof Digest>
