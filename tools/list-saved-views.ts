import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { SavedView } from '../schemas/saved-views.ts'

export default defineOperation({
  name: 'list_saved_views',
  title: 'List saved views',
  description:
    'Saved views of opportunities: your views of the project, then those other members shared, each by name, with ' +
    'its `filters` (pass them to list_opportunities), owner and `mine`.',
  scope: 'project',
  role: 'viewer',
  toolset: 'triage',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({ items: Type.Array(SavedView) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'Your views and those shared with the project', args: {} }],
    invalid: [{ title: 'An argument it does not take', args: { shared: true }, field: 'shared' }],
  },
  async handler(_args, ctx) {
    return { items: await ctx.repos.savedViews.list(ctx.project.id, ctx.principal.userId) }
  },
})
