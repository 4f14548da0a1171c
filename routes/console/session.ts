// Console sessions: the @fastify/session store in the database, its purge of expired rows,
// and the signed-in user. A module of its own so that the console's route modules and its
// plugin (index.ts) import it without importing each other.
import { createHash } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest, Session } from 'fastify'
import type { SessionStore } from '@fastify/session'
import { sealContexts } from '../../db/secret-box.ts'

type User = NonNullable<Awaited<ReturnType<FastifyInstance['repos']['users']['find']>>>

declare module 'fastify' {
  interface FastifyRequest {
    consoleUser: User
  }
  interface Session {
    userId?: string
    /** Where and when this session was signed in to (the Profile's list of sessions shows them). */
    signedIn?: { at: number; ip: string; userAgent: string }
    flash?: { kind: 'ok' | 'error'; text: string }
    /**
     * A key just created, held until the page that shows it once is opened (Post/Redirect/Get),
     * sealed (sealForSession): the stored session holds no key that works.
     */
    newKey?: { page: 'keys' | 'mcp'; sealedKey: string; name: string; at: number }
    /** A webhook signing secret just made (create or rotate), sealed, held until the webhooks page shows it once. */
    newWebhookSecret?: { project: string; id: string; sealedSecret: string; at: number }
    /** A password-reset link just made for a member (Members → Reset link), sealed, until the page that shows it once; no link when it was mailed. */
    newResetLink?: { email: string; sealedLink: string | null; mailError: string | null; expiresAt: string; at: number }
    /** An invitation just made, its link sealed, held until the page that shows the link once. */
    newInvitation?: { sealedLink: string; email: string; projects: string[]; expiresAt: string; mailed: boolean; at: number }
  }
}

export const SESSION_HOURS = 12

/** How long a new key, webhook secret or invitation link waits in the session for the page that shows it (the redirect is followed at once). */
export const NEW_SECRET_SHOWN_FOR_MS = 60_000

/** The session fields that hold a secret until the page that shows it once. */
export type SecretSlot = 'newKey' | 'newWebhookSecret' | 'newResetLink' | 'newInvitation'

/**
 * What waits in a show-once slot, taken by the page that shows it: the slot is emptied (only
 * when `belongs` says the value is this page's, where several pages share a slot), and the value
 * is returned while it is fresh (NEW_SECRET_SHOWN_FOR_MS), else undefined: shown once, or never.
 */
export function takeShownOnce<S extends SecretSlot>(
  request: FastifyRequest,
  slot: S,
  belongs: (value: NonNullable<Session[S]>) => boolean = () => true
): NonNullable<Session[S]> | undefined {
  const value = request.session.get(slot) as Session[S]
  if (!value || !belongs(value)) return undefined
  request.session.set(slot, undefined)
  return Date.now() - value.at <= NEW_SECRET_SHOWN_FOR_MS ? value : undefined
}

/**
 * A secret waiting in the session for the page that shows it once (`slot`: the session field),
 * sealed under the server key and bound to this session: sessions are stored in the database,
 * and a dump of them must hold nothing that works, even when that page is never opened.
 */
export function sealForSession(app: FastifyInstance, request: FastifyRequest, slot: SecretSlot, secret: string): string {
  return app.secrets.box.seal(secret, sealContexts.session(request.session.sessionId, slot))
}

/** The secret sealForSession sealed, or undefined when it does not open (another session, a server key since replaced). */
export function openFromSession(app: FastifyInstance, request: FastifyRequest, slot: SecretSlot, sealed: unknown): string | undefined {
  if (typeof sealed !== 'string') return undefined
  try {
    return app.secrets.box.open(sealed, sealContexts.session(request.session.sessionId, slot))
  } catch {
    return undefined
  }
}

/** How often expired session rows are deleted (they are never read: `get` ignores them). */
export const PURGE_EVERY_MS = 10 * 60 * 1000

/** A session is stored under the SHA-256 of its id: a database dump holds no cookie that works. */
export const stored = (sid: string) => createHash('sha256').update(sid).digest('hex')

/**
 * A field of the data the store reads, which @fastify/session copies into the session it makes
 * from it: that session is saved by updating its row, never by making one again (sessionStore).
 */
const READ_FROM_STORE = '_stored'

/**
 * The session store, in the database. A session read from it is saved back by an UPDATE, so
 * that one ended while a request of it was in flight (signed out from another browser, ended by
 * a password change) is not brought back when that request ends; a new one (a visitor's first
 * flash, a sign-in's regenerated session) is inserted.
 */
export function sessionStore(app: FastifyInstance): SessionStore {
  return {
    get: (sid, cb) => {
      // Sessions live in real time (the cookie library sets expiry by the wall clock), not app.now().
      app.repos.sessions.get(stored(sid), new Date()).then((data) => cb(null, (data ? { ...data, [READ_FROM_STORE]: true } : data) as never), (err) => cb(err))
    },
    set: (sid, data, cb) => {
      const expires = data.cookie.expires ? new Date(data.cookie.expires) : new Date(Date.now() + SESSION_HOURS * 3600 * 1000)
      const userId = typeof (data as { userId?: unknown }).userId === 'string' ? (data as { userId: string }).userId : null
      const { [READ_FROM_STORE]: read, ...plain } = JSON.parse(JSON.stringify(data)) as Record<string, unknown>
      const save = read === true ? app.repos.sessions.update(stored(sid), plain, expires, userId) : app.repos.sessions.set(stored(sid), plain, expires, userId)
      save.then(() => cb(), (err) => cb(err))
    },
    destroy: (sid, cb) => {
      app.repos.sessions.destroy(stored(sid)).then(() => cb(), (err) => cb(err))
    },
  }
}

/** Deletes the sessions expired before `now` (real time, like the store). */
export function purgeExpiredSessions(app: FastifyInstance, now: Date = new Date()): Promise<number> {
  return app.repos.sessions.purgeExpired(now)
}

/** Purges expired sessions once when the app is ready, then every PURGE_EVERY_MS until it closes. */
export function scheduleSessionPurge(app: FastifyInstance, everyMs = PURGE_EVERY_MS): void {
  let timer: NodeJS.Timeout | undefined
  const purge = () =>
    purgeExpiredSessions(app).catch((err: unknown) => app.log.warn({ err }, 'purging expired console sessions failed'))
  app.addHook('onReady', async () => {
    await purge()
    timer = setInterval(purge, everyMs).unref()
  })
  app.addHook('onClose', async () => clearInterval(timer))
}

/**
 * Signs `user` in to this browser: a new session id (no fixation), who it is, and where from.
 * The one way a console session starts: the sign-in form, an accepted invitation, a reset password.
 */
export async function signIn(request: FastifyRequest, user: { id: string }): Promise<void> {
  await request.session.regenerate()
  request.session.set('userId', user.id)
  request.session.set('signedIn', { at: Date.now(), ip: request.ip, userAgent: String(request.headers['user-agent'] ?? '').slice(0, 300) })
}

/** The stored id of this request's session (what the sessions table and its list of a user's sessions use). */
export function storedSessionId(request: FastifyRequest): string {
  return stored(request.session.sessionId)
}

/** preHandler: the signed-in user, or a redirect to the sign-in page that comes back here. */
export async function requireUser(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
  const userId = request.session.get('userId')
  const user = userId ? await this.repos.users.find(userId) : undefined
  if (!user) return reply.redirect(`/console/login?next=${encodeURIComponent(request.url)}`)
  request.consoleUser = user
}
