// The Members page over HTTP: inviting (the link shown once, after a redirect, and mailed through
// a real SMTP server), the invitation page (a password chosen, signed in, on the board), every
// link that does not work (unknown, malformed, used, cancelled, expired: a page, never a 500),
// changing a role, removing from a project and from the workspace (after a page that asks), and
// a mail server that refuses.
import t from 'tap'
import { Writable } from 'node:stream'
import { buildApp, loggerOptions } from '../../app.ts'
import { sql } from '../../db/orm.ts'
import { addMember, buildTestApp, fixedClock, PUBLIC_URL, seedWorkspace, TEST_PASSWORD_HASH_COST, testConfig, testDatabase } from '../helpers/app.ts'
import { startMailServer } from '../helpers/mail.ts'
import { Agent, csrfOf } from './helpers.ts'

const mailbox = await startMailServer()
t.teardown(() => mailbox.close())
const now = fixedClock('2026-11-20T12:00:00.000Z')
const app = await buildTestApp(t, { now, config: { mail: { url: mailbox.url, from: 'growthdesk <growthdesk@example.com>' } } })
const ws = await seedWorkspace(app, 'Acme')
const reviewer = await addMember(app, ws.project.id, 'reviewer', 'rev@example.com')
const owner = new Agent(app, '10.0.0.1')
await owner.signIn(ws.user.email, ws.user.password)
const pathOf = (link: string) => new URL(link).pathname

async function invite(email: string, role = 'reviewer') {
  const res = await owner.submit('/console/members', '/console/members/invite', { email, [`role_${ws.project.id}`]: role })
  return res
}

t.test('the Members page lists members with their roles and offers the invite form', async (t) => {
  const page = await owner.get('/console/members')
  t.equal(page.statusCode, 200)
  t.match(page.body, '<a href="/console/members"><span class="long-label">Members</span>', 'linked in the top bar')
  t.match(page.body, /data-member="rev@example.com"/)
  t.match(page.body, new RegExp(`name="role_${ws.project.id}"`), 'a role choice for the project the owner owns')
  t.match(page.body, /<option value="none" selected>no access<\/option>/, 'no access by default')
  t.match(page.body, /Remove from workspace/)
  const asReviewer = new Agent(app)
  await asReviewer.signIn('rev@example.com', reviewer.user.password)
  const theirs = await asReviewer.get('/console/members')
  t.equal(theirs.statusCode, 200, 'any member sees the page')
  t.notMatch(theirs.body, /Invite someone|Remove from workspace|role-form/, 'but manages nothing')
})

t.test('invite: no role chosen is refused; the link is shown once, mailed, and opens the invitation page', async (t) => {
  const none = await invite('nobody@example.com', 'none')
  t.equal(none.statusCode, 303)
  t.match((await owner.get('/console/members')).body, /Choose a role in at least one project/)
  t.equal((await app.repos.members.pending(ws.workspace.id)).length, 0, 'nothing made')

  const res = await invite('new@example.com')
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, '/console/members/invited')
  const shown = await owner.get('/console/members/invited')
  t.equal(shown.statusCode, 200)
  const link = /<code id="invitation-link">([^<]+)<\/code>/.exec(shown.body)?.[1] ?? ''
  t.match(link, new RegExp(`^${PUBLIC_URL}/console/invite/gdv_`))
  t.match(shown.body, /was sent to new@example.com by mail/)
  t.match(shown.body, /data-copy="#invitation-link"/, 'with a Copy button')
  const again = await owner.get('/console/members/invited')
  t.notMatch(again.body, link, 'a reload does not show it again')
  t.match(again.body, /already shown/)
  const dump = JSON.stringify(await app.db.execute(sql`select data from sessions`))
  t.notMatch(dump, link.slice(-40), 'the session never held the link in clear')

  const mail = await mailbox.next()
  t.equal(mail.to && !Array.isArray(mail.to) ? mail.to.text : '', 'new@example.com')
  t.match(mail.subject, `${ws.user.email} invites you to Acme`)
  t.equal(mailbox.linkIn(mail), link, "the mail's link is the one shown")
  t.match(mail.text, /Demo project \(demo-project\): reviewer/)
  t.match(mail.text, /for 7 days/)
  t.match(mail.text, /ignore this mail/)

  const listed = await owner.get('/console/members')
  t.match(listed.body, /data-invitation="new@example.com"/, 'pending, with Cancel')

  const invitee = new Agent(app, '10.0.0.2')
  const open = await invitee.get(pathOf(link))
  t.equal(open.statusCode, 200)
  t.match(open.body, /Join Acme/)
  t.match(open.body, /name="email" value="new@example.com" readonly/)
  t.match(open.body, /Demo project — reviewer/)
  const action = pathOf(link)
  const short = await invitee.post(action, { _csrf: csrfOf(open.body), password: 'short', repeat: 'short' })
  t.equal(short.statusCode, 400)
  t.match(short.body, /The password is too short: use at least 12 characters/)
  t.match(short.body, /aria-invalid="true"/)
  const differ = await invitee.post(action, { _csrf: csrfOf(short.body), password: 'correct horse battery', repeat: 'correct horse battery!' })
  t.equal(differ.statusCode, 400)
  t.match(differ.body, /The two passwords differ/)
  const joined = await invitee.post(action, { _csrf: csrfOf(differ.body), password: 'correct horse battery', repeat: 'correct horse battery' })
  t.equal(joined.statusCode, 303)
  t.equal(joined.headers.location, `/console/projects/${ws.project.slug}/opportunities`, 'lands on the board')
  const board = await invitee.get(`/console/projects/${ws.project.slug}/opportunities`)
  t.equal(board.statusCode, 200, 'signed in, and may review')
  t.match(board.body, /Sign out \(new@example.com\)/)
  const used = await new Agent(app).get(pathOf(link))
  t.equal(used.statusCode, 410)
  t.match(used.body, /already used/)
  const replay = await invitee.post(action, { _csrf: csrfOf(board.body), password: 'another long password', repeat: 'another long password' })
  t.equal(replay.statusCode, 410, 'a second acceptance is refused')
})

t.test('links that do not work: a clear page, never a 500', async (t) => {
  const visitor = new Agent(app)
  for (const [what, path, status] of [
    ['malformed', '/console/invite/nonsense', 404],
    ['a checksum that does not match', '/console/invite/gdv_000000000000000000000000000000000000AAAAAA', 404],
    ['a password-reset token', '/console/invite/gdp_000000000000000000000000000000000000AAAAAA', 404],
  ] as const) {
    const res = await visitor.get(path)
    t.equal(res.statusCode, status, what)
    t.match(res.body, /Ask the person who invited you for a new invitation/, what)
  }
  const tooLong = await visitor.get(`/console/invite/gdv_${'x'.repeat(500)}`)
  t.equal(tooLong.statusCode, 400, 'a path segment longer than any id is refused before routing')
  await invite('cancelled@example.com')
  const cancelledLink = /<code id="invitation-link">([^<]+)<\/code>/.exec((await owner.get('/console/members/invited')).body)![1]!
  const id = (await app.repos.members.pending(ws.workspace.id)).find((i) => i.email === 'cancelled@example.com')!.id
  const cancel = await owner.submit('/console/members', `/console/invitations/${id}/cancel`, {})
  t.equal(cancel.statusCode, 303)
  t.match((await owner.get('/console/members')).body, /The invitation to cancelled@example.com is cancelled/)
  const cancelled = await visitor.get(pathOf(cancelledLink))
  t.equal(cancelled.statusCode, 410)
  t.match(cancelled.body, /was cancelled/)

  await invite('late@example.com')
  const lateLink = /<code id="invitation-link">([^<]+)<\/code>/.exec((await owner.get('/console/members/invited')).body)![1]!
  now.set('2026-11-28T12:00:00.000Z')
  const expired = await visitor.get(pathOf(lateLink))
  t.equal(expired.statusCode, 410)
  t.match(expired.body, /has expired/)
  const post = await visitor.post(pathOf(lateLink), { _csrf: csrfOf((await visitor.get('/console/login')).body), password: 'a long enough password', repeat: 'a long enough password' })
  t.equal(post.statusCode, 410, 'nor can it be accepted')
  now.set('2026-11-20T12:00:00.000Z')
})

t.test('signed in as someone else: the page says so, and accepting replaces that session', async (t) => {
  await invite('switch@example.com', 'viewer')
  const link = /<code id="invitation-link">([^<]+)<\/code>/.exec((await owner.get('/console/members/invited')).body)![1]!
  const shared = new Agent(app)
  await shared.signIn('rev@example.com', reviewer.user.password)
  const page = await shared.get(pathOf(link))
  t.match(page.body, /You are signed in as rev@example.com/)
  t.match((await shared.get('/console')).body, /Sign out \(rev@example.com\)/, 'opening the link signs nobody out')
  const res = await shared.post(pathOf(link), { _csrf: csrfOf(page.body), password: 'a long enough password', repeat: 'a long enough password' })
  t.equal(res.statusCode, 303)
  t.equal(res.headers.location, `/console/projects/${ws.project.slug}`, 'a viewer lands on the overview')
  t.match((await shared.get('/console')).body, /Sign out \(switch@example.com\)/)
})

t.test('roles and removal from the page', async (t) => {
  const member = await app.repos.users.findByEmail('new@example.com')
  const invitee = new Agent(app)
  await invitee.signIn('new@example.com', 'correct horse battery')
  t.equal((await invitee.get(`/console/projects/${ws.project.slug}/opportunities`)).statusCode, 200)
  const role = await owner.submit('/console/members', `/console/members/${member!.id}/role`, { project: ws.project.id, role: 'viewer' })
  t.equal(role.statusCode, 303)
  t.match((await owner.get('/console/members')).body, /new@example.com is now viewer of demo-project/)
  t.equal((await invitee.get(`/console/projects/${ws.project.slug}/opportunities`)).statusCode, 403, 'the board is refused at once')
  const last = await owner.submit('/console/members', `/console/members/${ws.user.id}/role`, { project: ws.project.id, role: 'viewer' })
  t.equal(last.statusCode, 303)
  t.match((await owner.get('/console/members')).body, /last owner of project/)

  const confirm = await owner.get(`/console/members/${member!.id}/remove`)
  t.equal(confirm.statusCode, 200)
  t.match(confirm.body, /Remove new@example.com from the workspace\?/)
  t.equal((await invitee.get('/console')).statusCode, 200, 'asking removes nothing')
  const removed = await owner.post(`/console/members/${member!.id}/remove`, { _csrf: csrfOf(confirm.body) })
  t.equal(removed.statusCode, 303)
  t.match((await owner.get('/console/members')).body, /new@example.com is removed from the workspace: 2 sessions ended/, 'this browser and the one that accepted')
  const after = await invitee.get('/console')
  t.equal(after.statusCode, 302, "the member's session is over")
  t.match(after.headers.location, /^\/console\/login/)
  t.equal((await owner.get(`/console/members/${member!.id}/remove`)).statusCode, 404, 'gone from the list')
  t.equal((await owner.get('/console/members/usr_doesnotexist/remove')).statusCode, 404)

  const fromProject = await owner.submit('/console/members', `/console/members/${reviewer.user.id}/remove-from-project`, { project: ws.project.id })
  t.equal(fromProject.statusCode, 303)
  t.match((await owner.get('/console/members')).body, /rev@example.com is no longer a member of demo-project/)
})

t.test('a mail server that refuses: the link is still shown, and the page says the mail failed', async (t) => {
  mailbox.refuse(/refused@/)
  t.teardown(() => mailbox.refuse(null))
  await invite('refused@example.com')
  const shown = await owner.get('/console/members/invited')
  t.match(shown.body, /The mail could not be sent/)
  t.match(shown.body, /<code id="invitation-link">http:\/\/127\.0\.0\.1:3000\/console\/invite\/gdv_/)
})

t.test('the link is never logged: not by the invitation, its mail, a failed mail, nor its page', async (t) => {
  let logged = ''
  const stream = new Writable({ write(chunk, _encoding, done) { logged += String(chunk); done() } })
  const logging = await buildApp({
    config: testConfig(await testDatabase(t), { mail: { url: mailbox.url, from: 'growthdesk <growthdesk@example.com>' } }),
    logger: { ...(loggerOptions('debug') as object), stream },
    passwordHashCost: TEST_PASSWORD_HASH_COST,
  })
  t.teardown(() => logging.close())
  const w = await seedWorkspace(logging)
  const inviteOver = async (email: string) => {
    const res = await logging.inject({ method: 'POST', url: '/v1/tools/invite_member', headers: { authorization: `Bearer ${w.keys.service}` }, payload: { email, projects: [{ project: w.project.id, role: 'reviewer' }] } })
    t.equal(res.statusCode, 200)
    return res.json().result as { link: string; mailed: boolean }
  }
  const sent = await inviteOver('logged@example.com')
  t.equal(sent.mailed, true)
  await mailbox.next()
  mailbox.refuse(/refused-too@/)
  const failed = await inviteOver('refused-too@example.com')
  mailbox.refuse(null)
  t.equal(failed.mailed, false)
  const visitor = new Agent(logging)
  const page = await visitor.get(pathOf(sent.link))
  t.equal(page.statusCode, 200)
  const joined = await visitor.post(pathOf(sent.link), { _csrf: csrfOf(page.body), password: 'a long enough password', repeat: 'a long enough password' })
  t.equal(joined.statusCode, 303)
  t.match(logged, /mail sent/, 'the mail is logged')
  t.match(logged, /the invitation could not be mailed/, 'and the failed one')
  t.match(logged, /\/console\/invite\/\[redacted\]/, 'the page is logged with its token redacted')
  for (const link of [sent.link, failed.link]) t.notMatch(logged, link.slice(link.lastIndexOf('/') + 1), 'never the token')
})

t.test('the invitation form is rate-limited per address, like sign-in', async (t) => {
  const guesser = new Agent(app, '10.9.9.9')
  const csrf = csrfOf((await guesser.get('/console/login')).body)
  const statuses: number[] = []
  for (let i = 0; i < 11; i++) statuses.push((await guesser.post('/console/invite/gdv_000000000000000000000000000000000000AAAAAA', { _csrf: csrf, password: 'a long enough password', repeat: 'a long enough password' })).statusCode)
  t.same(statuses.slice(0, 10), Array(10).fill(404), 'ten attempts are answered')
  t.equal(statuses[10], 429, 'the eleventh within 5 minutes is refused')
  t.equal((await new Agent(app, '10.9.9.8').get('/console/invite/gdv_000000000000000000000000000000000000AAAAAA')).statusCode, 404, 'another address is not')
})
