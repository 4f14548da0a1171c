// Passwords in the console: "Forgot password?" (a reset link by mail, or whom to ask without
// mail), the page a reset link opens, Profile → Change password, and the reset link an owner
// makes for a member (Members → Reset link), shown once. The links and the rules are
// db/repositories/passwords.ts's and the create_password_reset operation's.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import createPasswordReset from '../../tools/create-password-reset.ts'
import { hashPassword, passwordProblem, verifyPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from '../../core/passwords.ts'
import { resetLink, resetMail } from '../../core/password-resets.ts'
import { describe, flash, formPost, run, safeNext, type Form } from './actions.ts'
import { openFromSession, sealForSession, signIn, storedSessionId, takeShownOnce } from './session.ts'

/** At most this many forgot-password links an hour for one account; past it the form sends nothing more (and says the same). */
export const FORGOT_LINKS_PER_HOUR = 3

const passwordRules = { min: PASSWORD_MIN_LENGTH, max: PASSWORD_MAX_LENGTH }

/** The new password of a form (`password` and its `repeat`): the problem with each field, or none. */
function newPasswordErrors(body: Form, email: string): { password?: string; repeat?: string } {
  const password = body.password ?? ''
  const problem = passwordProblem(password, email)
  if (problem) return { password: problem }
  if ((body.repeat ?? '') !== password) return { repeat: 'The two passwords differ: type the same new password twice.' }
  return {}
}

/**
 * The pages a signed-out visitor reaches: "Forgot password?" and the page of a reset link.
 * Registered outside the signed-in scope, like the sign-in page.
 */
export function passwordResetPages(app: FastifyInstance, options: { publicUrl: string }) {
  const form = formPost(app)

  // ---- Forgot password?

  /** Forgot-password work started by requests that did not wait for it (below); closing the app waits for it. */
  const pending = new Set<Promise<void>>()
  app.addHook('onClose', async () => {
    await Promise.allSettled(pending)
  })

  /**
   * Makes a reset link for the account with this email, if there is one and it has not had
   * FORGOT_LINKS_PER_HOUR such links this hour, and mails it. Runs after the answer is sent: the
   * answer is the same, and as quick, whether or not the account exists or the mail goes.
   */
  async function sendForgotLink(email: string, log: FastifyRequest['log']) {
    const user = await app.repos.users.findByEmail(email)
    if (!user) return
    const now = app.now()
    if ((await app.repos.passwords.forgotLinksSince(user.id, new Date(now.getTime() - 3_600_000))) >= FORGOT_LINKS_PER_HOUR) {
      log.info({ userId: user.id }, 'forgot password: this account had its links for the hour; none sent')
      return
    }
    const { token, expiresAt } = await app.repos.passwords.issueReset({ userId: user.id, createdBy: null, now })
    // A failure is logged by the mailer (the server and the recipient, never the link).
    await app.mail.send(resetMail({ to: user.email, link: resetLink(options.publicUrl, token), expiresAt, publicUrl: options.publicUrl })).catch(() => {})
  }

  app.get('/console/forgot', async (request, reply) => {
    const query = request.query as Form
    return reply.page('forgot', { title: 'Forgot password', mailEnabled: app.mail.enabled, sent: false, email: (query.email ?? '').slice(0, 320) })
  })

  app.post('/console/forgot', {
    ...form,
    config: { rateLimit: { max: 5, timeWindow: '5 minutes', keyGenerator: (req: FastifyRequest) => req.ip } },
  }, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    const email = (body.email ?? '').trim().toLowerCase().slice(0, 320)
    // Without mail there is no form to post: back to the page that says whom to ask.
    if (!app.mail.enabled) return reply.redirect('/console/forgot', 303)
    if (!/^[^@\s]+@[^@\s]+$/.test(email)) {
      reply.code(400)
      return reply.page('forgot', { title: 'Forgot password', mailEnabled: true, sent: false, email, error: 'Type the email address you sign in with.' })
    }
    const work = sendForgotLink(email, request.log).catch((err: unknown) => request.log.error({ err }, 'forgot password: making or sending a reset link failed'))
    pending.add(work)
    void work.finally(() => pending.delete(work))
    return reply.page('forgot', { title: 'Forgot password', mailEnabled: true, sent: true, email })
  })

  // ---- The page a reset link opens

  /** The page of a link that does not work: 404 for one that never did, 410 for one used or expired; nothing is changed. */
  function linkGone(reply: FastifyReply, state: 'unknown' | 'used' | 'expired') {
    const text = {
      unknown: { status: 404, heading: 'This reset link does not work', message: 'The link is not one we made, or it was copied incompletely.' },
      used: { status: 410, heading: 'This reset link was used', message: 'A reset link works once, and this one has set a password already (or a newer password was set since).' },
      expired: { status: 410, heading: 'This reset link has expired', message: 'A reset link works for one hour after it is made.' },
    }[state]
    reply.code(text.status)
    return reply.page('reset', { title: text.heading, gone: true, heading: text.heading, message: text.message, mailEnabled: app.mail.enabled })
  }

  app.get<{ Params: { token: string } }>('/console/reset/:token', async (request, reply) => {
    const link = await app.repos.passwords.findReset(request.params.token, app.now())
    if (!link) return linkGone(reply, 'unknown')
    if (link.state !== 'valid') return linkGone(reply, link.state)
    return reply.page('reset', { title: 'Set a new password', gone: false, token: request.params.token, email: link.email, expiresAt: link.expiresAt.toISOString(), errors: {}, rules: passwordRules })
  })

  app.post<{ Params: { token: string } }>('/console/reset/:token', {
    ...form,
    config: { rateLimit: { max: 10, timeWindow: '5 minutes', keyGenerator: (req: FastifyRequest) => req.ip } },
  }, async (request, reply) => {
    const token = request.params.token
    const link = await app.repos.passwords.findReset(token, app.now())
    if (!link) return linkGone(reply, 'unknown')
    if (link.state !== 'valid') return linkGone(reply, link.state)
    const body = (request.body ?? {}) as Form
    const errors = newPasswordErrors(body, link.email)
    if (errors.password || errors.repeat) {
      reply.code(400)
      return reply.page('reset', { title: 'Set a new password', gone: false, token, email: link.email, expiresAt: link.expiresAt.toISOString(), errors, rules: passwordRules })
    }
    const hash = await hashPassword(body.password!, app.passwordHashCost)
    // Checked again inside the reset, atomically: of two resets at once, one sets the password.
    const done = await app.repos.passwords.resetPassword(token, hash, app.now())
    if (!done) return linkGone(reply, 'used')
    request.log.info({ userId: done.userId, endedSessions: done.endedSessions }, 'password set through a reset link')
    await signIn(request, { id: done.userId })
    flash(request, 'ok', `Your new password is set and you are signed in. ${otherSessionsText(done.endedSessions)}`)
    return reply.redirect('/console', 303)
  })
}

/** "2 other sessions were signed out." / "No other session was signed in." */
function otherSessionsText(count: number): string {
  return count === 0 ? 'No other session was signed in.' : `${count} other session${count === 1 ? ' was' : 's were'} signed out.`
}

/** The signed-in pages: Profile → Change password, and the reset link an owner makes for a member. */
export function passwordPages(app: FastifyInstance) {
  const form = formPost(app)

  app.get('/console/profile/password', async (_request, reply) =>
    reply.page('password', { title: 'Change password', errors: {}, rules: passwordRules }))

  app.post('/console/profile/password', {
    ...form,
    // Per user (a stolen session cannot try current passwords at will), else per address.
    config: { rateLimit: { max: 10, timeWindow: '5 minutes', keyGenerator: (req: FastifyRequest) => req.session.get('userId') ?? req.ip } },
  }, async (request, reply) => {
    const user = request.consoleUser
    const body = (request.body ?? {}) as Form
    const refuse = (status: number, errors: { current?: string; password?: string; repeat?: string }) => {
      reply.code(status)
      return reply.page('password', { title: 'Change password', errors, rules: passwordRules })
    }
    if (!(await verifyPassword(body.current ?? '', user.passwordHash))) return refuse(401, { current: 'That is not your current password.' })
    const errors = newPasswordErrors(body, user.email)
    if (errors.password || errors.repeat) return refuse(400, errors)
    if (body.password === body.current) return refuse(400, { password: 'The new password is the one you have: choose another.' })
    const hash = await hashPassword(body.password!, app.passwordHashCost)
    const done = await app.repos.passwords.changePassword(user.id, hash, app.now(), storedSessionId(request))
    if (!done) return reply.redirect('/console/login', 303)
    request.log.info({ userId: user.id, endedSessions: done.endedSessions }, 'password changed')
    flash(request, 'ok', `Your password is changed. ${otherSessionsText(done.endedSessions)}`)
    return reply.redirect('/console/profile', 303)
  })

  // ---- Members → Reset link: the link is shown once (Post/Redirect/Get), or mailed to the member.

  app.post('/console/members/reset-link', form, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    const back = safeNext(body.back, '/console/members')
    let result
    try {
      result = await run(request, createPasswordReset, { email: (body.email ?? '').trim() })
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode
      if (status === undefined || status >= 500) throw err
      flash(request, 'error', describe(err))
      return reply.redirect(back, 303)
    }
    request.session.set('newResetLink', {
      email: result.email,
      sealedLink: result.link === null ? null : sealForSession(app, request, 'newResetLink', result.link),
      mailError: result.mail_error,
      expiresAt: result.expires_at,
      at: Date.now(),
    })
    return reply.redirect(`/console/members/reset-link?back=${encodeURIComponent(back)}`, 303)
  })

  app.get('/console/members/reset-link', async (request, reply) => {
    const back = safeNext((request.query as Form).back, '/console/members')
    const fresh = takeShownOnce(request, 'newResetLink')
    const link = fresh?.sealedLink ? openFromSession(app, request, 'newResetLink', fresh.sealedLink) : undefined
    const shown = fresh && (fresh.sealedLink === null || link) ? { email: fresh.email, link: link ?? null, mailError: fresh.mailError, expiresAt: fresh.expiresAt } : null
    return reply.page('reset-link', { title: shown ? `Reset link for ${shown.email}` : 'Reset link already shown', shown, back })
  })
}
