// Signing in and out: the sign-in page and its form (rate-limited, and as slow for an unknown
// email as for a wrong password), and the Sign out button's POST.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { verifyPassword } from '../../core/passwords.ts'
import { formPost, safeNext, type Form } from './actions.ts'
import { signIn } from './session.ts'

/** The sign-in page and form: open to everyone, so registered outside the signed-in scope. */
export function signInPages(app: FastifyInstance) {
  const dummyHash = `scrypt$${app.passwordHashCost}$8$1$${DUMMY_SALT_AND_KEY}`
  app.get('/console/login', async (request, reply) => {
    const query = request.query as Form
    if (request.session.get('userId')) return reply.redirect(safeNext(query.next))
    return reply.page('login', { title: 'Sign in', next: safeNext(query.next), email: '' })
  })

  app.post('/console/login', {
    ...formPost(app),
    config: { rateLimit: { max: 10, timeWindow: '5 minutes', keyGenerator: (req: FastifyRequest) => req.ip } },
  }, async (request, reply) => {
    const body = (request.body ?? {}) as Form
    const email = (body.email ?? '').trim().toLowerCase()
    const user = email ? await app.repos.users.findByEmail(email) : undefined
    // Verify against a dummy hash when the user does not exist, so timing does not reveal who does.
    const ok = await verifyPassword(body.password ?? '', user?.passwordHash ?? dummyHash)
    if (!user || !ok) {
      reply.code(401)
      // Said on the page itself: a failed sign-in stores nothing.
      return reply.page('login', { title: 'Sign in', next: safeNext(body.next), email, flash: { kind: 'error', text: 'Wrong email or password.' } })
    }
    await signIn(request, user)
    return reply.redirect(safeNext(body.next))
  })
}

/** Sign out: behind sign-in like every other form, so a signed-out POST is sent to sign in. */
export function signOutRoute(app: FastifyInstance) {
  app.post('/console/logout', formPost(app), async (request, reply) => {
    await request.session.destroy()
    return reply.redirect('/console/login')
  })
}

// Salt and key of a hash no password matches, at the cost the app hashes passwords with: sign-in
// costs the same whether or not the email exists.
const DUMMY_SALT_AND_KEY = 'c2FsdHNhbHRzYWx0c2FsdA==$3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='
