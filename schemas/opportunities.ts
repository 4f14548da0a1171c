import { Type, type Static } from '@sinclair/typebox'
import { NullableTimestamp, Page, PageOf, PageSize, StringEnum, Timestamp } from './atoms.ts'

export const statuses = ['pending', 'reviewing', 'contacted', 'adopted', 'ignored', 'done'] as const
export const evaluations = ['useful', 'not_useful', ''] as const

export const Status = StringEnum(statuses)
export type Status = (typeof statuses)[number]
export const Evaluation = StringEnum(evaluations, { description: '"" clears it.' })
export type Evaluation = (typeof evaluations)[number]
export const EventId = Type.String({ pattern: '^opp_[0-9A-Za-z]{1,40}$' })
export const ContributionType = Type.String({
  pattern: '^[a-z][a-z0-9_]{0,63}$',
  description: 'e.g. potential_user_opportunity.',
})

/** An opportunity's version: 1 when submitted, one more with each change (its ETag on REST). */
export const Version = Type.Integer({
  minimum: 1,
  description: 'The opportunity\'s version: 1 when submitted, one more with every change of it. Send it back as `if_version` (REST: `If-Match: "<version>"`) to change it only if no one has since.',
})

/** The precondition of a change: the version the caller last saw (a conflict error when it moved). */
export const IfVersion = Type.Integer({
  minimum: 1,
  maximum: 2147483647,
  description: 'The `version` you read: change it only if it is still that (else a `conflict`).',
})

/** A member as an opportunity names one (its assignee, an author, an actor). */
export const Member = Type.Object({ id: Type.String(), email: Type.String() })

export const Opportunity = Type.Object({
  event_id: Type.String(),
  contribution_type: Type.String(),
  key_information: Type.String(),
  reason: Type.String(),
  suggested_action: Type.String(),
  source_url: Type.Union([Type.String(), Type.Null()]),
  external_id: Type.Union([Type.String(), Type.Null()]),
  received_at: Timestamp(),
  evaluation: Evaluation,
  status: Status,
  review_note: Type.String(),
  review_updated_at: NullableTimestamp(),
  version: Version,
  report_count: Type.Integer({ minimum: 1, description: '1, plus one for each opportunity merged into it.' }),
  merged_into: Type.Union([Type.String(), Type.Null()], { description: 'The event_id it is merged into (then it is in no listing); null when not merged.' }),
  tags: Type.Array(Type.String(), { description: 'Its tags\' names, in name order.' }),
  assignee: Type.Union([Member, Type.Null()], { description: 'The member it is given to.' }),
})
export type Opportunity = Static<typeof Opportunity>

/** The filters of the listing (spec 4.1); every bad value is a 400, never ignored. */
export const OpportunityFilters = {
  type: Type.Optional(Type.String({ pattern: ContributionType.pattern, default: 'all', description: '`all` or one opportunity type.' })),
  date: Type.Optional(StringEnum(['all', 'today'] as const, { default: 'all', description: '`today`: received today (project time zone).' })),
  evaluation: Type.Optional(StringEnum(['all', 'useful', 'not_useful'] as const, { default: 'all' })),
  status: Type.Optional(StringEnum(['all', ...statuses] as const, { default: 'all' })),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Text to find in the texts and type (any case).',
    })
  ),
  tag: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'A tag.' })),
  assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 254, description: 'Email, user id, `me` or `none`.' })),
  page: Type.Optional(Page),
  page_size: Type.Optional(PageSize),
  after: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The last page\'s next_cursor.',
    })
  ),
}

export const OpportunityPage = Type.Composite([
  PageOf(Opportunity),
  Type.Object({
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as `after` (same filters and page_size) for the next page; null on the last page.',
    }),
  }),
])

/** The review fields: the PATCH body and the review_opportunity tool are built from these. */
export const ReviewFields = {
  evaluation: Type.Optional(Evaluation),
  status: Type.Optional(Status),
  note: Type.Optional(Type.String({ maxLength: 2000, description: 'Stored as review_note.' })),
}

/** The precondition of one review: the PATCH route takes it from `If-Match` instead (routes/project-api.ts). */
export const ReviewPrecondition = {
  if_version: Type.Optional(IfVersion),
}

export const ReviewResult = Type.Object({
  event_id: Type.String(),
  evaluation: Evaluation,
  status: Status,
  review_note: Type.String(),
  review_updated_at: Timestamp(),
  version: Version,
})

/** The arguments of a bulk review: the same review fields, for 1–100 distinct opportunities. */
export const BulkReviewIds = Type.Array(EventId, {
  minItems: 1,
  maxItems: 100,
  uniqueItems: true,
  description: 'The result keeps their order.',
})

/** The preconditions of a bulk review: one version per id of `event_ids`, in its order. */
export const BulkIfVersions = Type.Array(IfVersion, {
  minItems: 1,
  maxItems: 100,
  description: 'The `version` you read of each of `event_ids`, in its order: if any moved, nothing changes (a `conflict`).',
})

export const BulkReviewResult = Type.Object({ items: Type.Array(ReviewResult) })

/** What a history entry can record besides a review (each writes its own fields in before/after). */
export const historyActions = ['review', 'merge', 'merged', 'unmerge', 'unmerged', 'assign', 'tag', 'comment'] as const
export type HistoryAction = (typeof historyActions)[number]

/** The fields an entry changed, before or after: a review's, or those of the other actions. */
const ReviewState = Type.Object({
  evaluation: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
  review_note: Type.Optional(Type.String()),
}, { additionalProperties: true })

export const ReviewHistory = Type.Object({
  event_id: Type.String(),
  items: Type.Array(
    Type.Object({
      changed_at: Timestamp(),
      action: StringEnum(historyActions, { description: 'What changed it: a review, or a merge, unmerge, assignment, tagging or comment.' }),
      actor: Type.Union([Member, Type.Null()]),
      before: ReviewState,
      after: ReviewState,
    })
  ),
})

export const SubmissionFields = {
  contribution_type: ContributionType,
  key_information: Type.String({ minLength: 1, maxLength: 10000, description: 'The facts.' }),
  reason: Type.String({ minLength: 1, maxLength: 5000, description: 'Why it was raised.' }),
  suggested_action: Type.String({ minLength: 1, maxLength: 5000, description: 'The next step.' }),
  source_url: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description: 'Where it was found.' })),
  external_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: 'Your id for it (safe retries).' })
  ),
}

/** An opportunity like another (its key_information, by pg_trgm similarity): a submission answers up to 5. */
export const SimilarOpportunity = Type.Object({
  event_id: Type.String(),
  score: Type.Number({ minimum: 0, maximum: 1 }),
  key_information: Type.String(),
})
export type SimilarOpportunity = Static<typeof SimilarOpportunity>

export const SubmissionResult = Type.Composite([Opportunity, Type.Object({
  created: Type.Boolean({ description: 'false when external_id matched an existing opportunity' }),
  similar: Type.Array(SimilarOpportunity, { maxItems: 5, description: 'Possible duplicates, best first.' }),
})])
