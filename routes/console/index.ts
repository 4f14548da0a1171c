// The web console and the browser half of OAuth: server-rendered pages (Eta, escaping by
// default), sessions stored in the database, CSRF tokens on every form, rate-limited
// sign-in and security headers. Encapsulated: none of this touches the JSON APIs. The pages
// themselves are in one file per area (sign-in.ts, projects.ts, keys.ts, board.ts, …), all
// registered here as this one plugin; what they share is in actions.ts and session.ts.
import path from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import cookie from '@fastify/cookie'
import session from '@fastify/session'
import csrf from '@fastify/csrf-protection'
import formbody from '@fastify/formbody'
import helmet from '@fastify/helmet'
import view from '@fastify/view'
import { Eta } from 'eta'
import { breakable, initials, timeTag } from './format.ts'
import { appError } from '../../core/errors.ts'
import authorizeRoutes from './authorize.ts'
import consoleAssets from './assets.ts'
import { SESSION_HOURS, requireUser, scheduleSessionPurge, sessionStore } from './session.ts'
import { signInPages, signOutRoute } from './sign-in.ts'
import { projectPages } from './projects.ts'
import { profilePages } from './profile.ts'
import { apiKeyPages } from './keys.ts'
import { boardPages } from './board.ts'
import { metricsPages } from './metrics.ts'
import { retentionPages } from './retention.ts'
import { downloadRoutes } from './downloads.ts'
import { webhookPages } from './webhooks.ts'
import { alertPages } from './alerts.ts'
import { workspacePages } from './workspace.ts'
import { passwordPages, passwordResetPages } from './passwords.ts'
import { invitationPages, memberPages } from './members.ts'
import { commentPages } from './comments.ts'
import { savedViewPages } from './saved-views.ts'
import { triagePages } from './triage.ts'
import { digestPages } from './digest.ts'

declare module 'fastify' {
  interface FastifyReply {
    /** Renders a console page with the signed-in user, a CSRF token and any flash message. */
    page(template: string, data?: Record<string, unknown>): Promise<FastifyReply>
  }
}

export interface ConsoleOptions {
  publicUrl: string
  /** OAUTH_CLIENT_METADATA_PRIVATE_NETWORK, for the authorization endpoint's metadata-document fetch. */
  clientMetadataPrivateNetwork?: boolean
  /** The deadline of that fetch (METADATA_TIMEOUT_MS unless a test shortens it). */
  clientMetadataTimeoutMs?: number
}

export default async function consolePlugin(app: FastifyInstance, options: ConsoleOptions) {
  const secure = options.publicUrl.startsWith('https://')
  const secret = await app.repos.sessions.secret('cookie_secret')

  await app.register(cookie, { secret })
  await app.register(session, {
    secret,
    cookieName: secure ? '__Host-gd_session' : 'gd_session',
    saveUninitialized: false,
    rolling: true,
    cookie: { httpOnly: true, secure, sameSite: 'lax', path: '/', maxAge: SESSION_HOURS * 3600 * 1000 },
    store: sessionStore(app),
  })
  scheduleSessionPurge(app)
  // The CSRF secret lives in a signed cookie of its own, not in the session: an anonymous visitor
  // (the sign-in form) gets a token without the server storing anything for them.
  await app.register(csrf, {
    sessionPlugin: '@fastify/cookie',
    cookieKey: secure ? '__Host-gd_csrf' : 'gd_csrf',
    cookieOpts: { signed: true, httpOnly: true, secure, sameSite: 'lax', path: '/' },
  })
  await app.register(formbody)
  await app.register(helmet, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        // The consent form redirects to the client's own callback, which form-action would block.
        formAction: null,
        upgradeInsecureRequests: secure ? [] : null,
      },
    },
    strictTransportSecurity: secure,
  })
  await app.register(view, {
    engine: { eta: new Eta({ autoEscape: true, cache: true }) },
    root: path.join(import.meta.dirname, '..', '..', 'views'),
    production: true,
  })

  app.decorateRequest('consoleUser', null as unknown as FastifyRequest['consoleUser'])
  app.decorateReply('page', async function (this: FastifyReply, template: string, data: Record<string, unknown> = {}) {
    const request = this.request
    const flash = request.session.get('flash')
    if (flash) request.session.set('flash', undefined)
    const user = request.consoleUser ?? null
    this.header('cache-control', 'no-store')
    // `time(iso)` in a view: a <time> with the relative time and the exact one on hover (format.ts).
    const time = (iso: string | Date | null | undefined, empty?: string) => timeTag(iso, app.now(), empty)
    // `breakable(name)`: escaped, and may wrap after its underscores. `initials(email)`: a member's, for their avatar.
    return this.type('text/html; charset=utf-8').view(template, { title: 'growthdesk', user, flash, csrf: await this.generateCsrf(), time, breakable, initials, ...data })
  })

  // Console failures are pages, not JSON.
  app.setErrorHandler(async (error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const status = error.code === 'FST_CSRF_INVALID_TOKEN' || error.code === 'FST_CSRF_MISSING_SECRET' ? 403 : (error.statusCode ?? 500)
    if (status >= 500) request.log.error({ err: error }, 'console request failed')
    const message =
      status === 429
        ? 'Too many attempts. Wait a few minutes and try again.'
        : status === 403 && error.code?.startsWith('FST_CSRF')
          ? 'The form expired or did not come from this site. Go back, reload the page and try again.'
          : status >= 500
            ? 'Something went wrong on our side; it has been logged. Try again in a moment.'
            : error.message
    const heading = status === 429 ? 'Slow down' : status === 404 ? 'Page not found' : status >= 500 ? 'Something went wrong' : 'Something is not right'
    reply.code(status)
    return reply.page('error', { title: status >= 500 ? 'Error' : heading, heading, message, status })
  })

  // A path value no record can have (a NUL, broken Unicode) names nothing: a 404 page before any
  // handler passes it to the database, which refuses a NUL in text with an error (a 500).
  app.addHook('preValidation', async (request) => {
    for (const value of Object.values((request.params ?? {}) as Record<string, unknown>)) {
      if (typeof value === 'string' && (value.includes('\u0000') || !value.isWellFormed())) throw appError('NotFound', 'There is nothing at this address.')
    }
  })

  await app.register(consoleAssets)
  // The server's root is where a person lands (the address in the browser's bar): the console.
  app.get('/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console', 302))
  signInPages(app)
  passwordResetPages(app, { publicUrl: options.publicUrl })
  invitationPages(app)
  // Every other page needs a signed-in user: one hook for the whole scope, before any route's own.
  await app.register(async (signedIn) => {
    signedIn.addHook('preHandler', requireUser)
    for (const area of [signOutRoute, projectPages, profilePages, apiKeyPages, boardPages, metricsPages, retentionPages, downloadRoutes, webhookPages, alertPages, workspacePages, memberPages, commentPages, savedViewPages, triagePages, digestPages]) area(signedIn)
    passwordPages(signedIn)
  })
  // Unknown console addresses get a page in the console's look (the root handler answers JSON
  // for every other path). A 404 handler can only be set per prefix, hence the scope.
  await app.register(async (scope) => {
    scope.setNotFoundHandler(async (request, reply) => {
      const path = request.url.split('?')[0]!
      const allowed = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((method) => scope.findRoute({ method: method as 'GET', url: path }))
      // Signed in or not, the page shows the navigation a signed-in user expects.
      const userId = request.session.get('userId')
      const user = userId ? await app.repos.users.find(userId) : undefined
      if (user) request.consoleUser = user
      if (allowed.length > 0) {
        reply.header('allow', allowed.join(', ')).code(405)
        return reply.page('error', { title: 'Not allowed', heading: 'Not allowed', status: 405, message: `This address takes ${allowed.join(' or ')}, not ${request.method}.` })
      }
      reply.code(404)
      return reply.page('error', { title: 'Page not found', heading: 'Page not found', status: 404, message: 'There is nothing at this address. It may have moved, or the link may be mistyped.' })
    })
  }, { prefix: '/console' })
  await app.register(authorizeRoutes, { publicUrl: options.publicUrl, clientMetadataPrivateNetwork: options.clientMetadataPrivateNetwork, clientMetadataTimeoutMs: options.clientMetadataTimeoutMs })
}
