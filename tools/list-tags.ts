import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'

export default defineOperation({
  name: 'list_tags',
  title: 'List tags',
  description:
    'Opportunity tags of a project, in name order, each with how many opportunities (not merged) carry it. ' +
    'list_opportunities filters by one (`tag`). Needs review access.',
  toolset: 'triage',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({
    items: Type.Array(Type.Object({ name: Type.String(), opportunities: Type.Integer({ description: 'How many opportunities (not merged) carry it.' }) })),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'The tags in use and how often', args: {} }],
    invalid: [{ title: 'An argument it does not take', args: { tag: 'pricing' }, field: 'tag' }],
  },
  async handler(_args, ctx) {
    const rows = await ctx.repos.tags.list(ctx.project.id)
    return { items: rows.map((r) => ({ name: r.name, opportunities: r.count })) }
  },
})
