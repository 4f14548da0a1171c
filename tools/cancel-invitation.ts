// Cancelling an invitation still open: its link stops working.
import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { InvitationId } from '../schemas/members.ts'
import { isWorkspaceOwner, ownsAll, refuseReadOnly } from './member-access.ts'

export default defineOperation({
  name: 'cancel_invitation',
  title: 'Cancel an invitation',
  description:
    'Team members: cancel an invitation that has not been accepted, by its `id` (inv_…, from list_members): its ' +
    'link stops working at once. Needs the owner role in every project it names, or workspace ownership.',
  toolset: 'admin',
  scope: 'workspace',
  role: 'viewer',
  input: Type.Object({ id: InvitationId }, { additionalProperties: false }),
  output: Type.Object({ id: Type.String(), email: Type.String(), cancelled: Type.Boolean() }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  examples: {
    valid: [{ title: 'Cancel an invitation by its id', args: { id: 'inv_4Fq9Lw2Xc7Rt1Yb8Nm3K' } }],
    invalid: [
      { title: 'No id', args: {}, field: 'id' },
      { title: 'The link\'s token instead of the id', args: { id: 'gdv_4Fq9Lw2Xc7Rt1Yb8Nm3K' }, field: 'id' },
    ],
  },
  async handler(args, ctx) {
    refuseReadOnly(ctx)
    const invitation = await ctx.repos.members.findPending(ctx.principal.workspaceId, args.id)
    if (!invitation) throw appError('NotFound', `No open invitation with the id ${args.id}: it may have been accepted or cancelled already.`)
    if (!(await isWorkspaceOwner(ctx)) && !(await ownsAll(ctx, invitation.projects.map((p) => p.id)))) {
      throw appError('Forbidden', `Cancelling this invitation needs the owner role in every project it names (${invitation.projects.map((p) => p.slug).join(', ')}).`)
    }
    if (!(await ctx.repos.members.cancel(ctx.principal.workspaceId, args.id, ctx.now()))) {
      throw appError('NotFound', `No open invitation with the id ${args.id}: it may have been accepted or cancelled already.`)
    }
    return { id: args.id, email: invitation.email, cancelled: true }
  },
})
