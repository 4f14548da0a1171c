import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { ViewId } from '../schemas/saved-views.ts'

export default defineOperation({
  name: 'delete_saved_view',
  title: 'Delete a saved view',
  description:
    'Saved views of opportunities: delete one by its `view_id`. Only whoever saved it may, or a project owner when ' +
    'it is shared. The opportunities do not change.',
  scope: 'project',
  role: 'viewer',
  toolset: 'triage',
  input: Type.Object({ view_id: ViewId }, { additionalProperties: false }),
  output: Type.Object({ view_id: Type.String(), deleted: Type.Literal(true) }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  examples: {
    valid: [{ title: 'Delete a view you saved', args: { view_id: 'view_3Jr8Lp2Xc6Vn1Qb9Ts4W' } }],
    invalid: [
      { title: 'No view', args: {}, field: 'view_id' },
      { title: 'Not a view id', args: { view_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' }, field: 'view_id' },
    ],
  },
  async handler(args, ctx) {
    if (ctx.principal.readOnly) throw appError('Forbidden', 'This key is read-only: it cannot delete views.')
    const outcome = await ctx.repos.savedViews.remove({
      projectId: ctx.project.id,
      viewId: args.view_id,
      userId: ctx.principal.userId,
      projectOwner: ctx.project.role === 'owner',
    })
    if (outcome === 'forbidden') throw appError('Forbidden', `View '${args.view_id}' is another member's: only they, or an owner of project '${ctx.project.slug}', may delete it.`)
    if (outcome === 'missing') throw appError('NotFound', `View '${args.view_id}' was not found in project '${ctx.project.slug}'.`)
    return { view_id: args.view_id, deleted: true as const }
  },
})
