import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId, Opportunity } from '../schemas/opportunities.ts'

export default defineOperation({
  name: 'get_opportunity',
  title: 'Get a growth opportunity',
  description:
    'Growth opportunity by event_id, whole: its texts, review state, tags, assignee, `report_count`, `merged_into` ' +
    '(set when it is merged into another) and `version` (REST: the ETag).',
  scope: 'project',
  role: 'viewer',
  toolset: 'triage',
  input: Type.Object({ event_id: EventId }, { additionalProperties: false }),
  output: Opportunity,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'Read one opportunity before changing it', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' } }],
    invalid: [
      { title: 'No opportunity', args: {}, field: 'event_id' },
      { title: 'A memory id instead of an opportunity id', args: { event_id: 'mem_5Nq1Yc8ZrT3wLx7DfH2k' }, field: 'event_id' },
    ],
  },
  async handler(args, ctx) {
    const opportunity = await ctx.repos.opportunities.get(ctx.project.id, args.event_id)
    if (!opportunity) throw appError('NotFound', `Opportunity '${args.event_id}' was not found in project '${ctx.project.slug}'.`)
    return opportunity
  },
})
