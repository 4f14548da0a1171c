// Password-reset links (db/repositories/passwords.ts) and who may make one (the
// create_password_reset operation): a link works once, even when two resets race; for one hour
// by the app clock; only its hash is stored; setting a password spends the user's other links
// and ends their sessions, never their keys. With mail on, a link made in the console goes to
// the member's inbox (a real SMTP server here) and not to whoever made it.
import t from 'tap'
import { createHash } from 'node:crypto'
import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { addMember, addProject, bearer, buildTestApp, fixedClock, seedWorkspace } from './helpers/app.ts'
import { startMailServer } from './helpers/mail.ts'
import { passwordResets, sessions, users } from '../db/schema.ts'
import { operatorPrincipal, sessionPrincipal, type Principal } from '../core/access.ts'
import createPasswordReset from '../tools/create-password-reset.ts'
import { errorResponse } from '../core/errors.ts'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')
const HOUR = 3_600_000

/** create_password_reset as `principal`: the result, or the error's status and code. */
async function makeLink(app: FastifyInstance, principal: Principal, email: string) {
  try {
    return { ok: true as const, result: await app.registry.invoke(createPasswordReset, { email }, { principal, surface: 'console', log: app.log }) }
  } catch (err) {
    const { status, body, internal } = errorResponse(err)
    if (internal) throw err
    return { ok: false as const, status, code: body.error.code, message: body.error.message }
  }
}

t.test('a reset link: only its hash stored, one hour by the app clock, single use even when two resets race', async (t) => {
  const clock = fixedClock('2030-01-01T12:00:00.000Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const other = await seedWorkspace(app)
  const { passwords } = app.repos

  const { token, expiresAt } = await passwords.issueReset({ userId: ws.user.id, createdBy: null, now: clock() })
  t.match(token, /^gdp_[0-9A-Za-z]{38}$/, 'a gdp_ token in the key format')
  t.equal(expiresAt.toISOString(), '2030-01-01T13:00:00.000Z', 'valid for one hour by the app clock')
  const rows = await app.db.select().from(passwordResets)
  t.equal(rows.length, 1)
  t.equal(rows[0]!.tokenHash, sha256(token), 'stored as its SHA-256')
  t.notOk(JSON.stringify(rows).includes(token.slice(4, 36)), 'no column holds the token or its secret part')

  t.match(await passwords.findReset(token, clock()), { state: 'valid', userId: ws.user.id, email: ws.user.email })
  t.equal(await passwords.findReset('gdp_short', clock()), undefined, 'a malformed token finds nothing')
  const tampered = token.slice(0, 10) + (token[10] === 'a' ? 'b' : 'a') + token.slice(11)
  t.equal(await passwords.findReset(tampered, clock()), undefined, 'a token with a wrong checksum finds nothing')
  t.equal(await passwords.resetPassword(tampered, 'x', clock()), undefined)

  // The user is signed in twice; another user once. A second open link of the user.
  const far = new Date(Date.now() + HOUR)
  await app.repos.sessions.set('s-user-1', { cookie: {}, userId: ws.user.id }, far, ws.user.id)
  await app.repos.sessions.set('s-user-2', { cookie: {}, userId: ws.user.id }, far, ws.user.id)
  await app.repos.sessions.set('s-other', { cookie: {}, userId: other.user.id }, far, other.user.id)
  const second = await passwords.issueReset({ userId: ws.user.id, createdBy: null, now: clock() })
  const othersLink = await passwords.issueReset({ userId: other.user.id, createdBy: null, now: clock() })

  clock.set('2030-01-01T12:30:00.000Z')
  const [a, b] = await Promise.all([passwords.resetPassword(token, 'hash-a', clock()), passwords.resetPassword(token, 'hash-b', clock())])
  t.equal([a, b].filter(Boolean).length, 1, 'of two resets at once with one link, exactly one sets the password')
  const winner = (a ?? b)!
  t.match(winner, { userId: ws.user.id, email: ws.user.email, endedSessions: 2 })
  const [user] = await app.db.select().from(users).where(eq(users.id, ws.user.id))
  t.equal(user!.passwordHash, a ? 'hash-a' : 'hash-b', "the winner's password is the one set")
  t.equal(user!.passwordChangedAt?.toISOString(), '2030-01-01T12:30:00.000Z', 'password_changed_at by the app clock')
  const left = (await app.db.select({ sid: sessions.sid }).from(sessions)).map((r) => r.sid).sort()
  t.same(left, ['s-other'], "every session of the user ended; another user's stays")
  t.match(await passwords.findReset(token, clock()), { state: 'used' }, 'the link is used')
  t.match(await passwords.findReset(second.token, clock()), { state: 'used' }, 'and so is the other open link of the user')
  t.match(await passwords.findReset(othersLink.token, clock()), { state: 'valid' }, "another user's link is untouched")
  t.equal(await passwords.resetPassword(token, 'hash-c', clock()), undefined, 'a used link sets nothing')
  t.equal(await passwords.resetPassword(second.token, 'hash-c', clock()), undefined)
  t.equal((await app.db.select().from(users).where(eq(users.id, ws.user.id)))[0]!.passwordHash, winner === a ? 'hash-a' : 'hash-b', 'unchanged')

  t.test('expiry: valid until the hour is up, then nothing changes', async (t) => {
    clock.set('2030-01-02T08:00:00.000Z')
    const link = await passwords.issueReset({ userId: other.user.id, createdBy: ws.user.id, now: clock() })
    clock.set('2030-01-02T08:59:59.999Z')
    t.match(await passwords.findReset(link.token, clock()), { state: 'valid' })
    clock.set('2030-01-02T09:00:00.000Z')
    t.match(await passwords.findReset(link.token, clock()), { state: 'expired' })
    const before = (await app.db.select().from(users).where(eq(users.id, other.user.id)))[0]!.passwordHash
    t.equal(await passwords.resetPassword(link.token, 'late', clock()), undefined, 'an expired link sets nothing')
    t.equal((await app.db.select().from(users).where(eq(users.id, other.user.id)))[0]!.passwordHash, before)
  })

  t.test('a removed user cannot reset', async (t) => {
    const link = await passwords.issueReset({ userId: other.user.id, createdBy: null, now: clock() })
    await app.db.update(users).set({ removedAt: clock() }).where(eq(users.id, other.user.id))
    t.equal(await passwords.findReset(link.token, clock()), undefined, 'the link of a removed user finds nothing')
    t.equal(await passwords.resetPassword(link.token, 'x', clock()), undefined, 'and sets nothing')
    await app.db.update(users).set({ removedAt: null }).where(eq(users.id, other.user.id))
  })

  t.test('a change by the signed-in owner: the hash, open links spent, every other session ended', async (t) => {
    await app.repos.sessions.set('s-keep', { cookie: {}, userId: other.user.id }, far, other.user.id)
    await app.repos.sessions.set('s-end', { cookie: {}, userId: other.user.id }, far, other.user.id)
    const link = await passwords.issueReset({ userId: other.user.id, createdBy: null, now: clock() })
    const done = await passwords.changePassword(other.user.id, 'changed', clock(), 's-keep')
    t.match(done, { endedSessions: 2 }, 's-end and s-other ended')
    const left = (await app.db.select({ sid: sessions.sid }).from(sessions).where(eq(sessions.userId, other.user.id))).map((r) => r.sid)
    t.same(left, ['s-keep'], 'the session that made the change stays')
    t.match(await passwords.findReset(link.token, clock()), { state: 'used' }, 'an open link is spent by the change')
  })
})

t.test('create_password_reset: who may make a link for whom', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const elsewhere = await seedWorkspace(app)
  const owner = (await app.repos.users.findByEmail(ws.user.email))!
  const second = await addProject(app, { workspaceId: ws.workspace.id, ownerId: ws.user.id, name: 'Second', slug: 'second' })
  // A project owner (of the demo project only), a viewer there, a member of both projects, a reviewer.
  await addMember(app, ws.project.id, 'owner', 'lead@acme.test')
  await addMember(app, ws.project.id, 'viewer', 'viewer@acme.test')
  const both = await addMember(app, ws.project.id, 'viewer', 'both@acme.test')
  await app.repos.users.setMembership({ userId: both.user.id, projectId: second.id, role: 'viewer' })
  const reviewer = await addMember(app, ws.project.id, 'reviewer', 'reviewer@acme.test')
  const principal = async (email: string) => sessionPrincipal((await app.repos.users.findByEmail(email))!)

  const made = await makeLink(app, sessionPrincipal(owner), 'Viewer@Acme.test')
  t.ok(made.ok, 'a workspace owner, for a member')
  if (made.ok) {
    t.match(made.result, { email: 'viewer@acme.test', link: /^http:\/\/127\.0\.0\.1:3000\/console\/reset\/gdp_[0-9A-Za-z]{38}$/, mailed: false, mail_error: null })
    t.ok(Math.abs(Date.parse(made.result.expires_at) - Date.now() - HOUR) < 60_000, 'valid for an hour')
    const row = (await app.db.select().from(passwordResets)).find((r) => r.tokenHash === sha256(made.result.link!.split('/').pop()!))
    t.equal(row?.createdBy, owner.id, 'who made it is kept')
  }
  t.ok((await makeLink(app, await principal('lead@acme.test'), 'viewer@acme.test')).ok, 'a project owner, for a member whose every project they own')
  t.match(await makeLink(app, await principal('lead@acme.test'), 'both@acme.test'), { ok: false, status: 403, message: /own every project they are in/ }, 'not for a member of a project they do not own')
  t.match(await makeLink(app, await principal('lead@acme.test'), ws.user.email), { ok: false, status: 403, message: /workspace owner/ }, 'nor for a workspace owner')
  t.match(await makeLink(app, await principal('reviewer@acme.test'), 'viewer@acme.test'), { ok: false, status: 403 }, 'a reviewer: no')
  t.match(await makeLink(app, await principal('viewer@acme.test'), 'viewer@acme.test'), { ok: false, status: 403, message: /Change password/ }, 'nobody for themselves in the console')
  t.ok((await makeLink(app, operatorPrincipal(owner), ws.user.email)).ok, 'the operator, for the user it acts for (the CLI)')
  t.match(await makeLink(app, sessionPrincipal(owner), elsewhere.user.email), { ok: false, status: 404 }, "another workspace's user is nobody here")
  t.match(await makeLink(app, sessionPrincipal(owner), 'nobody@acme.test'), { ok: false, status: 404 })
  await app.db.update(users).set({ removedAt: new Date() }).where(eq(users.id, reviewer.user.id))
  t.match(await makeLink(app, sessionPrincipal(owner), 'reviewer@acme.test'), { ok: false, status: 404 }, 'a removed member is nobody')
  const key: Principal = { ...sessionPrincipal(owner), keyId: 'key_x', kind: 'service' }
  t.match(await makeLink(app, key, 'viewer@acme.test'), { ok: false, status: 403, message: /not with a key/ }, 'never with a key')
  t.equal((await app.inject({ method: 'POST', url: '/v1/tools/create_password_reset', headers: bearer(ws.keys.service), payload: { email: 'viewer@acme.test' } })).statusCode, 404, 'and it is no tool')
})

t.test('with mail: a link made in the console is mailed to the member and not shown; the operator gets it printed', async (t) => {
  const mailbox = await startMailServer()
  t.teardown(() => mailbox.close())
  const app = await buildTestApp(t, { config: { mail: { url: mailbox.url, from: 'growthdesk <growthdesk@example.test>' } } })
  const ws = await seedWorkspace(app)
  const member = await addMember(app, ws.project.id, 'viewer', 'ana@acme.test')
  const owner = (await app.repos.users.findByEmail(ws.user.email))!

  const made = await makeLink(app, sessionPrincipal(owner), 'ana@acme.test')
  t.match(made, { ok: true, result: { email: 'ana@acme.test', link: null, mailed: true, mail_error: null } }, 'mailed, and the link is not returned')
  const mail = await mailbox.next()
  t.equal((Array.isArray(mail.to) ? mail.to[0] : mail.to)?.value[0]?.address, 'ana@acme.test')
  t.equal(mail.subject, 'Set a new growthdesk password')
  t.match(mail.text, new RegExp(`${ws.user.email.replace(/\./g, '\\.')}, an owner in your growthdesk workspace`), 'says who made it')
  t.match(mail.text, /works once, for one hour/)
  t.match(mail.text, /If you did not ask for this, ignore this mail/)
  const link = mailbox.linkIn(mail)
  t.match(link, /^http:\/\/127\.0\.0\.1:3000\/console\/reset\/gdp_[0-9A-Za-z]{38}$/)
  t.match(await app.repos.passwords.findReset(link.split('/').pop()!, app.now()), { state: 'valid', userId: member.user.id })

  mailbox.refuse(/ana@/)
  const refused = await makeLink(app, sessionPrincipal(owner), 'ana@acme.test')
  t.match(refused, { ok: true, result: { mailed: false, link: /\/console\/reset\/gdp_/, mail_error: /could not be sent/ } }, 'a mail that cannot go: the link is returned instead, with why')
  mailbox.refuse(null)

  const count = mailbox.messages.length
  const printed = await makeLink(app, operatorPrincipal(owner), ws.user.email)
  t.match(printed, { ok: true, result: { mailed: false, link: /\/console\/reset\/gdp_/ } }, 'the operator (CLI) gets the link, not a mail')
  t.equal(mailbox.messages.length, count, 'nothing was mailed')
})
