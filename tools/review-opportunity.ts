import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId, ReviewFields, ReviewResult } from '../schemas/opportunities.ts'

/** A review changes something: at least one of evaluation, status or note (else a 400). */
export function requireReviewField(args: { evaluation?: unknown; status?: unknown; note?: unknown }) {
  if (args.evaluation === undefined && args.status === undefined && args.note === undefined) {
    throw appError('InvalidArguments', 'Send at least one of evaluation, status or note.', [
      { path: '', message: 'must have at least one of evaluation, status, note' },
    ])
  }
}

export default defineOperation({
  name: 'review_opportunity',
  title: 'Review a growth opportunity',
  description:
    'Opportunity review: set a growth opportunity\'s `evaluation`, pipeline `status` and/or `note`; only the fields ' +
    'you send change, and the change joins its review history. Needs review access.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({ event_id: EventId, ...ReviewFields }, { additionalProperties: false }),
  output: ReviewResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      {
        title: 'Evaluate an opportunity useful and move it to contacted, with a note',
        args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', evaluation: 'useful', status: 'contacted', note: 'Emailed their CTO; call booked for Tuesday' },
      },
      { title: 'Clear the evaluation, nothing else', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', evaluation: '' } },
    ],
    invalid: [
      { title: 'An evaluation that does not exist', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', evaluation: 'great' }, field: 'evaluation' },
      { title: 'A note over 2000 characters', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', note: 'x'.repeat(2001) }, field: 'note' },
      { title: 'Not an opportunity id', args: { event_id: '42', status: 'done' }, field: 'event_id' },
      { title: 'Nothing to change', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' }, field: '' },
    ],
  },
  async handler(args, ctx) {
    const { event_id, evaluation, status, note } = args
    requireReviewField(args)
    const reviewed = await ctx.repos.opportunities.review(
      ctx.project.id,
      event_id,
      { evaluation, status, reviewNote: note },
      ctx.principal.userId,
      ctx.now()
    )
    if (!reviewed) throw appError('NotFound', `Opportunity '${event_id}' was not found in project '${ctx.project.slug}'.`)
    return {
      event_id: reviewed.event_id,
      evaluation: reviewed.evaluation,
      status: reviewed.status,
      review_note: reviewed.review_note,
      review_updated_at: reviewed.review_updated_at!,
    }
  },
})
