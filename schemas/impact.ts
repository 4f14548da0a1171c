// get_opportunity_impact's arguments and answer: the project's daily metrics before and after an
// opportunity's decision (it became adopted or done).
import { Type } from '@sinclair/typebox'
import { Day, StringEnum, Timestamp } from './atoms.ts'
import { EventId, Status } from './opportunities.ts'

/** The statuses a decision is: an opportunity that became one of them has a moment to measure from. */
export const decisionStatuses = ['adopted', 'done'] as const
export type DecisionStatus = (typeof decisionStatuses)[number]

/** The metrics with a name of their own (DESIGN §5's daily-ops fields), and how any event is named. */
export const namedMetrics = ['registrations', 'daily_users', 'signup_events', 'daily_use_events'] as const
export const DEFAULT_METRICS = ['registrations', 'daily_users'] as const
export const IMPACT_DAYS = { default: 14, minimum: 3, maximum: 90 } as const

export const ImpactMetric = Type.String({
  pattern: '^(?:registrations|daily_users|signup_events|daily_use_events|(?:users|events):.{1,200})$',
  description:
    '`registrations` (unique users with `signup` a day), `daily_users` (unique users with `daily_use` a day), ' +
    '`signup_events`, `daily_use_events` (raw counts), or any event as `users:<event>` (its unique users a day) ' +
    'or `events:<event>` (its count a day).',
})

export const ImpactArgs = Type.Object(
  {
    event_id: EventId,
    days: Type.Optional(Type.Integer({
      minimum: IMPACT_DAYS.minimum,
      maximum: IMPACT_DAYS.maximum,
      default: IMPACT_DAYS.default,
      description: 'N: the N whole days before the decision day against the N days after it (the decision day itself in neither).',
    })),
    metrics: Type.Optional(Type.Array(ImpactMetric, {
      minItems: 1,
      maxItems: 6,
      uniqueItems: true,
      default: [...DEFAULT_METRICS],
      description: 'Which daily metrics (default registrations and daily_users).',
    })),
    decision: Type.Optional(StringEnum(decisionStatuses, {
      description: 'Measure from when it last became this status (default: whichever of adopted and done happened last).',
    })),
  },
  { additionalProperties: false }
)

const Nullable = (description: string) => Type.Union([Type.Number(), Type.Null()], { description })

const Period = Type.Object({
  from: Day,
  to: Day,
  days_counted: Type.Integer({ description: 'Days of the period in the means: those that have closed (today and later are not).' }),
  days_left_out: Type.Integer({ description: 'Days of the period left out because they have not closed yet (today is partial).' }),
})

const DayValue = Type.Object({ date: Day, value: Type.Number() })

export const MetricImpact = Type.Object({
  metric: Type.String({ description: 'As asked: registrations, daily_users, signup_events, daily_use_events, users:<event>, events:<event>.' }),
  label: Type.String({ description: 'The metric in words.' }),
  before_mean: Nullable('The average day of the before-period.'),
  after_mean: Nullable('The average day of the after-period\'s closed days; null when none has closed.'),
  change: Nullable('after_mean − before_mean.'),
  relative_change: Nullable('(after_mean − before_mean) / before_mean; null when before_mean is 0.'),
  before_sd: Nullable('The before-days\' sample standard deviation.'),
  spread: Nullable('What z divides by: before_sd, but never below √before_mean nor 1 (a flat series still varies by chance).'),
  z: Nullable('(after_mean − before_mean) / spread: how many typical day-to-day swings of the before-period the average day after lies from the average day before.'),
  unusualness: Type.Union([StringEnum(['usual', 'unusual', 'very_unusual'] as const), Type.Null()], {
    description: '|z| < 1 usual, 1 ≤ |z| < 2 unusual, |z| ≥ 2 very_unusual; null when there is no after-day yet.',
  }),
  before_trend: Nullable('The before-days\' least-squares slope (per day, per day): a trend already under way before the decision.'),
  trend_change: Nullable('The change that before-trend alone would give if it had gone on (slope × the days between the two periods\' middles): compare it with `change`.'),
  before: Type.Array(DayValue, { description: 'The before-period, a value a day, oldest first, zeros included.' }),
  after: Type.Array(DayValue, { description: 'The after-period\'s closed days, oldest first, zeros included.' }),
})

export const OpportunityImpact = Type.Object({
  event_id: EventId,
  status: Status,
  timezone: Type.String(),
  today: Day,
  decision: Type.Object({
    status: StringEnum(decisionStatuses, { description: 'The status change measured from.' }),
    at: Timestamp('When its status last became that status (from the review history).'),
    day: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'That moment\'s day in the project time zone: in neither period.' }),
    adopted_at: Type.Union([Timestamp(), Type.Null()], { description: 'When it last became adopted; null if never.' }),
    done_at: Type.Union([Timestamp(), Type.Null()], { description: 'When it last became done; null if never.' }),
  }),
  days: Type.Integer({ description: 'N, the length of each period.' }),
  before: Period,
  after: Period,
  metrics: Type.Array(MetricImpact),
  note: Type.String({ description: 'The periods and what was left out, in words.' }),
  caveat: Type.String({ description: 'What this is not: what happened after the decision, not what it caused.' }),
})
