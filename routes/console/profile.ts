// The signed-in user's own pages: Profile (who they are, their password, the sessions signed in
// to their account with a way to end each, and the way to MCP Access, whose pages are in
// keys.ts) and Connected apps (the MCP clients they authorized with OAuth, each of which they
// can disconnect). Changing the password is passwords.ts's.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { flash, formPost } from './actions.ts'
import { storedSessionId } from './session.ts'
import { browserLabel } from './user-agent.ts'

/**
 * How a session is named in a form: the start of its stored id (the SHA-256 of the cookie's id,
 * which no cookie can be made from), long enough to tell a user's sessions apart.
 */
const SESSION_REF_LENGTH = 16
const SESSION_REF = new RegExp(`^[0-9a-f]{${SESSION_REF_LENGTH}}$`)

export function profilePages(app: FastifyInstance) {
  /** The user's signed-in sessions, this one first, then the most recently seen. */
  async function sessionsOf(request: FastifyRequest) {
    const current = storedSessionId(request)
    // Sessions live in real time, like their store (session.ts), not app.now().
    const rows = await app.repos.sessions.listForUser(request.consoleUser.id, new Date())
    const sessions = rows.map((row) => {
      const signedIn = (row.data as { signedIn?: { ip?: unknown; userAgent?: unknown } }).signedIn
      return {
        ref: row.sid.slice(0, SESSION_REF_LENGTH),
        sid: row.sid,
        current: row.sid === current,
        createdAt: row.createdAt.toISOString(),
        lastSeenAt: row.lastSeenAt.toISOString(),
        // Sessions signed in before sessions kept where they came from say so.
        address: typeof signedIn?.ip === 'string' && signedIn.ip ? signedIn.ip : 'unknown',
        browser: signedIn ? browserLabel(typeof signedIn.userAgent === 'string' ? signedIn.userAgent : '') : 'unknown',
        userAgent: typeof signedIn?.userAgent === 'string' ? signedIn.userAgent : '',
      }
    })
    return [...sessions.filter((s) => s.current), ...sessions.filter((s) => !s.current)]
  }

  app.get('/console/profile', async (request, reply) => {
    const sessions = await sessionsOf(request)
    const user = request.consoleUser
    return reply.page('profile', {
      title: 'Profile',
      sessions: sessions.map(({ sid: _sid, ...s }) => s),
      others: sessions.filter((s) => !s.current).length,
      passwordChangedAt: user.passwordChangedAt?.toISOString() ?? null,
    })
  })

  // "Sign out" of one other session; this browser's own is the top bar's Sign out.
  app.post<{ Params: { ref: string } }>('/console/profile/sessions/:ref/sign-out', formPost(app), async (request, reply) => {
    const ref = request.params.ref
    const match = SESSION_REF.test(ref) ? (await sessionsOf(request)).filter((s) => s.ref === ref) : []
    if (match.length !== 1) {
      flash(request, 'error', 'That session is not signed in any more.')
      return reply.redirect('/console/profile', 303)
    }
    const session = match[0]!
    if (session.current) {
      await request.session.destroy()
      return reply.redirect('/console/login', 303)
    }
    const done = await app.repos.sessions.destroyOfUser(request.consoleUser.id, session.sid)
    flash(request, done ? 'ok' : 'error', done ? `Signed out: ${session.browser} (${session.address}).` : 'That session is not signed in any more.')
    return reply.redirect('/console/profile', 303)
  })

  app.post('/console/profile/sessions/sign-out-others', formPost(app), async (request, reply) => {
    const ended = await app.repos.sessions.destroyForUser(request.consoleUser.id, storedSessionId(request))
    flash(request, 'ok', ended === 0 ? 'No other session was signed in.' : `Signed out everywhere else: ${ended} other session${ended === 1 ? '' : 's'}.`)
    return reply.redirect('/console/profile', 303)
  })

  app.get('/console/connections', async (request, reply) => {
    const rows = await app.repos.oauth.connections(request.consoleUser.id)
    return reply.page('connections', { title: 'Connected apps', connections: rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })) })
  })

  app.post<{ Params: { id: string } }>('/console/connections/:id/revoke', formPost(app), async (request, reply) => {
    const done = await app.repos.oauth.revokeGrant(request.params.id, request.consoleUser.id, app.now())
    flash(request, done ? 'ok' : 'error', done ? 'Disconnected: its tokens no longer work.' : 'No such connection.')
    return reply.redirect('/console/connections', 303)
  })
}
