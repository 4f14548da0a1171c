// How a console page acts, shared by every area of pages: operations run as the signed-in user
// (the same ones the APIs call), a form's POST has its CSRF token checked, and the outcome is a
// flash message with any refusal put in words, then a redirect to a local address.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Static } from '@sinclair/typebox'
import { sessionPrincipal } from '../../core/access.ts'
import type { Operation } from '../../core/operations.ts'

/** A form's fields (or a query's), as formbody and the query parser give them. */
export type Form = Record<string, string | undefined>

/**
 * Only local console paths may be redirect targets (no open redirect), written as a URL is
 * sent: printable ASCII. Anything else in a Location header (a NUL, a `☃`) makes Node throw
 * while writing the response, which took the whole process down.
 */
export function safeNext(next: string | undefined, fallback = '/console'): string {
  return next && /^\/(console|oauth)(\/|\?|$)[\x21-\x7e]*$/.test(next) && !next.startsWith('//') ? next : fallback
}

/**
 * The route options of a form's POST: its CSRF token is checked. A route's preHandler runs after
 * its scope's, so behind sign-in a signed-out visitor is sent to sign in before the token is read.
 */
export function formPost(app: FastifyInstance) {
  return { preHandler: app.csrfProtection }
}

/** Runs an operation as the signed-in user, through the registry like every other surface. */
export function run<O extends Operation>(request: FastifyRequest, op: O, args: unknown, project?: string): Promise<Static<O['output']>> {
  return request.server.registry.invoke(op, args, { principal: sessionPrincipal(request.consoleUser), projectRef: project, surface: 'console', log: request.log })
}

/** The project named in a path as the signed-in user may see it (with their role), or undefined. */
export function projectAccess(request: FastifyRequest, project: string) {
  return request.server.repos.projects.access(sessionPrincipal(request.consoleUser), project)
}

/** A message for the next page shown (flash messages live in the session). */
export function flash(request: FastifyRequest, kind: 'ok' | 'error', text: string) {
  request.session.set('flash', { kind, text })
}

/** A refused operation in one sentence: each invalid field with its reason, or the error's message. */
export function describe(err: unknown): string {
  const e = err as { message?: string; details?: { path: string; message: string }[] }
  return e.details?.length ? e.details.map((d) => `${d.path || 'input'} ${d.message}`).join('; ') : (e.message ?? 'failed')
}

/** A version from a form as the tools take it: a number, or the text as sent (refused with a 400 naming it). */
export function asVersion(text: string): number | string {
  return /^\d{1,10}$/.test(text) ? Number(text) : text
}
