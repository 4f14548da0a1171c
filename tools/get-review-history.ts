import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId, ReviewHistory, type HistoryAction } from '../schemas/opportunities.ts'

export default defineOperation({
  name: 'get_review_history',
  title: 'Review history of an opportunity',
  description:
    'Review history of a growth opportunity, oldest first: who changed it, when, what (`action`: review, merge, assign, ' +
    'tag…), and each field before → after. Needs review access.',
  scope: 'project',
  role: 'reviewer',
  toolset: 'triage',
  input: Type.Object({ event_id: EventId }, { additionalProperties: false }),
  output: ReviewHistory,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'How an opportunity moved through the pipeline', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' } }],
    invalid: [
      { title: 'No opportunity', args: {}, field: 'event_id' },
      { title: 'A memory id instead of an opportunity id', args: { event_id: 'mem_5Nq1Yc8ZrT3wLx7DfH2k' }, field: 'event_id' },
      { title: 'An argument it does not take', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', limit: 5 }, field: 'limit' },
    ],
  },
  async handler(args, ctx) {
    if (!(await ctx.repos.opportunities.exists(ctx.project.id, args.event_id))) {
      throw appError('NotFound', `Opportunity '${args.event_id}' was not found in project '${ctx.project.slug}'.`)
    }
    const rows = await ctx.repos.opportunities.history(args.event_id)
    return {
      event_id: args.event_id,
      items: rows.map((r) => ({
        changed_at: r.changedAt.toISOString(),
        action: r.action as HistoryAction,
        actor: r.actorId ? { id: r.actorId, email: r.actorEmail! } : null,
        before: r.before as Record<string, unknown>,
        after: r.after as Record<string, unknown>,
      })),
    }
  },
})
