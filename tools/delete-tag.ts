import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { TagName, tagName } from './triage-args.ts'

export default defineOperation({
  name: 'delete_tag',
  title: 'Delete a tag',
  description:
    'Opportunity tags: delete the project\'s tag `name` (any case) and take it off every opportunity carrying it (each ' +
    'gets a history entry and a new version). Needs review access.',
  toolset: 'triage',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({ name: TagName }, { additionalProperties: false }),
  output: Type.Object({
    name: Type.String({ description: 'The name it had.' }),
    deleted: Type.Boolean(),
    opportunities: Type.Integer({ description: 'How many opportunities carried it.' }),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  examples: {
    valid: [{ title: 'Delete a tag', args: { name: 'churn risk' } }],
    invalid: [
      { title: 'No name', args: {}, field: 'name' },
      { title: 'A name as a list', args: { name: ['pricing'] }, field: 'name' },
    ],
  },
  async handler(args, ctx) {
    const name = tagName(args.name, 'name')
    const outcome = await ctx.repos.tags.delete(ctx.project.id, name, ctx.principal.userId, ctx.now())
    if (outcome.kind !== 'done') throw appError('NotFound', `Project '${ctx.project.slug}' has no tag named '${name}'.`)
    return { name: outcome.name, deleted: true, opportunities: outcome.opportunities }
  },
})
