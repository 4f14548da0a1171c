// The console's session store keeps no expired rows: a purge deletes them when the app starts
// and every ten minutes after (the schedule itself is not timed here; the purge is called
// directly with a pinned clock).
import t from 'tap'
import { eq } from 'drizzle-orm'
import { buildTestApp } from '../helpers/app.ts'
import { sessions } from '../../db/schema.ts'
import { purgeExpiredSessions } from '../../routes/console/session.ts'

t.test('expired console sessions are purged', async (t) => {
  const app = await buildTestApp(t)
  await app.ready()
  const now = new Date('2030-01-01T12:00:00.000Z')
  const exists = async (sid: string) => (await app.db.select({ sid: sessions.sid }).from(sessions).where(eq(sessions.sid, sid))).length === 1

  await app.repos.sessions.set('expired-session', { cookie: {} }, new Date(now.getTime() - 1000))
  await app.repos.sessions.set('live-session', { cookie: {} }, new Date(now.getTime() + 3600_000))
  t.ok(await exists('expired-session'), 'the expired row is stored')

  t.equal(await purgeExpiredSessions(app, now), 1, 'one row purged')
  t.notOk(await exists('expired-session'), 'the expired row is deleted')
  t.ok(await exists('live-session'), 'a live session stays')
  t.same(await app.repos.sessions.get('live-session', now), { cookie: {} }, 'and is still read')
})

t.test('the app purges expired sessions when it starts', async (t) => {
  const app = await buildTestApp(t)
  // Before ready: the rows an earlier run left behind, long expired.
  await app.repos.sessions.set('left-behind', { cookie: {} }, new Date('2000-01-01T00:00:00.000Z'))
  await app.ready()
  const rows = await app.db.select({ sid: sessions.sid }).from(sessions).where(eq(sessions.sid, 'left-behind'))
  t.same(rows, [], 'deleted by the purge at start')
})
