// Inviting someone to the workspace by email, with a role per project: a single-use link, valid
// for seven days, returned once (and mailed when mail is configured).
import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError, invalidArguments } from '../core/errors.ts'
import { MailError } from '../core/mail.ts'
import { INVITATION_TTL_MS, invitationLink, invitationMail } from '../core/invitations.ts'
import { generateSecret, hashKey, linkTokenPrefixes } from '../db/keys.ts'
import { Timestamp } from '../schemas/atoms.ts'
import { MemberEmail, ProjectRole, ProjectRoleArg } from '../schemas/members.ts'
import { normalEmail, ownedProject, refuseReadOnly, toProjectRole } from './member-access.ts'

export default defineOperation({
  name: 'invite_member',
  title: 'Invite a member',
  description:
    'Team members: invite a person by `email` to this workspace with a role (viewer, reviewer or owner) in each of ' +
    '`projects`. You must own every project named. Returns the invitation with its `link`, shown this once: a ' +
    'single-use link, valid for 7 days, where the invitee chooses a password. When mail is configured it is also ' +
    'mailed (`mailed`). Inviting the same email again replaces the earlier invitation (its link stops working).',
  toolset: 'admin',
  scope: 'workspace',
  role: 'viewer',
  input: Type.Object({
    email: MemberEmail,
    projects: Type.Array(ProjectRoleArg, { minItems: 1, maxItems: 20, description: 'Each project (id or slug) and the role the invitee gets there; each project once.' }),
  }, { additionalProperties: false }),
  output: Type.Object({
    id: Type.String({ description: 'The invitation id (inv_…).' }),
    email: Type.String(),
    projects: Type.Array(ProjectRole),
    created_at: Timestamp(),
    expires_at: Timestamp(),
    link: Type.String({ description: 'The invitation link: shown this once, only its hash is stored.' }),
    mailed: Type.Boolean({ description: 'Whether the link was sent to the email (false: no mail configured, or sending failed: pass the link on yourself).' }),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  examples: {
    valid: [
      { title: 'A reviewer of one project', args: { email: 'new@example.com', projects: [{ project: 'acme-web', role: 'reviewer' }] } },
      { title: 'A co-owner', args: { email: 'lee@example.com', projects: [{ project: 'acme-web', role: 'owner' }] } },
    ],
    invalid: [
      { title: 'Not an email address', args: { email: 'new-member', projects: [{ project: 'acme-web', role: 'viewer' }] }, field: 'email' },
      { title: 'No project', args: { email: 'new@example.com', projects: [] }, field: 'projects' },
      { title: 'A role that does not exist', args: { email: 'new@example.com', projects: [{ project: 'acme-web', role: 'admin' }] }, field: 'projects[0].role' },
      { title: 'A project without a role', args: { email: 'new@example.com', projects: [{ project: 'acme-web' }] }, field: 'projects[0].role' },
    ],
  },
  async handler(args, ctx) {
    refuseReadOnly(ctx)
    const email = normalEmail(args.email)
    const workspaceId = ctx.principal.workspaceId
    const named = new Map<string, number>()
    const projects = []
    for (const [i, wanted] of args.projects.entries()) {
      const project = await ownedProject(ctx, wanted.project)
      if (named.has(project.id)) {
        throw invalidArguments([{ path: `projects[${i}].project`, message: `names project '${project.slug}' again (it is projects[${named.get(project.id)}])` }])
      }
      named.set(project.id, i)
      projects.push({ id: project.id, slug: project.slug, name: project.name, role: wanted.role })
    }
    if (await ctx.repos.members.find(workspaceId, email)) {
      throw appError('Conflict', `${email} is already a member of this workspace: use update_member to change their roles.`)
    }
    if (await ctx.repos.members.elsewhere(workspaceId, email)) {
      throw appError('Conflict', `${email} has an account in another workspace, and an email names one account in this deployment: invite another address.`)
    }
    const token = generateSecret(linkTokenPrefixes.invitation)
    const now = ctx.now()
    const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS)
    const made = await ctx.repos.members.invite({
      workspaceId,
      email,
      invitedBy: ctx.principal.userId,
      projects: projects.map((p) => ({ projectId: p.id, role: p.role })),
      tokenHash: hashKey(token),
      now,
      expiresAt,
    })
    if (!made.ok) throw appError('Conflict', `Another invitation to ${email} was being made at the same moment: list the invitations and try again if needed.`)
    const link = invitationLink(ctx.publicUrl, token)
    let mailed = false
    if (ctx.mail.enabled) {
      const workspace = (await ctx.repos.workspaces.name(workspaceId)) ?? 'growthdesk'
      try {
        await ctx.mail.send(invitationMail({ to: email, inviter: ctx.principal.email, workspace, projects, link, expiresAt }))
        mailed = true
      } catch (err) {
        if (!(err instanceof MailError)) throw err
        // The mailer logged why; the link itself is never logged.
        ctx.log.warn({ invitation: made.invitation.id }, 'the invitation could not be mailed: its link is returned to the inviter only')
      }
    }
    return {
      id: made.invitation.id,
      email,
      projects: projects.map(toProjectRole),
      created_at: now.toISOString(),
      expires_at: expiresAt.toISOString(),
      link,
      mailed,
    }
  },
})
