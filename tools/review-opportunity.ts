import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId, ReviewFields, ReviewPrecondition, ReviewResult } from '../schemas/opportunities.ts'

/** A review changes something: at least one of evaluation, status or note (else a 400). */
export function requireReviewField(args: { evaluation?: unknown; status?: unknown; note?: unknown }) {
  if (args.evaluation === undefined && args.status === undefined && args.note === undefined) {
    throw appError('InvalidArguments', 'Send at least one of evaluation, status or note.', [
      { path: '', message: 'must have at least one of evaluation, status, note' },
    ])
  }
}

/**
 * The `conflict` of a change whose precondition failed: the opportunity is no longer at the
 * version the caller read. It names the current version (in the message, the detail and
 * `version`, which the REST route sends as the ETag of its 412).
 */
export function versionConflict(eventId: string, expected: number, current: number, path = 'if_version') {
  const err = appError(
    'Conflict',
    `Opportunity '${eventId}' was changed by someone else: it is at version ${current}, not ${expected}. Nothing was changed; read it again and send your change with version ${current} if it still applies.`,
    [{ path, message: `is ${expected}, but the opportunity is now at version ${current}` }]
  )
  return Object.assign(err, { version: current })
}

/**
 * The `conflict` of a change of an opportunity that is merged into another: it stays as it was
 * until it is unmerged (tools/unmerge-opportunity.ts), so that its unmerge restores it exactly.
 */
export function mergedConflict(eventId: string, into: string, path = 'event_id') {
  return appError('Conflict', `Opportunity '${eventId}' is merged into '${into}'; unmerge it first (unmerge_opportunity) to change it.`, [
    { path, message: `'${eventId}' is merged into '${into}'` },
  ])
}

export default defineOperation({
  name: 'review_opportunity',
  title: 'Review a growth opportunity',
  description:
    'Opportunity review: set a growth opportunity\'s `evaluation`, pipeline `status` and/or `note`; only the fields ' +
    'you send change, and the change joins its review history. With `if_version` (the `version` you read) it changes ' +
    'only if no one changed it since, else a `conflict` names the current version. Needs review access.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({ event_id: EventId, ...ReviewFields, ...ReviewPrecondition }, { additionalProperties: false }),
  output: ReviewResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      {
        title: 'Evaluate an opportunity useful and move it to contacted, with a note',
        args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', evaluation: 'useful', status: 'contacted', note: 'Emailed their CTO; call booked for Tuesday' },
      },
      { title: 'Clear the evaluation, nothing else', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', evaluation: '' } },
      {
        title: 'Move an opportunity to reviewing only if no one has changed it since you read it (version 1)',
        args: { event_id: 'opp_4Kv8Ns2Pq6Xt9Bd3Hm7w', status: 'reviewing', if_version: 1 },
      },
    ],
    invalid: [
      { title: 'An evaluation that does not exist', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', evaluation: 'great' }, field: 'evaluation' },
      { title: 'A note over 2000 characters', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', note: 'x'.repeat(2001) }, field: 'note' },
      { title: 'Not an opportunity id', args: { event_id: '42', status: 'done' }, field: 'event_id' },
      { title: 'Nothing to change', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' }, field: '' },
      { title: 'A version that no opportunity has', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', status: 'done', if_version: 0 }, field: 'if_version' },
      { title: 'A version as a string', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', status: 'done', if_version: '3' }, field: 'if_version' },
    ],
  },
  async handler(args, ctx) {
    const { event_id, evaluation, status, note, if_version } = args
    requireReviewField(args)
    const outcome = await ctx.repos.opportunities.review(
      ctx.project.id,
      event_id,
      { evaluation, status, reviewNote: note },
      ctx.principal.userId,
      ctx.now(),
      if_version
    )
    if (outcome.kind === 'missing') throw appError('NotFound', `Opportunity '${event_id}' was not found in project '${ctx.project.slug}'.`)
    if (outcome.kind === 'merged') throw mergedConflict(event_id, outcome.into)
    if (outcome.kind === 'moved') throw versionConflict(event_id, if_version!, outcome.version)
    const reviewed = outcome.opportunity
    return {
      event_id: reviewed.event_id,
      evaluation: reviewed.evaluation,
      status: reviewed.status,
      review_note: reviewed.review_note,
      review_updated_at: reviewed.review_updated_at!,
      version: reviewed.version,
    }
  },
})
