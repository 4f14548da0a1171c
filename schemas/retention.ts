// Retention (issue 29): cohorts by the first day (or ISO week) of a start event, and which of
// their users did a return event in each period after it. Definitions in docs/api.md.
import { Type } from '@sinclair/typebox'
import { Day, StringEnum } from './atoms.ts'
import { DAILY_USE, RangeParams, SIGNUP } from './metrics.ts'

export const retentionUnits = ['day', 'week'] as const
/** How many periods after the cohort's own an answer can hold, and how many by default, per unit. */
export const RETENTION_PERIODS = { day: { max: 90, default: 7 }, week: { max: 26, default: 4 } } as const

const EventName = (fallback: string, what: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 200, default: fallback, description: `${what} (default \`${fallback}\`).` }))

export const RetentionArgs = Type.Object(
  {
    start_event: EventName(SIGNUP, 'The event whose first day makes a user part of a cohort'),
    return_event: EventName(DAILY_USE, 'The event that counts as a return; may be the start event'),
    period: Type.Optional(StringEnum(retentionUnits, { default: 'day', description: 'Cohorts and periods by day, or by ISO week (Monday to Sunday, project time zone).' })),
    periods: Type.Optional(Type.Integer({
      minimum: 1,
      maximum: RETENTION_PERIODS.day.max,
      description: `Periods after the cohort's own: days 1–${RETENTION_PERIODS.day.max} (default ${RETENTION_PERIODS.day.default}), weeks 1–${RETENTION_PERIODS.week.max} (default ${RETENTION_PERIODS.week.default}).`,
    })),
    // No schema default (WindowParam's 7d): a default would be filled in beside from/to, which refuses window.
    window: Type.Optional(StringEnum(['7d', '30d'] as const, { description: 'The cohorts of the last 7 or 30 days, today included (the default: 7d), instead of from/to.' })),
    ...RangeParams,
  },
  { additionalProperties: false }
)

const Counts = Type.Array(Type.Union([Type.Integer(), Type.Null()]), { description: 'Index k = period k (0 = the cohort\'s own); null while period k is not complete.' })
const Fractions = Type.Array(Type.Union([Type.Number(), Type.Null()]), { description: 'returned / users, rounded to 4 decimals; null while incomplete or with no users.' })

export const RetentionCohort = Type.Object({
  cohort: Day,
  users: Type.Integer({ description: 'Users whose first start event ever is in this cohort\'s day (or week).' }),
  complete: Type.Integer({ description: 'How many periods, from period 0, have ended before today: the rest are null.' }),
  returned: Counts,
  fractions: Fractions,
})

export const RetentionOverall = Type.Object({
  users: Type.Integer({ description: 'Users of every cohort.' }),
  base: Type.Array(Type.Integer(), { description: 'Per period: the users of the cohorts in which it is complete (the weights).' }),
  returned: Counts,
  fractions: Fractions,
})

const Cohorts = {
  from: Day,
  to: Day,
  cohorts: Type.Array(RetentionCohort, { description: 'One per day (or week) of the range, oldest first, empty ones included.' }),
  overall: RetentionOverall,
}

export const Retention = Type.Object({
  project: Type.String(),
  timezone: Type.String(),
  today: Day,
  start_event: Type.String(),
  return_event: Type.String(),
  period: StringEnum(retentionUnits),
  periods: Type.Integer(),
  window: Type.Union([StringEnum(['7d', '30d'] as const), Type.Null()]),
  ...Cohorts,
  previous: Type.Optional(Type.Object(Cohorts, { description: 'With compare: the cohorts of the period of equal length just before.' })),
})
