import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { requireReviewField } from './review-opportunity.ts'
import { BulkIfVersions, BulkReviewIds, BulkReviewResult, ReviewFields } from '../schemas/opportunities.ts'

export default defineOperation({
  name: 'review_opportunities',
  title: 'Review growth opportunities in bulk',
  description:
    'Opportunity reviews in bulk: the same `evaluation`, `status` and/or `note` for 1–100 growth opportunities, ' +
    'atomically (an id not in the project changes nothing and is named). With `if_versions` (the `version` read of each, ' +
    'in the order of event_ids) nothing changes if any moved since (`conflict`). Needs review access.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({ event_ids: BulkReviewIds, ...ReviewFields, if_versions: Type.Optional(BulkIfVersions) }, { additionalProperties: false }),
  output: BulkReviewResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Mark three opportunities done', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3', 'opp_5Hs8TqW1nZ6yPe3AkG0u', 'opp_9Fd4Jx2Bv7Mw1Qr6Ls8e'], status: 'done' } },
      {
        title: 'Evaluate two not useful and ignore them, with the reason',
        args: { event_ids: ['opp_5Hs8TqW1nZ6yPe3AkG0u', 'opp_9Fd4Jx2Bv7Mw1Qr6Ls8e'], evaluation: 'not_useful', status: 'ignored', note: 'Agencies reselling, not customers' },
      },
      {
        title: 'Mark two opportunities contacted only if neither has changed since you read them (both at version 1)',
        args: { event_ids: ['opp_3Gp6Vz1Kc8Qs4Nw7Jt2y', 'opp_6Ym9Bf3Rd5Xh2Lk8Pv1s'], status: 'contacted', if_versions: [1, 1] },
      },
    ],
    invalid: [
      { title: 'No opportunities', args: { event_ids: [], status: 'done' }, field: 'event_ids' },
      { title: 'The same opportunity twice', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3', 'opp_2x7Kq9LmVb4Nc8Rt1Yw3'], status: 'done' }, field: 'event_ids' },
      { title: 'Not an opportunity id among them', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3', 'mem_5Nq1Yc8ZrT3wLx7DfH2k'], status: 'done' }, field: 'event_ids[1]' },
      { title: 'A status that does not exist', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3'], status: 'closed' }, field: 'status' },
      { title: 'Nothing to change', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3'] }, field: '' },
      { title: 'A version below 1', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3'], status: 'done', if_versions: [0] }, field: 'if_versions[0]' },
      { title: 'A version as a string', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3'], status: 'done', if_versions: ['2'] }, field: 'if_versions[0]' },
      { title: 'Fewer versions than opportunities', args: { event_ids: ['opp_2x7Kq9LmVb4Nc8Rt1Yw3', 'opp_5Hs8TqW1nZ6yPe3AkG0u'], status: 'done', if_versions: [1] }, field: 'if_versions' },
    ],
  },
  async handler(args, ctx) {
    const { event_ids, evaluation, status, note, if_versions } = args
    requireReviewField(args)
    if (if_versions && if_versions.length !== event_ids.length) {
      throw appError('InvalidArguments', `Send one version per opportunity: ${event_ids.length} in event_ids, ${if_versions.length} in if_versions.`, [
        { path: 'if_versions', message: `must have one version per id of event_ids (${event_ids.length})` },
      ])
    }
    const outcome = await ctx.repos.opportunities.reviewMany(
      ctx.project.id,
      event_ids,
      { evaluation, status, reviewNote: note },
      ctx.principal.userId,
      ctx.now(),
      if_versions
    )
    if (outcome.kind === 'missing') {
      const { missing } = outcome
      const names = missing.map((id) => `'${id}'`).join(', ')
      throw appError(
        'NotFound',
        `${missing.length === 1 ? 'Opportunity' : 'Opportunities'} ${names} ${missing.length === 1 ? 'was' : 'were'} not found in project '${ctx.project.slug}'; nothing was changed.`,
        missing.map((id) => ({ path: `event_ids[${event_ids.indexOf(id)}]`, message: `'${id}' was not found in this project` }))
      )
    }
    if (outcome.kind === 'merged') {
      const { merged } = outcome
      const names = merged.map((m) => `'${m.id}' (merged into '${m.into}')`).join(', ')
      throw appError(
        'Conflict',
        `${merged.length === 1 ? 'Opportunity' : 'Opportunities'} ${names} ${merged.length === 1 ? 'is' : 'are'} merged into another; nothing was changed. Unmerge ${merged.length === 1 ? 'it' : 'them'} first (unmerge_opportunity), or leave ${merged.length === 1 ? 'it' : 'them'} out.`,
        merged.map((m) => ({ path: `event_ids[${event_ids.indexOf(m.id)}]`, message: `'${m.id}' is merged into '${m.into}'` }))
      )
    }
    if (outcome.kind === 'moved') {
      const { moved } = outcome
      const names = moved.map((m) => `'${m.id}' (now at version ${m.version}, not ${m.expected})`).join(', ')
      throw appError(
        'Conflict',
        `${moved.length === 1 ? 'Opportunity' : 'Opportunities'} ${names} ${moved.length === 1 ? 'was' : 'were'} changed by someone else; nothing was changed. Read them again and send your change with their current versions if it still applies.`,
        moved.map((m) => ({ path: `if_versions[${event_ids.indexOf(m.id)}]`, message: `is ${m.expected}, but '${m.id}' is now at version ${m.version}` }))
      )
    }
    return {
      items: outcome.items.map((o) => ({
        event_id: o.event_id,
        evaluation: o.evaluation,
        status: o.status,
        review_note: o.review_note,
        review_updated_at: o.review_updated_at!,
        version: o.version,
      })),
    }
  },
})
