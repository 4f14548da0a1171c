// The members the caller works with, and the invitations still open for projects they own.
import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { Invitation, Member } from '../schemas/members.ts'
import { isWorkspaceOwner, toProjectRole } from './member-access.ts'

export default defineOperation({
  name: 'list_members',
  title: 'List members and invitations',
  description:
    'Team members: the members of this workspace who share a project with you, each with their role (viewer, ' +
    'reviewer, owner) in every project you can see (a workspace owner also sees the members in none of them), and ' +
    'the pending invitations to the projects you own (with their expiry; never their link). Any member may list; ' +
    'managing needs the owner role.',
  toolset: 'admin',
  scope: 'workspace',
  role: 'viewer',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({
    members: Type.Array(Member),
    invitations: Type.Array(Invitation, { description: 'Open invitations to projects you own (empty when you own none).' }),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Everyone you work with, and open invitations', args: {} },
    ],
    invalid: [
      { title: 'A project: it lists every project you can see', args: { project: 'acme-web' }, field: 'project' },
      { title: 'A filter it does not take', args: { role: 'owner' }, field: 'role' },
    ],
  },
  async handler(_args, ctx) {
    const visible = await ctx.repos.projects.listForUser(ctx.principal)
    const ids = new Set(visible.map((p) => p.project.id))
    const owned = new Set(visible.filter((p) => p.role === 'owner').map((p) => p.project.id))
    const [sharing, others, pending] = await Promise.all([
      ctx.repos.members.list(ctx.principal.workspaceId, [...ids]),
      // A workspace owner may remove anyone: the members in none of their projects are listed too.
      isWorkspaceOwner(ctx).then((yes) => (yes ? ctx.repos.members.outside(ctx.principal.workspaceId, [...ids]) : [])),
      owned.size > 0 ? ctx.repos.members.pending(ctx.principal.workspaceId) : Promise.resolve([]),
    ])
    const members = [...sharing, ...others.map((m) => ({ ...m, projects: [] }))]
    const now = ctx.now()
    return {
      members: members.map((m) => ({
        id: m.id,
        email: m.email,
        workspace_role: m.workspaceRole,
        you: m.id === ctx.principal.userId,
        joined_at: m.createdAt.toISOString(),
        projects: m.projects.map(toProjectRole),
      })),
      invitations: pending
        .filter((i) => i.projects.some((p) => owned.has(p.id)))
        .map((i) => ({
          id: i.id,
          email: i.email,
          invited_by: i.invitedBy,
          created_at: i.createdAt.toISOString(),
          expires_at: i.expiresAt.toISOString(),
          expired: i.expiresAt <= now,
          // Only the projects the caller can see.
          projects: i.projects.filter((p) => ids.has(p.id)).map(toProjectRole),
        })),
    }
  },
})
