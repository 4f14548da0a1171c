// Changing a member's role in a project (or giving them one there), by a project owner.
import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { Role } from '../schemas/atoms.ts'
import { MemberEmail } from '../schemas/members.ts'
import { normalEmail } from './member-access.ts'

export default defineOperation({
  name: 'update_member',
  title: 'Change a member\'s role',
  description:
    'Team members: set the `role` (viewer, reviewer or owner) of the workspace member with this `email` in the ' +
    '`project` (you own it); a member with no role there is added to it. It takes effect at once on every key and ' +
    'session of theirs. A project always keeps an owner: demoting its last owner is refused (conflict). Returns ' +
    'the new role and the one before (null: none).',
  toolset: 'admin',
  scope: 'project',
  role: 'owner',
  input: Type.Object({
    email: MemberEmail,
    role: Role,
  }, { additionalProperties: false }),
  output: Type.Object({
    email: Type.String(),
    project: Type.String({ description: 'The project\'s slug.' }),
    project_id: Type.String(),
    role: Role,
    previous_role: Type.Union([Role, Type.Null()], { description: 'Their role before (null: they were not a member of the project).' }),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Make a reviewer a viewer', args: { email: 'ana@example.com', role: 'viewer' } },
      { title: 'Make a member an owner of the project', args: { email: 'ben@example.com', role: 'owner' } },
    ],
    invalid: [
      { title: 'A role that does not exist', args: { email: 'ana@example.com', role: 'admin' }, field: 'role' },
      { title: 'No role', args: { email: 'ana@example.com' }, field: 'role' },
      { title: 'Not an email address', args: { email: 'ana', role: 'viewer' }, field: 'email' },
    ],
  },
  async handler(args, ctx) {
    const project = ctx.project
    const email = normalEmail(args.email)
    const member = await ctx.repos.members.find(ctx.principal.workspaceId, email)
    if (!member) throw appError('NotFound', `No member of this workspace has the email ${email}: invite_member invites someone new.`)
    const result = await ctx.repos.members.setRole({ userId: member.id, projectId: project.id, role: args.role, now: ctx.now() })
    if (!result.ok) throw appError('Conflict', `${email} is the last owner of project '${project.slug}': make someone else owner first.`)
    return { email, project: project.slug, project_id: project.id, role: args.role, previous_role: result.previous }
  },
})
