import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId } from '../schemas/opportunities.ts'
import { UnmergeResult } from '../schemas/merges.ts'

export default defineOperation({
  name: 'unmerge_opportunity',
  title: 'Unmerge a growth opportunity',
  description:
    'Opportunity unmerge: take a merged growth opportunity (`event_id`) back out of the one it was merged into, ' +
    'atomically. It is restored exactly as it was before the merge (same fields, review state, history and `version`) ' +
    'and is listed again; the target\'s `report_count` drops by its reports and the target gets a new `version`. ' +
    'Needs review access.',
  scope: 'project',
  role: 'reviewer',
  toolset: 'triage',
  input: Type.Object({ event_id: Type.String({ pattern: EventId.pattern, description: 'The merged opportunity (its `merged_into` is set).' }) }, { additionalProperties: false }),
  output: UnmergeResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  examples: {
    valid: [
      // One of merge_opportunities' first example's sources: merged by that example, which runs first.
      { title: 'Take an opportunity merged by mistake back out', args: { event_id: 'opp_1Dx5Lb8Qs3Vj7Ky2Wf6m' } },
    ],
    invalid: [
      { title: 'No opportunity', args: {}, field: 'event_id' },
      { title: 'A memory id instead of an opportunity id', args: { event_id: 'mem_5Nq1Yc8ZrT3wLx7DfH2k' }, field: 'event_id' },
      { title: 'A target to unmerge from, which it does not take', args: { event_id: 'opp_1Dx5Lb8Qs3Vj7Ky2Wf6m', from: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q' }, field: 'from' },
    ],
  },
  async handler(args, ctx) {
    const { event_id } = args
    const outcome = await ctx.repos.merges.unmerge(ctx.project.id, event_id, ctx.principal.userId, ctx.now())
    if (outcome.kind === 'missing') throw appError('NotFound', `Opportunity '${event_id}' was not found in project '${ctx.project.slug}'.`)
    if (outcome.kind === 'not_merged') {
      throw appError('Conflict', `Opportunity '${event_id}' is not merged into another; there is nothing to unmerge.`, [{ path: 'event_id', message: `'${event_id}' is not merged` }])
    }
    return { ...outcome.source, unmerged_from: outcome.target }
  },
})
