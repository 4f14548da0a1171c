// Credentials, roles and settings kept in memory (db/settings-cache.ts): every change drops them
// on every instance, whoever makes it — a revoked key is refused at once, a changed role or time
// zone is used at once — and what is kept is bounded in time and in number.
import t from 'tap'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import { SettingsCache } from '../db/settings-cache.ts'
import { addMember, bearer, buildTestApp, seedWorkspace, testConfig, testDatabase } from './helpers/app.ts'

const onPostgres = !!process.env.DATABASE_URL && process.env.DATABASE_URL !== 'memory://'

t.test('a lookup is kept until a change, the TTL, or a lost listener; a lookup that raced a change is not kept', async (t) => {
  let now = 0
  const cache = new SettingsCache({ ttlMs: 1000, maxEntries: 3, clock: () => now })
  const lookup = cache.lookup<string>()
  let loads = 0
  const load = async () => `v${++loads}`

  t.equal(await lookup.get('a', load), 'v1')
  t.equal(await lookup.get('a', load), 'v2', 'nothing is kept before the cache listens')
  cache.setListening(true)
  t.equal(await lookup.get('a', load), 'v3')
  t.equal(await lookup.get('a', load), 'v3', 'kept while listening')
  now = 999
  t.equal(await lookup.get('a', load), 'v3')
  now = 1000
  t.equal(await lookup.get('a', load), 'v4', 'gone after the TTL')
  cache.changed()
  t.equal(await lookup.get('a', load), 'v5', 'gone after a change')
  cache.setListening(false)
  t.equal(await lookup.get('a', load), 'v6', 'not used while the listener is down')
  cache.setListening(true)

  // A change while a lookup is under way: its value may predate the change, so it is not kept.
  let release!: () => void
  const slow = lookup.get('b', () => new Promise<string>((resolve) => (release = () => resolve('stale'))))
  cache.changed()
  release()
  t.equal(await slow, 'stale', 'the caller still gets what it read')
  t.equal(await lookup.get('b', load), 'v7', 'but it was not kept')

  t.equal(await lookup.get('missing', async () => undefined), undefined)
  t.equal(await lookup.get('missing', async () => 'found'), 'found', 'an absent value is never kept (a new key works at once)')

  for (const k of ['c', 'd', 'e', 'f']) await lookup.get(k, load)
  t.equal(lookup.size, 3, 'at most maxEntries, the oldest dropped first')

  const off = new SettingsCache({ ttlMs: 0 })
  off.setListening(true)
  t.equal(off.active, false, 'a TTL of 0 keeps nothing')
})

/** Resolves at the next change the cache hears of (a notification, or a write of this process). */
function nextChange(app: FastifyInstance): Promise<void> {
  const cache = app.settingsCache
  const before = cache.generation
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (cache.generation !== before) {
        clearInterval(timer)
        resolve()
      }
    }, 1)
  })
}

const call = (app: FastifyInstance, key: string, project: string) =>
  app.inject({ method: 'POST', url: '/v1/tools/get_project', headers: bearer(key), payload: { project } })

t.test('a change written outside the app (another instance, the CLI, psql) reaches it through the notification', async (t) => {
  // A long TTL: only the notification can make these changes seen.
  const app = await buildTestApp(t, { config: { settingsCacheTtlMs: 600_000 } })
  const boot = await seedWorkspace(app)
  const member = await addMember(app, boot.project.id, 'viewer')
  t.equal((await call(app, member.keys.service, boot.project.id)).statusCode, 200)
  t.equal((await call(app, member.keys.service, boot.project.slug)).statusCode, 200, 'kept: the key and the project by slug')
  t.ok(app.settingsCache.active, 'the cache is in use (it listens)')

  // The slug changes behind the app's back: the old one names nothing any more.
  let heard = nextChange(app)
  await app.db.execute(sql`update projects set slug = 'renamed-behind' where id = ${boot.project.id}`)
  await heard
  t.equal((await call(app, member.keys.service, boot.project.slug)).statusCode, 404, 'the old slug is not served from memory')
  t.equal((await call(app, member.keys.service, 'renamed-behind')).statusCode, 200)

  // The membership goes: the project is no longer reached.
  heard = nextChange(app)
  await app.db.execute(sql`delete from memberships where user_id = ${member.user.id}`)
  await heard
  t.equal((await call(app, member.keys.service, boot.project.id)).statusCode, 404, 'a removed member is refused')

  // The key is revoked: refused.
  t.equal((await call(app, boot.keys.service, boot.project.id)).statusCode, 200)
  heard = nextChange(app)
  const revoked = Date.now()
  await app.db.execute(sql`update api_keys set revoked_at = now() where kind = 'service' and user_id = ${boot.user.id}`)
  await heard
  const res = await call(app, boot.keys.service, boot.project.id)
  t.equal(res.statusCode, 401, 'a key revoked elsewhere is refused')
  t.comment(`refused ${Date.now() - revoked} ms after the revoking statement was sent`)
})

t.test('a change made through the app is seen by its very next request, without waiting for the notification', async (t) => {
  const app = await buildTestApp(t, { config: { settingsCacheTtlMs: 600_000 } })
  const boot = await seedWorkspace(app)
  const { key, row } = await app.repos.apiKeys.create({ workspaceId: boot.workspace.id, userId: boot.user.id, kind: 'service', name: 'second' })
  t.equal((await call(app, key, boot.project.id)).statusCode, 200)
  t.equal((await call(app, key, boot.project.id)).statusCode, 200)
  t.ok(await app.repos.apiKeys.revoke(row.id, new Date()))
  t.equal((await call(app, key, boot.project.id)).statusCode, 401, 'refused by the next request')

  // A time-zone change is used by the next call at once (the rollups were rebuilt with it).
  await call(app, boot.keys.service, boot.project.id)
  const update = await app.inject({ method: 'PATCH', url: `/v1/projects/${boot.project.id}`, headers: bearer(boot.keys.service), payload: { timezone: 'Asia/Tokyo' } })
  t.equal(update.statusCode, 200, update.body)
  const ops = await app.inject({ method: 'POST', url: '/v1/tools/get_daily_ops', headers: bearer(boot.keys.service), payload: { project: boot.project.id } })
  t.equal(ops.json().result.timezone, 'Asia/Tokyo')

  // A tool disabled for the workspace is gone from the next call.
  const disable = await app.inject({ method: 'PUT', url: '/v1/workspace/tools/get_daily_ops', headers: bearer(boot.keys.service), payload: { enabled: false } })
  t.equal(disable.statusCode, 200, disable.body)
  const gone = await app.inject({ method: 'POST', url: '/v1/tools/get_daily_ops', headers: bearer(boot.keys.service), payload: { project: boot.project.id } })
  t.equal(gone.statusCode, 404, gone.body)
})

t.test('two instances on one PostgreSQL database: a key revoked through one is refused by the other', { skip: !onPostgres && 'PostgreSQL only (an embedded database has one process)' }, async (t) => {
  const database = await testDatabase(t)
  const a = await buildApp({ config: testConfig(database, { settingsCacheTtlMs: 600_000 }), logger: false })
  t.teardown(() => a.close())
  const b = await buildApp({ config: testConfig(database, { settingsCacheTtlMs: 600_000 }), logger: false })
  t.teardown(() => b.close())
  const boot = await seedWorkspace(a)
  const { key, row } = await a.repos.apiKeys.create({ workspaceId: boot.workspace.id, userId: boot.user.id, kind: 'service', name: 'shared' })
  t.equal((await call(b, key, boot.project.id)).statusCode, 200, 'B knows the key (and keeps it)')
  t.equal((await call(b, key, boot.project.id)).statusCode, 200)

  const heard = nextChange(b)
  const started = performance.now()
  t.ok(await a.repos.apiKeys.revoke(row.id, new Date()), 'A revokes it')
  await heard
  const ms = performance.now() - started
  t.equal((await call(b, key, boot.project.id)).statusCode, 401, 'B refuses it once the notification has come')
  t.comment(`B heard of the revocation ${ms.toFixed(1)} ms after A was asked to revoke`)

  // B's listener loses its connection: B keeps nothing until it listens again.
  t.equal((await call(b, boot.keys.service, boot.project.id)).statusCode, 200)
  t.ok(b.settingsCache.active)
  await b.db.execute(sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'growthdesk-listen' and datname = current_database()`)
  const deadline = Date.now() + 10_000
  while (b.settingsCache.active && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5))
  t.notOk(b.settingsCache.active, 'nothing is kept while the listener is down')
  while (!b.settingsCache.active && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  t.ok(b.settingsCache.active, 'and it listens again (a second later)')
  t.equal((await call(b, boot.keys.service, boot.project.id)).statusCode, 200)
})
