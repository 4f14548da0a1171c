// One key-issuing policy (the create_key operation) behind the console and the CLI: a key
// never mints keys, an ingest key needs a project where the caller may write, and a narrowed
// key works only where and how it was narrowed.
import t from 'tap'
import { addMember, bearer, buildTestApp, seedWorkspace } from './helpers/app.ts'
import { sessionPrincipal, operatorPrincipal, type Principal } from '../core/access.ts'
import { AdminError, createKey, revokeKey } from '../bin/admin.ts'

t.test('create_key', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const viewer = await addMember(app, ws.project.id, 'viewer')
  const op = app.registry.operation('create_key')
  const invoke = (principal: Principal, args: unknown) => app.registry.invoke(op, args, { principal, surface: 'console', log: app.log })
  const user = (await app.repos.users.findByEmail(viewer.user.email))!

  t.test('is not a tool, and a key cannot mint keys', async (t) => {
    t.notOk(app.registry.names().includes('create_key'))
    const asKey: Principal = { ...sessionPrincipal(user), kind: 'service', keyId: 'key_x' }
    await t.rejects(invoke(asKey, { kind: 'service' }), { statusCode: 403 } as never)
  })

  t.test('an ingest key needs a project where the caller is reviewer or owner', async (t) => {
    await t.rejects(invoke(sessionPrincipal(user), { kind: 'ingest' }), { statusCode: 400, details: [{ path: 'project' }] } as never)
    await t.rejects(invoke(sessionPrincipal(user), { kind: 'ingest', project: ws.project.id }), { statusCode: 403, message: /reviewer or owner/ })
    await t.rejects(createKey(app, { email: viewer.user.email, kind: 'ingest', project: ws.project.slug }), AdminError, 'the CLI applies the same policy')
    const ok = await createKey(app, { email: ws.user.email, kind: 'ingest', project: ws.project.slug })
    t.equal(ok.project, ws.project.id)
  })

  t.test('revoke_key: only your own keys, never with a key; the CLI acts for the owner', async (t) => {
    const revoke = app.registry.operation('revoke_key')
    const ownerKey = await createKey(app, { email: ws.user.email, kind: 'service', name: 'to revoke' })
    await t.rejects(app.registry.invoke(revoke, { id: ownerKey.id }, { principal: sessionPrincipal(user), surface: 'console', log: app.log }), { statusCode: 404 } as never, "another user's key is not found")
    await t.rejects(app.registry.invoke(revoke, { id: ownerKey.id }, { principal: { ...sessionPrincipal(user), kind: 'service', keyId: 'key_x' }, surface: 'console', log: app.log }), { statusCode: 403 } as never)
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(ownerKey.key) })).statusCode, 200, 'still works')
    t.same(await revokeKey(app, ownerKey.id), { id: ownerKey.id, revoked: true })
    t.equal((await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(ownerKey.key) })).statusCode, 401, 'revoked')
    await t.rejects(revokeKey(app, 'key_doesnotexist'), AdminError)
  })

  t.test('a project-scoped read-only key works only there and only for reads', async (t) => {
    const other = await app.inject({ method: 'POST', url: '/v1/projects', headers: bearer(ws.keys.service), payload: { slug: 'second', name: 'Second' } })
    t.equal(other.statusCode, 201)
    const made = await invoke(operatorPrincipal((await app.repos.users.findByEmail(ws.user.email))!), { kind: 'service', project: ws.project.slug, read_only: true, name: 'ro' }) as { key: string; read_only: boolean; project: string }
    t.equal(made.read_only, true)
    t.equal(made.project, ws.project.id)
    const read = await app.inject({ method: 'POST', url: '/v1/tools/get_project', headers: bearer(made.key), payload: { project: ws.project.slug } })
    t.equal(read.statusCode, 200, 'reads its project')
    const write = await app.inject({ method: 'POST', url: '/v1/tools/add_memory', headers: bearer(made.key), payload: { project: ws.project.slug, content: 'x' } })
    t.equal(write.statusCode, 403, 'cannot write')
    const elsewhere = await app.inject({ method: 'POST', url: '/v1/tools/get_project', headers: bearer(made.key), payload: { project: other.json().id } })
    t.equal(elsewhere.statusCode, 404, 'does not see another project')
  })
})
