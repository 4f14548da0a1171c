// The console's session store keeps no expired rows: a purge deletes them when the app starts
// and every ten minutes after (the schedule itself is not timed here; the purge is called
// directly with a pinned clock). A session ended while a request of it was in flight stays
// ended when that request saves it.
import t from 'tap'
import { eq } from 'drizzle-orm'
import { buildTestApp, seedWorkspace } from '../helpers/app.ts'
import { sessions } from '../../db/schema.ts'
import { purgeExpiredSessions, sessionStore, stored } from '../../routes/console/session.ts'

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

t.test('a session ended while a request of it was in flight is not brought back when that request saves it', async (t) => {
  const app = await buildTestApp(t)
  await app.ready()
  const ws = await seedWorkspace(app)
  const store = sessionStore(app)
  const read = (sid: string) => new Promise<Record<string, unknown> | undefined>((resolve, reject) => store.get(sid, (err, s) => (err ? reject(err) : resolve(s as never))))
  const save = (sid: string, data: Record<string, unknown>) => new Promise<void>((resolve, reject) => store.set(sid, { ...data, cookie: { expires: new Date(Date.now() + 3_600_000) } } as never, (err) => (err ? reject(err) : resolve())))
  const row = async (sid: string) => (await app.db.select().from(sessions).where(eq(sessions.sid, stored(sid))))[0]

  // A new session (a sign-in's) is inserted.
  await save('in-flight', { userId: ws.user.id })
  t.ok(await row('in-flight'), 'a new session is stored')
  // A request reads it…
  const data = (await read('in-flight'))!
  t.equal(data.userId, ws.user.id)
  // …it is signed out from another browser (or by a password change)…
  t.equal(await app.repos.sessions.destroyForUser(ws.user.id), 1)
  // …and the request ends, saving it.
  await save('in-flight', data)
  t.equal(await row('in-flight'), undefined, 'the session stays ended')

  // A session still there is saved as before, and the store's mark is not kept in its data.
  await save('alive', { userId: ws.user.id, flash: { kind: 'ok', text: 'hi' } })
  const alive = (await read('alive'))!
  await save('alive', { ...alive, flash: undefined })
  const kept = (await row('alive'))!.data as Record<string, unknown>
  t.equal(kept.userId, ws.user.id, 'a session still there is saved')
  t.notOk('flash' in kept, 'with its change')
  t.notOk('_stored' in kept, "and without the store's mark")
})
