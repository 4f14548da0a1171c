import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { TagName, tagName } from './triage-args.ts'

export default defineOperation({
  name: 'rename_tag',
  title: 'Rename a tag',
  description:
    'Opportunity tags: rename the project\'s tag `name` (any case) to `new_name` on every opportunity carrying it (each ' +
    'gets a history entry and a new version). A `new_name` another tag has is a `conflict`: tags are not merged. Needs ' +
    'review access.',
  toolset: 'triage',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({ name: TagName, new_name: TagName }, { additionalProperties: false }),
  output: Type.Object({
    name: Type.String({ description: 'Its name now.' }),
    previous_name: Type.String(),
    opportunities: Type.Integer({ description: 'How many opportunities it changed.' }),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'Rename a tag', args: { name: 'enterprise', new_name: 'Enterprise deals' } }],
    invalid: [
      { title: 'No new name', args: { name: 'enterprise' }, field: 'new_name' },
      { title: 'A blank new name', args: { name: 'enterprise', new_name: ' ' }, field: 'new_name' },
      { title: 'A new name over 40 characters', args: { name: 'enterprise', new_name: 'x'.repeat(41) }, field: 'new_name' },
    ],
  },
  async handler(args, ctx) {
    const name = tagName(args.name, 'name')
    const newName = tagName(args.new_name, 'new_name')
    const outcome = await ctx.repos.tags.rename(ctx.project.id, name, newName, ctx.principal.userId, ctx.now())
    if (outcome.kind === 'missing') throw appError('NotFound', `Project '${ctx.project.slug}' has no tag named '${name}'.`)
    if (outcome.kind === 'taken') throw appError('Conflict', `Project '${ctx.project.slug}' already has a tag named '${newName}' (any case): delete or rename that one first.`, [{ path: 'new_name', message: 'is the name of another tag' }])
    return { name: outcome.name, previous_name: name, opportunities: outcome.opportunities }
  },
})
