// Profile → Sessions over HTTP: the user's signed-in sessions (signed in, last seen, address,
// browser, this one marked), "Sign out" of one other session and "Sign out everywhere else";
// nobody else's sessions are listed or reachable. And the browser names made from User-Agents.
import t from 'tap'
import { createHash } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { addMember, buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { Agent, csrfOf } from './helpers.ts'
import { sessions } from '../../db/schema.ts'
import { browserLabel } from '../../routes/console/user-agent.ts'

const UA = {
  chromeMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  firefoxWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  safariIphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  edgeWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
  chromeAndroid: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  headless: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
}
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ')
/** The rows of the Sessions table: [ref, the row's words]. */
const rowsOf = (html: string) => [...html.matchAll(/<tr data-session="([0-9a-f]{16})"[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => ({ ref: m[1]!, words: text(m[2]!) }))

t.test('browser names from User-Agents', async (t) => {
  t.equal(browserLabel(UA.chromeMac), 'Chrome on macOS')
  t.equal(browserLabel(UA.firefoxWindows), 'Firefox on Windows')
  t.equal(browserLabel(UA.safariIphone), 'Safari on iOS')
  t.equal(browserLabel(UA.edgeWindows), 'Edge on Windows')
  t.equal(browserLabel(UA.chromeAndroid), 'Chrome on Android')
  t.equal(browserLabel(UA.headless), 'Chrome on Linux')
  t.equal(browserLabel('Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36'), 'Chrome on ChromeOS')
  t.equal(browserLabel('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/115.0.0.0'), 'Opera on Windows')
  t.equal(browserLabel('curl/8.5.0'), 'curl')
  t.equal(browserLabel(''), 'Unknown browser')
  t.equal(browserLabel(undefined), 'Unknown browser')
  t.equal(browserLabel('SomeBot/1.0'), 'Another client')
  t.equal(browserLabel('Mozilla/5.0 (Windows NT 10.0)'), 'A browser on Windows')
})

t.test('Profile → Sessions', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const member = await addMember(app, ws.project.id, 'viewer')
  const mac = new Agent(app, '203.0.113.7', UA.chromeMac)
  const windows = new Agent(app, '198.51.100.20', UA.firefoxWindows)
  const phone = new Agent(app, '192.0.2.33', UA.safariIphone)
  for (const agent of [mac, windows, phone]) await agent.signIn(ws.user.email, ws.user.password)
  const stranger = new Agent(app, '192.0.2.99', UA.edgeWindows)
  await stranger.signIn(member.user.email, member.user.password)
  // A session from before sessions kept where they came from: no signedIn in its data.
  await app.repos.sessions.set(createHash('sha256').update('a session from before').digest('hex'), { cookie: {}, userId: ws.user.id }, new Date(Date.now() + 3_600_000), ws.user.id)

  const page = await mac.get('/console/profile')
  t.equal(page.statusCode, 200)
  t.match(page.body, /<h2 id="sessions">Sessions<\/h2>/)
  const rows = rowsOf(page.body)
  t.equal(rows.length, 4, "the user's four sessions, nobody else's")
  t.match(rows[0]!.words, /Chrome on macOS This browser 203\.0\.113\.7 just now now Sign out/, 'this browser first, marked, with its address')
  t.ok(rows.some((r) => /Firefox on Windows 198\.51\.100\.20 just now just now Sign out/.test(r.words)), 'another browser: name, address, signed in, last seen')
  t.ok(rows.some((r) => /Safari on iOS 192\.0\.2\.33/.test(r.words)))
  t.ok(rows.some((r) => /unknown unknown/.test(r.words)), "a session from before says 'unknown'")
  t.notOk(page.body.includes('192.0.2.99'), "another user's session is not listed")
  t.match(page.body, /<time datetime="[^"]+Z" title="[^"]+ UTC">just now<\/time>/, 'times are <time> elements')
  t.match(page.body, /<form method="post" action="\/console\/logout"/, "this browser's Sign out is the usual one")
  t.match(page.body, /Sign out everywhere else/)
  const stored = (await app.db.select({ sid: sessions.sid }).from(sessions)).map((r) => r.sid)
  for (const row of rows) t.equal(stored.filter((sid) => sid.startsWith(row.ref)).length, 1, `${row.ref} names one stored session`)
  t.notOk([...mac.cookies.values()].some((cookie) => rows.some((r) => cookie.includes(r.ref))), 'a reference is no part of any cookie')

  // Sign out the Windows session.
  const windowsRef = rows.find((r) => r.words.includes('Firefox'))!.ref
  const out = await mac.post(`/console/profile/sessions/${windowsRef}/sign-out`, { _csrf: csrfOf(page.body) })
  t.equal(out.statusCode, 303)
  t.equal(out.headers.location, '/console/profile')
  const after = await mac.get('/console/profile')
  t.match(text(after.body), /Signed out: Firefox on Windows \(198\.51\.100\.20\)\./)
  t.equal(rowsOf(after.body).length, 3)
  t.equal((await windows.get('/console')).statusCode, 302, 'that browser is signed out')
  t.equal((await phone.get('/console')).statusCode, 200, 'the others are not')

  // Another user's session, a made-up one, nonsense: refused, nothing ends.
  const strangerRef = (await app.db.select({ sid: sessions.sid }).from(sessions).where(eq(sessions.userId, member.user.id)))[0]!.sid.slice(0, 16)
  for (const ref of [strangerRef, 'ffffffffffffffff', 'not-a-ref']) {
    const res = await mac.post(`/console/profile/sessions/${ref}/sign-out`, { _csrf: csrfOf(after.body) })
    t.equal(res.statusCode, 303, `${ref}: refused with a flash`)
    t.match(text((await mac.get('/console/profile')).body), /That session is not signed in any more\./)
  }
  t.equal((await stranger.get('/console')).statusCode, 200, "another user's session is out of reach")
  t.equal((await mac.post(`/console/profile/sessions/${rowsOf(after.body)[1]!.ref}/sign-out`, {})).statusCode, 403, 'without the CSRF token: refused')

  // Everywhere else: the phone and the legacy session end; this one stays.
  const again = await mac.get('/console/profile')
  const all = await mac.post('/console/profile/sessions/sign-out-others', { _csrf: csrfOf(again.body) })
  t.equal(all.statusCode, 303)
  const alone = await mac.get('/console/profile')
  t.match(text(alone.body), /Signed out everywhere else: 2 other sessions\./)
  t.equal(rowsOf(alone.body).length, 1, 'only this browser is left')
  t.notMatch(alone.body, /Sign out everywhere else/, 'and the button goes')
  t.equal((await phone.get('/console')).statusCode, 302)
  t.equal((await stranger.get('/console')).statusCode, 200, "another user's sessions are untouched")

  // "Sign out" of this browser's own row is signing out.
  const own = rowsOf(alone.body)[0]!.ref
  const self = await mac.post(`/console/profile/sessions/${own}/sign-out`, { _csrf: csrfOf(alone.body) })
  t.equal(self.headers.location, '/console/login')
  t.equal((await mac.get('/console')).statusCode, 302)
})
