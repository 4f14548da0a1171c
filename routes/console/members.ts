// Members in the console: the members of the projects you see with their role in each (owners
// change roles, remove a member from a project or, after a page that asks first, from the
// workspace), the open invitations with Cancel, and the invite form, whose link is shown once
// (Post/Redirect/Get: sealed in the session, as new keys are). And the invitation link's own
// page, open to everyone: the invitee chooses a password there and lands signed in.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import listMembers from '../../tools/list-members.ts'
import listProjects from '../../tools/list-projects.ts'
import inviteMember from '../../tools/invite-member.ts'
import updateMember from '../../tools/update-member.ts'
import removeMember from '../../tools/remove-member.ts'
import cancelInvitation from '../../tools/cancel-invitation.ts'
import { appError } from '../../core/errors.ts'
import { INVITATION_DAYS } from '../../core/invitations.ts'
import { hashPassword, passwordProblem } from '../../core/passwords.ts'
import { hashKey, isLinkToken, linkTokenPrefixes } from '../../db/keys.ts'
import { roles, type Role } from '../../schemas/atoms.ts'
import { openFromSession, sealForSession, signIn, takeShownOnce } from './session.ts'
import { describe, flash, formPost, run, type Form } from './actions.ts'

const MEMBERS = '/console/members'

/** An operation's refusal (a 4xx) as a flash message and a redirect back; anything else is a failure. */
async function memberAction(request: FastifyRequest, reply: FastifyReply, action: () => Promise<string>, back = MEMBERS) {
  try {
    flash(request, 'ok', await action())
  } catch (err) {
    const status = (err as { statusCode?: number }).statusCode
    if (status === undefined || status >= 500) throw err
    flash(request, 'error', describe(err))
  }
  return reply.redirect(back, 303)
}

/** The member of the members page with this id (the page links members by id, the tools take emails). */
async function memberById(request: FastifyRequest, id: string) {
  const { members } = await run(request, listMembers, {})
  const member = members.find((m) => m.id === id)
  if (!member) throw appError('NotFound', 'No such member among the projects you can see.')
  return member
}

export function memberPages(app: FastifyInstance) {
  const form = formPost(app)

  app.get(MEMBERS, async (request, reply) => {
    const [{ members, invitations }, { items }] = await Promise.all([run(request, listMembers, {}), run(request, listProjects, {})])
    const owned = items.filter((p) => p.role === 'owner')
    const ownedIds = new Set(owned.map((p) => p.id))
    const isWorkspaceOwner = request.consoleUser.workspaceRole === 'owner'
    return reply.page('members', {
      title: 'Members',
      members: members.map((m) => ({
        ...m,
        // Owners of every project the member is in (or the workspace owner) may remove them from the workspace.
        removable: !m.you && (isWorkspaceOwner || (m.workspace_role !== 'owner' && m.projects.every((p) => ownedIds.has(p.id)))),
        projects: m.projects.map((p) => ({ ...p, manage: ownedIds.has(p.id) })),
      })),
      invitations,
      owned,
      roles,
      days: INVITATION_DAYS,
      mailEnabled: app.mail.enabled,
    })
  })

  app.post(`${MEMBERS}/invite`, form, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    const email = (body.email ?? '').trim()
    // One role choice per project the owner owns, named role_<project id>; "none" (the default) invites to nothing there.
    const projects: { project: string; role: Role }[] = []
    for (const [field, value] of Object.entries(body)) {
      if (!field.startsWith('role_') || value === undefined || value === '' || value === 'none') continue
      if (!(roles as readonly string[]).includes(value)) {
        flash(request, 'error', 'A role is viewer, reviewer, owner or no access.')
        return reply.redirect(MEMBERS, 303)
      }
      projects.push({ project: field.slice('role_'.length), role: value as Role })
    }
    if (projects.length === 0) {
      flash(request, 'error', 'Choose a role in at least one project for the invitation.')
      return reply.redirect(MEMBERS, 303)
    }
    let made
    try {
      made = await run(request, inviteMember, { email, projects })
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode
      if (status === undefined || status >= 500) throw err
      flash(request, 'error', describe(err))
      return reply.redirect(MEMBERS, 303)
    }
    // Post/Redirect/Get: the link waits in the session, sealed, for the page that shows it once.
    request.session.set('newInvitation', {
      sealedLink: sealForSession(app, request, 'newInvitation', made.link),
      email: made.email,
      projects: made.projects.map((p) => `${p.name}: ${p.role}`),
      expiresAt: made.expires_at,
      mailed: made.mailed,
      at: Date.now(),
    })
    return reply.redirect(`${MEMBERS}/invited`, 303)
  })

  app.get(`${MEMBERS}/invited`, async (request, reply) => {
    const fresh = takeShownOnce(request, 'newInvitation')
    const link = fresh && openFromSession(app, request, 'newInvitation', fresh.sealedLink)
    return reply.page('new-invitation', {
      title: link ? 'Invitation link' : 'Invitation already shown',
      invitation: link && fresh ? { ...fresh, link } : null,
      mailEnabled: app.mail.enabled,
      days: INVITATION_DAYS,
    })
  })

  app.post<{ Params: { id: string } }>(`${MEMBERS}/:id/role`, form, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    return memberAction(request, reply, async () => {
      const member = await memberById(request, request.params.id)
      const r = await run(request, updateMember, { email: member.email, role: body.role ?? '' }, body.project ?? '')
      return r.previous_role === r.role ? `${r.email} is ${r.role} of ${r.project} already.` : `${r.email} is now ${r.role} of ${r.project}.`
    })
  })

  app.post<{ Params: { id: string } }>(`${MEMBERS}/:id/remove-from-project`, form, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    return memberAction(request, reply, async () => {
      const member = await memberById(request, request.params.id)
      const r = await run(request, removeMember, { email: member.email, from_project: body.project ?? '' })
      return `${r.email} is no longer a member of ${r.project}.`
    })
  })

  // Removing from the workspace asks first: a page naming the member and what ends with it,
  // whose form is the only thing that removes.
  app.get<{ Params: { id: string } }>(`${MEMBERS}/:id/remove`, async (request, reply) => {
    const member = await memberById(request, request.params.id)
    return reply.page('remove-member', { title: 'Remove member', member })
  })

  app.post<{ Params: { id: string } }>(`${MEMBERS}/:id/remove`, form, async (request, reply) => {
    return memberAction(request, reply, async () => {
      const member = await memberById(request, request.params.id)
      const r = await run(request, removeMember, { email: member.email })
      return `${r.email} is removed from the workspace: ${r.sessions_ended} session${r.sessions_ended === 1 ? '' : 's'} ended, ${r.keys_revoked} key${r.keys_revoked === 1 ? '' : 's'} revoked, ${r.oauth_grants_revoked} connected app${r.oauth_grants_revoked === 1 ? '' : 's'} disconnected.`
    })
  })

  app.post<{ Params: { id: string } }>('/console/invitations/:id/cancel', form, async (request, reply) => {
    return memberAction(request, reply, async () => {
      const r = await run(request, cancelInvitation, { id: request.params.id })
      return `The invitation to ${r.email} is cancelled: its link no longer works.`
    })
  })
}

/** What an invitation link that does not work says, by why. */
const gone = {
  unknown: { status: 404, heading: 'This invitation link does not work', message: 'The link is not a valid invitation: it may be mistyped or cut short. Ask the person who invited you for a new invitation.' },
  expired: { status: 410, heading: 'This invitation has expired', message: `An invitation works for ${INVITATION_DAYS} days. Ask the person who invited you for a new one.` },
  accepted: { status: 410, heading: 'This invitation was already used', message: 'An invitation link works once, and this one has been accepted. Sign in with the email and password chosen then, or ask for a new invitation.' },
  cancelled: { status: 410, heading: 'This invitation was cancelled', message: 'It was cancelled or replaced by a newer invitation. Use the newest link you received, or ask for a new invitation.' },
} as const

/** The invitation link's page and form: open to everyone (the token is the credential), outside the signed-in scope. */
export function invitationPages(app: FastifyInstance) {
  async function invitationOf(token: string) {
    if (!isLinkToken(token, linkTokenPrefixes.invitation)) return undefined
    return app.repos.members.findByToken(hashKey(token), app.now())
  }

  function goneReply(reply: FastifyReply, why: keyof typeof gone) {
    const page = gone[why]
    reply.code(page.status)
    return reply.page('error', { title: page.heading, ...page })
  }

  async function invitationPage(request: FastifyRequest, reply: FastifyReply, invitation: NonNullable<Awaited<ReturnType<typeof invitationOf>>>, token: string, error?: { field: 'password' | 'repeat'; text: string }) {
    const userId = request.session.get('userId')
    const signedInAs = userId ? (await app.repos.users.find(userId))?.email : undefined
    return reply.page('invitation', {
      title: `Join ${invitation.workspaceName}`,
      invitation,
      token,
      signedInAs: signedInAs && signedInAs !== invitation.email ? signedInAs : undefined,
      error,
      days: INVITATION_DAYS,
    })
  }

  app.get<{ Params: { token: string } }>('/console/invite/:token', async (request, reply) => {
    const invitation = await invitationOf(request.params.token)
    if (!invitation) return goneReply(reply, 'unknown')
    if (invitation.state !== 'pending') return goneReply(reply, invitation.state)
    return invitationPage(request, reply, invitation, request.params.token)
  })

  app.post<{ Params: { token: string } }>('/console/invite/:token', {
    ...formPost(app),
    config: { rateLimit: { max: 10, timeWindow: '5 minutes', keyGenerator: (req: FastifyRequest) => req.ip } },
  }, async (request, reply) => {
    const { token } = request.params
    const body = (request.body ?? {}) as Form
    const invitation = await invitationOf(token)
    if (!invitation) return goneReply(reply, 'unknown')
    if (invitation.state !== 'pending') return goneReply(reply, invitation.state)
    const password = body.password ?? ''
    const problem = passwordProblem(password, invitation.email)
    if (problem) {
      reply.code(400)
      return invitationPage(request, reply, invitation, token, { field: 'password', text: problem })
    }
    if ((body.repeat ?? '') !== password) {
      reply.code(400)
      return invitationPage(request, reply, invitation, token, { field: 'repeat', text: 'The two passwords differ: type the same password twice.' })
    }
    const accepted = await app.repos.members.accept({ tokenHash: hashKey(token), passwordHash: await hashPassword(password, app.passwordHashCost), now: app.now() })
    if (!accepted.ok) {
      if (accepted.reason === 'gone') return goneReply(reply, 'accepted')
      reply.code(409)
      const message = accepted.reason === 'already_member'
        ? `${invitation.email} is already a member of ${invitation.workspaceName}: sign in with your password instead.`
        : `${invitation.email} has an account in another growthdesk workspace, and an email names one account: ask for an invitation to another address.`
      return reply.page('error', { title: 'Cannot accept', heading: 'This invitation cannot be accepted', message, status: 409 })
    }
    // Whoever was signed in in this browser is replaced by the new member.
    await signIn(request, accepted.user)
    // The board of the first project they may review, else the overview of their first project.
    const reviewable = invitation.projects.find((p) => p.role !== 'viewer')
    const first = reviewable ?? invitation.projects[0]
    return reply.redirect(first ? `/console/projects/${encodeURIComponent(first.slug)}${reviewable ? '/opportunities' : ''}` : '/console', 303)
  })
}
