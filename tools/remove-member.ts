// Removing a member from one project, or from the workspace: then their sessions end and their
// keys and OAuth grants stop working at once, on every instance.
import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { StringEnum } from '../schemas/atoms.ts'
import { MemberEmail } from '../schemas/members.ts'
import { isWorkspaceOwner, normalEmail, ownedProject, ownsAll, refuseReadOnly } from './member-access.ts'

export default defineOperation({
  name: 'remove_member',
  title: 'Remove a member',
  description:
    'Team members: with `from_project`, end the membership of the member with this `email` in that project only (you ' +
    'own it; a project keeps an owner). Without it, remove them from the whole workspace: their console sessions end and their ' +
    'keys and OAuth grants stop working at once; their past work keeps its author. Either way their assignments there end. Needs the owner role in every ' +
    'project they belong to, or workspace ownership; you cannot remove yourself. An invitation can bring them back.',
  toolset: 'admin',
  scope: 'workspace',
  role: 'viewer',
  input: Type.Object({
    email: MemberEmail,
    from_project: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A project (id or slug): remove them from this project only. Without it they leave the workspace.' })),
  }, { additionalProperties: false }),
  output: Type.Object({
    email: Type.String(),
    removed_from: StringEnum(['project', 'workspace'] as const),
    project: Type.Union([Type.String(), Type.Null()], { description: 'The project\'s slug (removal from a project), or null.' }),
    sessions_ended: Type.Integer({ description: 'Console sessions ended (removal from the workspace).' }),
    keys_revoked: Type.Integer({ description: 'Keys and OAuth tokens revoked (removal from the workspace).' }),
    oauth_grants_revoked: Type.Integer({ description: 'Connected apps disconnected (removal from the workspace).' }),
  }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Remove a member from one project', args: { email: 'ana@example.com', from_project: 'acme-web' } },
      { title: 'Remove a member from the workspace', args: { email: 'ben@example.com' } },
    ],
    invalid: [
      { title: 'No email', args: { from_project: 'acme-web' }, field: 'email' },
      { title: 'Not an email address', args: { email: 'ben' }, field: 'email' },
      { title: 'An empty project', args: { email: 'ana@example.com', from_project: '' }, field: 'from_project' },
      { title: 'A project as a list', args: { email: 'ana@example.com', from_project: ['acme-web'] }, field: 'from_project' },
    ],
  },
  async handler(args, ctx) {
    refuseReadOnly(ctx)
    const email = normalEmail(args.email)
    const workspaceId = ctx.principal.workspaceId
    if (args.from_project !== undefined) {
      const project = await ownedProject(ctx, args.from_project)
      const member = await ctx.repos.members.find(workspaceId, email)
      if (!member) throw appError('NotFound', `No member of this workspace has the email ${email}.`)
      const result = await ctx.repos.members.removeFromProject({ userId: member.id, projectId: project.id, actorUserId: ctx.principal.userId, now: ctx.now() })
      if (!result.ok && result.reason === 'not_member') throw appError('NotFound', `${email} is not a member of project '${project.slug}'.`)
      if (!result.ok) throw appError('Conflict', `${email} is the last owner of project '${project.slug}': make someone else owner first.`)
      return { email, removed_from: 'project' as const, project: project.slug, sessions_ended: 0, keys_revoked: 0, oauth_grants_revoked: 0 }
    }
    const member = await ctx.repos.members.find(workspaceId, email)
    if (!member) throw appError('NotFound', `No member of this workspace has the email ${email}.`)
    if (member.id === ctx.principal.userId) throw appError('Conflict', 'You cannot remove yourself from the workspace: another owner can.')
    const workspaceOwner = await isWorkspaceOwner(ctx)
    if (member.workspaceRole === 'owner' && !workspaceOwner) throw appError('Forbidden', `${email} owns the workspace: only another workspace owner can remove them.`)
    if (!workspaceOwner && !(await ownsAll(ctx, member.projects.map((p) => p.id)))) {
      throw appError('Forbidden', `Removing ${email} from the workspace needs the owner role in every project they belong to (${member.projects.map((p) => p.slug).join(', ')}), or workspace ownership.`)
    }
    const result = await ctx.repos.members.removeFromWorkspace({ workspaceId, userId: member.id, now: ctx.now(), actorUserId: ctx.principal.userId })
    if (!result.ok && result.reason === 'not_member') throw appError('NotFound', `No member of this workspace has the email ${email}.`)
    if (!result.ok) throw appError('Conflict', `${email} is the last owner of ${result.projects}: make someone else owner there first.`)
    return { email, removed_from: 'workspace' as const, project: null, sessions_ended: result.sessionsEnded, keys_revoked: result.keysRevoked, oauth_grants_revoked: result.grantsRevoked }
  },
})
