// A password-reset link for a member: the one policy for the console (Members → Reset link) and
// the CLI (`admin reset-password`). An operation, not a tool: a key never mints credentials.
//
// Who may: a workspace owner, for anyone in the workspace; a project owner, for a member whose
// every project they own and who is no workspace owner — the link is the member's whole account,
// so nobody gets one that would reach further than they do. Nobody for themselves in the
// console (they change their password on Profile); the operator, for anyone (the CLI acts for
// the user whose email it is given: the owner who lost the first start's password).
//
// With mail on, a link made in the console is mailed to the member and not shown to whoever
// made it; without mail, or from the CLI, it is returned to be handed over.
import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { resetLink, resetMail } from '../core/password-resets.ts'
import { Timestamp } from '../schemas/atoms.ts'
import { isWorkspaceOwner, normalEmail, ownsAll } from './member-access.ts'

export default defineOperation({
  name: 'create_password_reset',
  title: 'Create a password-reset link',
  description:
    'A single-use link, valid for one hour, with which the member whose `email` is given sets a new password ' +
    '(which signs them out everywhere). With mail configured, a link made in the console is mailed to the member ' +
    'and `link` is null; otherwise `link` is returned, to be handed over. Only the hash of its token is stored.',
  toolset: 'admin',
  scope: 'workspace',
  role: 'viewer',
  tool: false,
  input: Type.Object({
    email: Type.String({ minLength: 3, maxLength: 320, pattern: '^[^@\\s]+@[^@\\s]+$', description: 'The email of a member of this workspace.' }),
  }, { additionalProperties: false }),
  output: Type.Object({
    email: Type.String(),
    link: Type.Union([Type.String(), Type.Null()], { description: 'The link itself, shown this once; null when it was mailed to the member.' }),
    expires_at: Timestamp(),
    mailed: Type.Boolean(),
    mail_error: Type.Union([Type.String(), Type.Null()], { description: 'Why the mail could not be sent (then `link` is returned instead).' }),
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  examples: {
    valid: [{ title: 'A reset link for a member who forgot their password', args: { email: 'ana@member.example' } }],
    invalid: [
      { title: 'Not an email address', args: { email: 'ana' }, field: 'email' },
      { title: 'No email', args: {}, field: 'email' },
    ],
  },
  async handler(args, ctx) {
    const { principal } = ctx
    if (principal.kind !== 'session' && principal.kind !== 'operator') {
      throw appError('Forbidden', 'Reset links are made in the console or with the CLI, not with a key.')
    }
    const member = await ctx.repos.members.find(principal.workspaceId, normalEmail(args.email))
    if (!member) throw appError('NotFound', `No member of this workspace has the email ${args.email.toLowerCase()}.`)
    if (member.id === principal.userId) {
      if (principal.kind === 'session') throw appError('Forbidden', 'That is you: change your own password on Profile → Change password.')
    } else if (!(await isWorkspaceOwner(ctx))) {
      if (member.workspaceRole === 'owner') throw appError('Forbidden', `${member.email} is a workspace owner: only another workspace owner can make a reset link for them.`)
      // The rule remove_member applies to a workspace removal, plus: a member in no project is a workspace owner's to reach.
      if (member.projects.length === 0 || !(await ownsAll(ctx, member.projects.map((p) => p.id)))) {
        throw appError('Forbidden', `A reset link opens ${member.email}'s whole account: you can make one only if you own every project they are in. Ask a workspace owner.`)
      }
    }
    const { token, expiresAt } = await ctx.repos.passwords.issueReset({ userId: member.id, createdBy: principal.userId === member.id ? null : principal.userId, now: ctx.now() })
    const link = resetLink(ctx.publicUrl, token)
    let mailError: string | null = null
    if (ctx.mail.enabled && principal.kind === 'session') {
      try {
        await ctx.mail.send(resetMail({ to: member.email, link, expiresAt, publicUrl: ctx.publicUrl, issuedBy: principal.email }))
        return { email: member.email, link: null, expires_at: expiresAt.toISOString(), mailed: true, mail_error: null }
      } catch (err) {
        mailError = (err as Error).message
        ctx.log.warn({ to: member.email }, 'a reset link could not be mailed: it is shown to whoever made it')
      }
    }
    return { email: member.email, link, expires_at: expiresAt.toISOString(), mailed: false, mail_error: mailError }
  },
})
