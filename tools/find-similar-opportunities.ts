import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId, SimilarOpportunity } from '../schemas/opportunities.ts'
import { SIMILAR } from '../db/repositories/opportunities.ts'

export default defineOperation({
  name: 'find_similar_opportunities',
  title: 'Find similar growth opportunities',
  description:
    'Opportunity duplicates: the opportunities of the project (not merged) whose key_information looks most like a ' +
    '`text` or like the opportunity `event_id` (never itself), best first, with a `score` from 0 to 1 (trigram ' +
    'similarity; 1 = the same text). Send exactly one of `text` or `event_id`. Use it before merging or to check a ' +
    'finding before submitting it (submit_opportunity answers the same as `similar`).',
  scope: 'project',
  role: 'viewer',
  toolset: 'triage',
  input: Type.Object({
    text: Type.Optional(Type.String({ minLength: 1, maxLength: 10000, description: 'Text to compare (its first 1,000 characters).' })),
    event_id: Type.Optional(EventId),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, default: 5 })),
    min_score: Type.Optional(Type.Number({ minimum: 0.1, maximum: 1, default: SIMILAR.minScore, description: 'Leave out those scoring less.' })),
  }, { additionalProperties: false }),
  output: Type.Object({ items: Type.Array(SimilarOpportunity) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Is this finding already there?', args: { text: 'CTO of a 40-person fintech asked on the forum whether we support SSO and audit logs' } },
      { title: 'The likely duplicates of one opportunity, looser', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', limit: 10, min_score: 0.2 } },
    ],
    invalid: [
      { title: 'Neither a text nor an opportunity', args: { limit: 5 }, field: '' },
      { title: 'Both a text and an opportunity', args: { text: 'SSO request from a fintech CTO', event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' }, field: '' },
      { title: 'No results asked for', args: { text: 'SSO request from a fintech CTO', limit: 0 }, field: 'limit' },
      { title: 'A score above 1', args: { text: 'SSO request from a fintech CTO', min_score: 1.5 }, field: 'min_score' },
    ],
  },
  async handler(args, ctx) {
    if ((args.text === undefined) === (args.event_id === undefined)) {
      throw appError('InvalidArguments', 'Send exactly one of `text` or `event_id`.', [{ path: '', message: 'must have exactly one of text, event_id' }])
    }
    let text = args.text
    if (args.event_id !== undefined) {
      const opportunity = await ctx.repos.opportunities.get(ctx.project.id, args.event_id)
      if (!opportunity) throw appError('NotFound', `Opportunity '${args.event_id}' was not found in project '${ctx.project.slug}'.`)
      text = opportunity.key_information
    }
    const items = await ctx.repos.opportunities.similar(ctx.project.id, { text: text!, limit: args.limit ?? 5, minScore: args.min_score ?? SIMILAR.minScore, exclude: args.event_id })
    return { items }
  },
})
