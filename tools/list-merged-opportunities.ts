import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId } from '../schemas/opportunities.ts'
import { MergedList } from '../schemas/merges.ts'

export default defineOperation({
  name: 'list_merged_opportunities',
  title: 'List the opportunities merged into one',
  description:
    'Opportunity merges, read: the growth opportunities merged into one (`event_id`, the target), whole (texts, reason, ' +
    'suggested action, received time, review state), in merge order. Their histories stay their own (get_review_history).',
  scope: 'project',
  role: 'viewer',
  toolset: 'triage',
  input: Type.Object({ event_id: Type.String({ pattern: EventId.pattern, description: 'The target.' }) }, { additionalProperties: false }),
  output: MergedList,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'Every report folded into an opportunity', args: { event_id: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q' } }],
    invalid: [
      { title: 'No opportunity', args: {}, field: 'event_id' },
      { title: 'A memory id instead of an opportunity id', args: { event_id: 'mem_5Nq1Yc8ZrT3wLx7DfH2k' }, field: 'event_id' },
      { title: 'A page size, which it does not take', args: { event_id: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q', page_size: 5 }, field: 'page_size' },
    ],
  },
  async handler(args, ctx) {
    const items = await ctx.repos.merges.sources(ctx.project.id, args.event_id)
    if (!items) throw appError('NotFound', `Opportunity '${args.event_id}' was not found in project '${ctx.project.slug}'.`)
    return { event_id: args.event_id, items }
  },
})
