// Passwords in the console over HTTP: the page a reset link opens (a form, or a clear 404/410
// that changes nothing), Profile → Change password (the current one required, every other
// session ended), "Forgot password?" with mail (a real SMTP server: the mailed link sets a
// password; an unknown email gets the same answer and no mail) and without it (whom to ask),
// and Members → Reset link shown once.
import t from 'tap'
import { eq, sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { addMember, bearer, buildTestApp, fixedClock, seedWorkspace } from '../helpers/app.ts'
import { startMailServer } from '../helpers/mail.ts'
import { Agent, csrfOf } from './helpers.ts'
import { passwordResets, users } from '../../db/schema.ts'
import { verifyPassword } from '../../core/passwords.ts'
import { resetPassword } from '../../bin/admin.ts'

const NEW_PASSWORD = 'correct horse battery staple'
const pathOf = (link: string) => new URL(link).pathname
/** A page's words, as read: tags gone, no space before punctuation. */
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').replace(/ ([.,;:])/g, '$1')
const hashOf = async (app: FastifyInstance, id: string) => (await app.db.select({ h: users.passwordHash }).from(users).where(eq(users.id, id)))[0]!.h

/** Submits a reset link's form; the answer. */
async function submitReset(agent: Agent, link: string, password: string, repeat = password) {
  return agent.submit(pathOf(link), pathOf(link), { password, repeat })
}

t.test('a reset link in the console: the form, a new password once, then a clear page', async (t) => {
  const clock = fixedClock('2030-03-01T09:00:00.000Z')
  const app = await buildTestApp(t, { now: clock })
  const ws = await seedWorkspace(app)
  const key = ws.keys.service

  // Signed in twice before the reset.
  const before1 = new Agent(app, '10.1.0.1')
  const before2 = new Agent(app, '10.1.0.2')
  await before1.signIn(ws.user.email, ws.user.password)
  await before2.signIn(ws.user.email, ws.user.password)

  const { link } = await resetPassword(app, { email: ws.user.email })
  const visitor = new Agent(app, '10.1.0.3')
  const page = await visitor.get(pathOf(link))
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h1>Set a new password<\/h1>/)
  t.match(page.body, new RegExp(`value="${ws.user.email}" autocomplete="username" readonly`), 'names the account')
  t.match(page.headers['referrer-policy'], /no-referrer/, 'the address with the token is sent nowhere')

  const short = await submitReset(visitor, link, 'short')
  t.equal(short.statusCode, 400)
  t.match(text(short.body), /The password is too short: use at least 12 characters/, "the policy's reason beside the field")
  t.match(short.body, /aria-invalid="true"/)
  const differ = await submitReset(visitor, link, NEW_PASSWORD, `${NEW_PASSWORD}!`)
  t.equal(differ.statusCode, 400)
  t.match(text(differ.body), /The two passwords differ/)
  t.equal(await verifyPassword(ws.user.password, await hashOf(app, ws.user.id)), true, 'nothing changed yet')

  const done = await submitReset(visitor, link, NEW_PASSWORD)
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, '/console')
  const home = await visitor.get('/console')
  t.equal(home.statusCode, 200, 'signed in by the reset')
  t.match(text(home.body), /Your new password is set and you are signed in\. 2 other sessions were signed out\./)
  t.equal((await before1.get('/console')).statusCode, 302, 'the sessions from before are over')
  t.equal((await before2.get('/console/profile')).headers.location, '/console/login?next=%2Fconsole%2Fprofile')
  t.ok(await verifyPassword(NEW_PASSWORD, await hashOf(app, ws.user.id)), 'the new password is set')
  t.equal((await new Agent(app, '10.1.0.4').submit('/console/login', '/console/login', { email: ws.user.email, password: ws.user.password })).statusCode, 401, 'the old one no longer signs in')
  t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(key) })).statusCode, 200, 'API keys keep working')

  const again = await new Agent(app, '10.1.0.5').get(pathOf(link))
  t.equal(again.statusCode, 410, 'a used link: 410')
  t.match(text(again.body), /This reset link was used .* Nothing was changed\./)
  t.match(text(again.body), /Forgot password\?|an owner of your workspace/)
  const replay = await new Agent(app, '10.1.0.6').post(pathOf(link), { _csrf: csrfOf(page.body), password: 'another password 123', repeat: 'another password 123' })
  t.ok([403, 410].includes(replay.statusCode), `a replayed POST changes nothing (${replay.statusCode})`)
  t.ok(await verifyPassword(NEW_PASSWORD, await hashOf(app, ws.user.id)))

  t.test('expired, unknown and malformed links: 410 or 404, never a 500, nothing changed', async (t) => {
    const late = await resetPassword(app, { email: ws.user.email })
    clock.set('2030-03-01T10:00:01.000Z')
    const agent = new Agent(app, '10.1.0.7')
    const expired = await agent.get(pathOf(late.link))
    t.equal(expired.statusCode, 410)
    t.match(text(expired.body), /This reset link has expired/)
    const post = await agent.post(pathOf(late.link), { _csrf: csrfOf((await agent.get('/console/login')).body), password: 'too late for this one', repeat: 'too late for this one' })
    t.equal(post.statusCode, 410, 'its form is refused too')
    t.ok(await verifyPassword(NEW_PASSWORD, await hashOf(app, ws.user.id)), 'and nothing changed')
    const unknown = late.link.replace(/gdp_.*$/, 'gdp_' + 'A'.repeat(38))
    for (const path of [pathOf(unknown), '/console/reset/nonsense', '/console/reset/gdp_x', '/console/reset/%00', '/console/reset/%F0%9F%98%80']) {
      const res = await agent.get(path)
      t.equal(res.statusCode, 404, `${path.slice(0, 60)}: 404`)
    }
    // As for every path: a segment no id can have is refused before any route (app.ts).
    t.equal((await agent.get(`/console/reset/${'gdp_'.padEnd(500, 'z')}`)).statusCode, 400, 'a 500-character token: 400')
    t.match(text((await agent.get('/console/reset/nonsense')).body), /This reset link does not work/)
  })

  t.test('the form is rate-limited per address', async (t) => {
    const { link } = await resetPassword(app, { email: ws.user.email })
    const agent = new Agent(app, '10.1.0.8')
    const page = await agent.get(pathOf(link))
    const codes = []
    for (let i = 0; i < 11; i++) codes.push((await agent.post(pathOf(link), { _csrf: csrfOf(page.body), password: 'x', repeat: 'x' })).statusCode)
    t.same(codes.slice(0, 10), Array(10).fill(400), 'ten tries are answered')
    t.equal(codes[10], 429, 'the eleventh is refused')
  })
})

t.test('Profile → Change password: the current one required; every other session ends, this one stays', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const here = new Agent(app, '10.2.0.1')
  const there = new Agent(app, '10.2.0.2')
  await here.signIn(ws.user.email, ws.user.password)
  await there.signIn(ws.user.email, ws.user.password)
  const profile = await here.get('/console/profile')
  t.match(profile.body, /href="\/console\/profile\/password">Change password</)
  t.match(text(profile.body), /Password the one the account was made with/)

  const form = { current: ws.user.password, password: NEW_PASSWORD, repeat: NEW_PASSWORD }
  const wrong = await here.submit('/console/profile/password', '/console/profile/password', { ...form, current: 'not it at all' })
  t.equal(wrong.statusCode, 401, 'a wrong current password: 401')
  t.match(text(wrong.body), /That is not your current password\./)
  const short = await here.submit('/console/profile/password', '/console/profile/password', { ...form, password: 'short', repeat: 'short' })
  t.equal(short.statusCode, 400)
  t.match(text(short.body), /too short/)
  const same = await here.submit('/console/profile/password', '/console/profile/password', { ...form, password: ws.user.password, repeat: ws.user.password })
  t.equal(same.statusCode, 400)
  t.match(text(same.body), /the one you have/)
  const asEmail = await here.submit('/console/profile/password', '/console/profile/password', { ...form, password: ws.user.email.toUpperCase(), repeat: ws.user.email.toUpperCase() })
  t.equal(asEmail.statusCode, 400)
  t.match(text(asEmail.body), /cannot be your email address/)
  t.ok(await verifyPassword(ws.user.password, await hashOf(app, ws.user.id)), 'nothing changed by those')
  t.equal((await there.get('/console')).statusCode, 200, 'and the other session is still in')

  const done = await here.submit('/console/profile/password', '/console/profile/password', form)
  t.equal(done.statusCode, 303)
  t.equal(done.headers.location, '/console/profile')
  const after = await here.get('/console/profile')
  t.equal(after.statusCode, 200, 'this session stays')
  t.match(text(after.body), /Your password is changed\. 1 other session was signed out\./)
  t.match(text(after.body), /Password changed just now/)
  const out = await there.get('/console/keys')
  t.equal(out.statusCode, 302, 'the other session is over')
  t.equal(out.headers.location, '/console/login?next=%2Fconsole%2Fkeys')
  t.ok(await verifyPassword(NEW_PASSWORD, await hashOf(app, ws.user.id)))
  t.equal((await new Agent(app, '10.2.0.3').submit('/console/login', '/console/login', { email: ws.user.email, password: NEW_PASSWORD })).statusCode, 302, 'the new password signs in')

  t.test('wrong current passwords are rate-limited per user', async (t) => {
    const member = await addMember(app, ws.project.id, 'viewer')
    const codes: number[] = []
    for (let i = 0; i < 11; i++) {
      // A new address for every try: the limit follows the user, not the address.
      const agent = new Agent(app, `10.2.1.${i}`)
      await agent.signIn(member.user.email, member.user.password)
      codes.push((await agent.submit('/console/profile/password', '/console/profile/password', { current: 'wrong', password: NEW_PASSWORD, repeat: NEW_PASSWORD })).statusCode)
    }
    t.same(codes.slice(0, 10), Array(10).fill(401))
    t.equal(codes[10], 429)
  })
})

t.test('Forgot password? without mail: the page says whom to ask, and nothing is made', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const agent = new Agent(app, '10.3.0.1')
  const login = await agent.get('/console/login')
  t.match(login.body, /<a href="\/console\/forgot">Forgot password\?<\/a>/, 'the sign-in page links it')
  const page = await agent.get('/console/forgot')
  t.equal(page.statusCode, 200)
  const words = text(page.body)
  t.match(words, /This server does not send mail/)
  t.match(words, /An owner of your workspace makes one for you on Members → Reset link/)
  t.match(words, /growthdesk admin reset-password --email/)
  t.notMatch(page.body, /<form method="post" action="\/console\/forgot"/, 'no form that would pretend to send')
  const posted = await agent.post('/console/forgot', { _csrf: csrfOf(login.body), email: ws.user.email })
  t.equal(posted.statusCode, 303, 'a post anyway is sent back to the page')
  t.equal(posted.headers.location, '/console/forgot')
  t.same(await app.db.select().from(passwordResets), [], 'no link made')
})

t.test('Forgot password? with mail: the same answer for any email; the mailed link sets a password once', async (t) => {
  const mailbox = await startMailServer()
  t.teardown(() => mailbox.close())
  const app = await buildTestApp(t, { config: { mail: { url: mailbox.url, from: 'growthdesk <growthdesk@example.test>' } } })
  const ws = await seedWorkspace(app)
  const member = await addMember(app, ws.project.id, 'reviewer', 'ana@acme.test')

  const agent = new Agent(app, '10.4.0.1')
  const form = await agent.get('/console/forgot')
  t.match(form.body, /<form method="post" action="\/console\/forgot"/)
  t.match(text(form.body), /we mail you a link/)
  const forgot = (email: string, from = agent) => from.submit('/console/forgot', '/console/forgot', { email })

  const unknown = await forgot('nobody@acme.test')
  const known = await forgot('Ana@Acme.test')
  t.equal(unknown.statusCode, 200)
  t.equal(known.statusCode, 200)
  const same = (html: string, email: string) => text(html).replaceAll(email, 'EMAIL').replace(/name="_csrf" value="[^"]*"/, '')
  t.equal(same(unknown.body, 'nobody@acme.test'), same(known.body, 'ana@acme.test'), 'the same page whether or not the account exists')
  t.match(text(known.body), /If an account exists for ana@acme\.test, a link to set a new password is on its way\. It works once, for one hour\./)

  const mail = await mailbox.next()
  t.equal((Array.isArray(mail.to) ? mail.to[0] : mail.to)?.value[0]?.address, 'ana@acme.test')
  t.equal(mail.from?.value[0]?.address, 'growthdesk@example.test')
  t.equal(mail.subject, 'Set a new growthdesk password')
  t.match(mail.text, /asked to reset the password of your growthdesk account ana@acme\.test/)
  t.match(mail.text, /works once, for one hour \(until \d{4}-\d\d-\d\d \d\d:\d\d UTC\)/)
  t.match(mail.text, /If you did not ask for this, ignore this mail/)
  const link = mailbox.linkIn(mail)
  t.match(link, /^http:\/\/127\.0\.0\.1:3000\/console\/reset\/gdp_[0-9A-Za-z]{38}$/)
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(mailbox.messages.length, 1, 'no mail for the unknown address')

  const visitor = new Agent(app, '10.4.0.2')
  t.equal((await submitReset(visitor, link, NEW_PASSWORD)).statusCode, 303, 'the mailed link sets the password')
  t.ok(await verifyPassword(NEW_PASSWORD, await hashOf(app, member.user.id)))
  t.equal((await visitor.get('/console')).statusCode, 200, 'and signs in')
  t.equal((await new Agent(app, '10.4.0.3').get(pathOf(link))).statusCode, 410, 'once')

  t.test('per account: three links an hour, then silence (the same answer)', async (t) => {
    // The reset above used one (forgot-password links are counted, used or not).
    for (const ip of ['10.4.1.1', '10.4.1.2', '10.4.1.3']) t.equal((await forgot('ana@acme.test', new Agent(app, ip))).statusCode, 200)
    await mailbox.next()
    await mailbox.next()
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.equal(mailbox.messages.length, 3, 'two more mails, and the third request this hour sends none')
    const rows = await app.db.select().from(passwordResets).where(eq(passwordResets.userId, member.user.id))
    t.equal(rows.length, 3)
  })

  t.test('per address: five requests in five minutes', async (t) => {
    const from = new Agent(app, '10.4.2.1')
    const codes = []
    for (let i = 0; i < 6; i++) codes.push((await forgot(`x${i}@acme.test`, from)).statusCode)
    t.same(codes, [200, 200, 200, 200, 200, 429])
  })

  t.test('a bad address is said so, and nothing is looked up', async (t) => {
    const res = await forgot('not-an-email', new Agent(app, '10.4.3.1'))
    t.equal(res.statusCode, 400)
    t.match(text(res.body), /Type the email address you sign in with/)
  })
})

t.test('Members → Reset link: an owner gets the link once (or it is mailed); a refusal is a flash', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const member = await addMember(app, ws.project.id, 'viewer', 'mo@acme.test')
  const owner = new Agent(app, '10.5.0.1')
  await owner.signIn(ws.user.email, ws.user.password)

  const made = await owner.submit('/console/profile', '/console/members/reset-link', { email: 'mo@acme.test', back: '/console/members' })
  t.equal(made.statusCode, 303)
  t.equal(made.headers.location, '/console/members/reset-link?back=%2Fconsole%2Fmembers')
  t.notMatch(made.body, /gdp_/, 'the redirect carries no link')
  const shown = await owner.get(made.headers.location as string)
  t.equal(shown.statusCode, 200)
  t.match(shown.headers['cache-control'], /no-store/)
  const link = /id="reset-link">([^<]+)</.exec(shown.body)?.[1]
  t.match(link, /^http:\/\/127\.0\.0\.1:3000\/console\/reset\/gdp_[0-9A-Za-z]{38}$/, 'the link, shown once')
  t.match(text(shown.body), /Copy the link now and give it to mo@acme\.test/)
  t.match(shown.body, /href="\/console\/members">Back to Members/)
  const stored = JSON.stringify((await app.db.execute(sql`select data from sessions`)))
  t.notOk(stored.includes(link!.slice(-38)), 'no stored session holds the link')
  const again = await owner.get('/console/members/reset-link')
  t.match(text(again.body), /This reset link was already shown/)
  t.notOk(again.body.includes(link!))
  t.equal((await submitReset(new Agent(app, '10.5.0.2'), link!, NEW_PASSWORD)).statusCode, 303, 'the link works')
  t.ok(await verifyPassword(NEW_PASSWORD, await hashOf(app, member.user.id)))

  const self = await owner.submit('/console/profile', '/console/members/reset-link', { email: ws.user.email })
  t.equal(self.statusCode, 303)
  t.equal(self.headers.location, '/console/members', 'back to Members')
  t.match(text((await owner.get('/console/profile')).body), /That is you: change your own password on Profile → Change password\./, 'with the refusal as a flash')

  const viewer = new Agent(app, '10.5.0.3')
  await viewer.signIn('mo@acme.test', NEW_PASSWORD)
  const refused = await viewer.submit('/console/profile', '/console/members/reset-link', { email: ws.user.email, back: '/console/profile' })
  t.equal(refused.headers.location, '/console/profile')
  t.match(text((await viewer.get('/console/profile')).body), /workspace owner/)
  t.equal((await viewer.post('/console/members/reset-link', { email: ws.user.email })).statusCode, 403, 'without its CSRF token: refused')
})

t.test('Members → Reset link with mail: mailed to the member, and the page says so', async (t) => {
  const mailbox = await startMailServer()
  t.teardown(() => mailbox.close())
  const app = await buildTestApp(t, { config: { mail: { url: mailbox.url, from: 'gd@example.test' } } })
  const ws = await seedWorkspace(app)
  await addMember(app, ws.project.id, 'viewer', 'mo@acme.test')
  const owner = new Agent(app, '10.6.0.1')
  await owner.signIn(ws.user.email, ws.user.password)
  const made = await owner.submit('/console/profile', '/console/members/reset-link', { email: 'mo@acme.test' })
  const shown = await owner.get(made.headers.location as string)
  t.match(text(shown.body), /Reset link mailed A link to set a new password was mailed to mo@acme\.test\. It works once and expires in 1 h\./)
  t.notMatch(shown.body, /gdp_/, 'the owner does not see the link')
  const mail = await mailbox.next()
  t.match(mailbox.linkIn(mail), /\/console\/reset\/gdp_/)
})
