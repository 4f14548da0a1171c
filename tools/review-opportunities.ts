import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { requireReviewField } from './review-opportunity.ts'
import { BulkReviewIds, BulkReviewResult, ReviewFields } from '../schemas/opportunities.ts'

export default defineOperation({
  name: 'review_opportunities',
  title: 'Review growth opportunities in bulk',
  description:
    'Opportunity reviews in bulk: the same `evaluation`, `status` and/or `note` for 1–100 growth opportunities, ' +
    'atomically (an id not in the project changes nothing and is named). Needs review access.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({ event_ids: BulkReviewIds, ...ReviewFields }, { additionalProperties: false }),
  output: BulkReviewResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Mark three opportunities done', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3', 'opp_5Hs8TqW1nZ6yPe3AkG0u', 'opp_9Fd4Jx2Bv7Mw1Qr6Ls8e'], status: 'done' } },
      {
        title: 'Evaluate two not useful and ignore them, with the reason',
        args: { event_ids: ['opp_5Hs8TqW1nZ6yPe3AkG0u', 'opp_9Fd4Jx2Bv7Mw1Qr6Ls8e'], evaluation: 'not_useful', status: 'ignored', note: 'Agencies reselling, not customers' },
      },
    ],
    invalid: [
      { title: 'No opportunities', args: { event_ids: [], status: 'done' }, field: 'event_ids' },
      { title: 'The same opportunity twice', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3', 'opp_2x7Kq9LmVb4Nc8Rt1Yw3'], status: 'done' }, field: 'event_ids' },
      { title: 'Not an opportunity id among them', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3', 'mem_5Nq1Yc8ZrT3wLx7DfH2k'], status: 'done' }, field: 'event_ids[1]' },
      { title: 'A status that does not exist', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3'], status: 'closed' }, field: 'status' },
      { title: 'Nothing to change', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3'] }, field: '' },
    ],
  },
  async handler(args, ctx) {
    const { event_ids, evaluation, status, note } = args
    requireReviewField(args)
    const { items, missing } = await ctx.repos.opportunities.reviewMany(
      ctx.project.id,
      event_ids,
      { evaluation, status, reviewNote: note },
      ctx.principal.userId,
      ctx.now()
    )
    if (missing.length > 0) {
      const names = missing.map((id) => `'${id}'`).join(', ')
      throw appError(
        'NotFound',
        `${missing.length === 1 ? 'Opportunity' : 'Opportunities'} ${names} ${missing.length === 1 ? 'was' : 'were'} not found in project '${ctx.project.slug}'; nothing was changed.`,
        missing.map((id) => ({ path: `event_ids[${event_ids.indexOf(id)}]`, message: `'${id}' was not found in this project` }))
      )
    }
    return {
      items: items.map((o) => ({
        event_id: o.event_id,
        evaluation: o.evaluation,
        status: o.status,
        review_note: o.review_note,
        review_updated_at: o.review_updated_at!,
      })),
    }
  },
})
