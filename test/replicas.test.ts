// Read replicas with read-your-writes (db/replicas.ts, DATABASE_REPLICA_URLS) on a real primary
// and streaming replica (bin/pg-cluster.ts): which reads the replica serves, that a caller sees
// its own write at once with replay paused — on the instance that wrote and on another — while
// other callers read the replica, that a replica too far behind or stopped is skipped, and that
// without replicas none of it sends a statement.
import t from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import { Registry, defineOperation } from '../core/operations.ts'
import { Type } from '@sinclair/typebox'
import type { ReadChoice } from '../db/replicas.ts'
import { replicaReadFailed as isConnectionLost, parseLsn } from '../db/replicas.ts'
import { clusterUnavailable, createPrimary, createReplica, destroyCluster, type PgServer } from '../bin/pg-cluster.ts'
import { addMember, bearer, buildTestApp, expectStatus, seedWorkspace, testConfig, testDatabase, TEST_PASSWORD_HASH_COST } from './helpers/app.ts'
import type { Principal } from '../core/access.ts'
import type { Repositories } from '../db/repositories/index.ts'
import { Agent } from './console/helpers.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits (up to 30 s) until `done` holds, polling the app's replicas each round; throws with `what` if it never does. */
async function until(app: FastifyInstance, what: string, done: () => boolean | Promise<boolean>) {
  const deadline = Date.now() + 30_000
  for (;;) {
    await app.replicas!.poll()
    if (await done()) return
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}: ${JSON.stringify(app.replicas!.states(), (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`)
    await sleep(50)
  }
}

interface Instance {
  app: FastifyInstance
  /** Statements the primary's pool ran, and the replica's, since the last `reset()`. */
  primary: string[]
  replica: string[]
  reset(): void
}

t.test('read replicas on a real primary and streaming replica', { skip: clusterUnavailable() ?? false }, async (t) => {
  const primary: PgServer = await createPrimary()
  const servers = [primary]
  t.teardown(() => destroyCluster(...servers))
  await primary.psql('create database gd')
  const replica: PgServer = await createReplica(primary)
  servers.unshift(replica)
  const database = { kind: 'postgres' as const, url: primary.url('gd') }

  async function instance(maxLagMs = 10_000): Promise<Instance> {
    const seen: Instance = {
      app: undefined as never,
      primary: [],
      replica: [],
      reset: () => {
        seen.primary.length = 0
        seen.replica.length = 0
      },
    }
    seen.app = await buildApp({
      config: testConfig({ ...database, onQuery: (sql) => seen.primary.push(sql) }, { replicas: { urls: [replica.url('gd')], maxLagMs } }),
      logger: false,
      checkOutputs: true,
      passwordHashCost: TEST_PASSWORD_HASH_COST,
      onReplicaQuery: (sql) => seen.replica.push(sql),
    })
    t.teardown(() => seen.app.close())
    return seen
  }

  const a = await instance()
  const ws = await seedWorkspace(a.app)
  const project = ws.project.id
  const base = `/api/v1/mcp/projects/${project}`
  const writer = ws.keys.mcp
  // A reviewer who never writes: its reads go wherever the router likes.
  const other = (await addMember(a.app, project, 'reviewer')).keys.mcp
  const submitted = await a.app.inject({ method: 'POST', url: `${base}/opportunities`, headers: bearer(writer), payload: { contribution_type: 'potential_user_opportunity', key_information: 'Lead', reason: 'r', suggested_action: 'a' } })
  expectStatus(t, submitted, 201)
  const opp = submitted.json().event_id as string

  /** The primary's current WAL position, and a wait until the app's replica has replayed it. */
  const caughtUp = async (app: FastifyInstance) => {
    const lsn = parseLsn(await primary.psql('select pg_current_wal_lsn()'))
    await until(app, 'the replica has caught up', () => app.replicas!.states().every((s) => s.usable && s.replayLsn! >= lsn))
  }
  const listing = (app: FastifyInstance, key: string) => app.inject({ method: 'GET', url: `${base}/opportunities?page_size=100`, headers: bearer(key) })
  const statusOf = (res: { json(): { items: { event_id: string; status: string }[] } }) => res.json().items.find((o) => o.event_id === opp)?.status
  const ranListing = (statements: string[]) => statements.some((s) => /from "?opportunities"?/i.test(s) && /order by/i.test(s))

  await caughtUp(a.app)

  t.test('metrics reads and listings run on the replica (its pg_stat_activity shows them)', async (t) => {
    a.reset()
    const ops = await a.app.inject({ method: 'POST', url: '/v1/tools/get_daily_ops', headers: bearer(ws.keys.service), payload: { project } })
    expectStatus(t, ops, 200)
    const metrics = a.replica.filter((s) => /daily_event_counts/.test(s))
    t.ok(metrics.length > 0, 'get_daily_ops read daily_event_counts on the replica')
    t.notOk(a.primary.some((s) => /daily_event_counts/.test(s)), 'and not on the primary')
    t.notOk(a.primary.some((s) => /read_marks/.test(s) && /insert/i.test(s)), 'a read records no mark')
    // The replica's own view: a growthdesk-replica connection whose last statement was one of them.
    const activity = await replica.psql("select query from pg_stat_activity where application_name = 'growthdesk-replica' and datname = 'gd'", 'postgres')
    t.ok(metrics.some((m) => activity.includes(m.trim().slice(0, 60))), `pg_stat_activity on the replica shows the metrics read (${activity.length} chars)`)

    a.reset()
    const list = await a.app.inject({ method: 'POST', url: '/v1/tools/list_opportunities', headers: bearer(ws.keys.service), payload: { project } })
    expectStatus(t, list, 200)
    t.ok(ranListing(a.replica), 'list_opportunities ran on the replica')
    t.notOk(ranListing(a.primary), 'not on the primary')
  })

  t.test("the console's pages and the CSV export read through the router too", async (t) => {
    a.reset()
    const csv = await a.app.inject({ method: 'GET', url: `${base}/opportunities?format=csv`, headers: bearer(other) })
    expectStatus(t, csv, 200)
    t.match(csv.body, new RegExp(opp), 'the export lists the opportunity')
    t.ok(a.replica.some((s) => /from "?opportunities"?/i.test(s)), 'read on the replica')
    t.notOk(a.primary.some((s) => /from "?opportunities"?/i.test(s)), 'not on the primary')

    const agent = new Agent(a.app)
    await agent.signIn(ws.user.email, ws.user.password)
    a.reset()
    const page = await agent.get(`/console/projects/${ws.project.slug}/metrics`)
    expectStatus(t, page, 200)
    t.ok(a.replica.some((s) => /daily_event_counts/.test(s)), "the console's metrics page read the replica")
    t.notOk(a.primary.some((s) => /daily_event_counts/.test(s)), 'not the primary')
  })

  t.test('every read-only tool runs on a replica without writing (get_retention stays on the primary)', async (t) => {
    const owner = (await addMember(a.app, project, 'owner')).keys.service
    for (const op of a.app.registry.operations()) {
      if (op.tool === false || !op.annotations.readOnlyHint) continue
      const args = { ...(op.scope === 'project' ? { project } : {}), ...op.examples.valid[0].args }
      a.reset()
      const res = await a.app.inject({ method: 'POST', url: `/v1/tools/${op.name}`, headers: bearer(owner), payload: args })
      t.ok(res.statusCode < 500, `${op.name}: ${res.statusCode} ${res.statusCode >= 500 ? res.body : ''}`)
      if (op.name === 'get_retention') t.equal(a.replica.length, 0, 'get_retention read nothing on the replica (reads: primary)')
    }
  })

  t.test('with replay paused, a review followed at once by a listing shows the review', async (t) => {
    await replica.pauseReplay()
    t.teardown(() => replica.resumeReplay().catch(() => {}))
    a.reset()
    const review = await a.app.inject({ method: 'PATCH', url: `${base}/opportunities/${opp}/review`, headers: bearer(writer), payload: { status: 'reviewing' } })
    expectStatus(t, review, 200)
    t.ok(a.primary.some((s) => /insert into read_marks/i.test(s)), 'the write recorded a mark')
    t.ok(a.app.replicas!.states()[0]!.usable, 'the replica is still usable (paused, not yet too far behind)')
    a.reset()
    const mine = await listing(a.app, writer)
    t.equal(statusOf(mine), 'reviewing', 'the writer sees its review')
    t.ok(ranListing(a.primary), 'from the primary')
    t.notOk(ranListing(a.replica), 'not from the paused replica')

    a.reset()
    const theirs = await listing(a.app, other)
    t.equal(statusOf(theirs), 'pending', 'another credential reads the replica, which has not replayed the review')
    t.ok(ranListing(a.replica), 'from the replica')

    t.test('across instances: the same key on a second instance sees it too', async (t) => {
      const b = await instance()
      t.ok(b.app.replicas!.states()[0]!.usable, "the second instance's replica is usable")
      const again = await a.app.inject({ method: 'PATCH', url: `${base}/opportunities/${opp}/review`, headers: bearer(writer), payload: { status: 'contacted' } })
      expectStatus(t, again, 200)
      b.reset()
      const there = await listing(b.app, writer)
      t.equal(statusOf(there), 'contacted', 'the write on instance A is seen by the next read on instance B')
      t.ok(ranListing(b.primary), 'B read it from the primary')
      b.reset()
      t.equal(statusOf(await listing(b.app, other)), 'pending', 'the other key still reads the paused replica on B')
      t.ok(ranListing(b.replica), 'from the replica')

      // Replay resumed: once the replica has passed the mark, the writer reads it again.
      await replica.resumeReplay()
      await caughtUp(b.app)
      b.reset()
      t.equal(statusOf(await listing(b.app, writer)), 'contacted', 'the replica has the review now')
      t.ok(ranListing(b.replica), "and the writer's reads go back to it")
    })
  })

  t.test('a replica further behind than DATABASE_REPLICA_MAX_LAG_MS is skipped', async (t) => {
    const c = await instance(300)
    await caughtUp(c.app)
    await replica.pauseReplay()
    t.teardown(() => replica.resumeReplay().catch(() => {}))
    // WAL on the primary that the paused replica cannot replay.
    await primary.psql('create table lag_probe (x int); drop table lag_probe', 'gd')
    await until(c.app, 'the replica is too far behind', () => /behind/.test(c.app.replicas!.states()[0]!.reason ?? ''))
    c.reset()
    const res = await listing(c.app, other)
    t.equal(res.statusCode, 200)
    t.equal(statusOf(res), 'contacted', 'the read is current: the primary served it')
    t.ok(ranListing(c.primary), 'from the primary')
    t.equal(c.replica.length, 0, 'nothing on the replica')
    await replica.resumeReplay()
    await caughtUp(c.app)
    t.ok(c.app.replicas!.states()[0]!.usable, 'caught up again, it serves again')
  })

  t.test('a replica that does not answer is skipped until it does', async (t) => {
    // The probe's own backend on the replica, frozen: its query hangs (a server that hangs).
    const pid = Number(await replica.psql("select pid from pg_stat_activity where application_name = 'growthdesk-replica-probe' limit 1"))
    t.ok(pid > 0, 'the probe connection is there')
    process.kill(pid, 'SIGSTOP')
    t.teardown(() => {
      try {
        process.kill(pid, 'SIGCONT')
      } catch {}
    })
    await until(a.app, 'the hanging replica is unusable', () => /no answer within/.test(a.app.replicas!.states()[0]!.reason ?? ''))
    a.reset()
    const res = await listing(a.app, other)
    expectStatus(t, res, 200)
    t.ok(ranListing(a.primary), 'the primary served the read')
    process.kill(pid, 'SIGCONT')
    await until(a.app, 'the replica answers again', () => a.app.replicas!.states()[0]!.usable)
    t.pass('usable again once it answers')
  })

  t.test('a replica that is stopped is skipped, and reads still succeed', async (t) => {
    await replica.stop('fast')
    await until(a.app, 'the stopped replica is unusable', () => !a.app.replicas!.states()[0]!.usable)
    t.match(a.app.replicas!.states()[0]!.reason, /unreachable/)
    a.reset()
    const res = await listing(a.app, other)
    expectStatus(t, res, 200)
    t.ok(ranListing(a.primary), 'the primary served it')
    const ops = await a.app.inject({ method: 'POST', url: '/v1/tools/get_daily_ops', headers: bearer(ws.keys.service), payload: { project } })
    expectStatus(t, ops, 200)
  })
})

t.test('without replicas: no router, and not one statement more', async (t) => {
  const statements: string[] = []
  const database = await testDatabase(t)
  const app = await buildTestApp(t, { database: { ...database, onQuery: (sql) => statements.push(sql) } })
  t.equal(app.replicas, null)
  const ws = await seedWorkspace(app)
  const base = `/api/v1/mcp/projects/${ws.project.id}`
  statements.length = 0
  const res = await app.inject({ method: 'POST', url: `${base}/opportunities`, headers: bearer(ws.keys.mcp), payload: { contribution_type: 'potential_user_opportunity', key_information: 'Lead', reason: 'r', suggested_action: 'a' } })
  expectStatus(t, res, 201)
  const review = await app.inject({ method: 'PATCH', url: `${base}/opportunities/${res.json().event_id}/review`, headers: bearer(ws.keys.mcp), payload: { status: 'done' } })
  expectStatus(t, review, 200)
  t.equal((await app.inject({ method: 'GET', url: `${base}/opportunities`, headers: bearer(ws.keys.mcp) })).statusCode, 200)
  t.ok(statements.length > 0, 'the hook saw the calls')
  t.same(statements.filter((s) => /read_marks|wal_/i.test(s)), [], 'no mark written or read, no WAL position asked for')
})

t.test('DATABASE_REPLICA_URLS with the embedded database stops the start', async (t) => {
  // Embedded whatever DATABASE_URL the suite runs with (config.ts refuses the environment's; this is a configuration built in code).
  const database = { kind: 'pglite' as const, dataDir: undefined }
  await t.rejects(buildTestApp(t, { database, config: { replicas: { urls: ['postgres://127.0.0.1:1/x'], maxLagMs: 10_000 } } }), /need a PostgreSQL primary/)
})

t.test('the registry: where reads go, marks, and one retry on the primary', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const principal: Principal = { keyId: 'key_x', kind: 'service', userId: ws.user.id, email: ws.user.email, workspaceId: ws.workspace.id, projectId: null, readOnly: false }
  const log = app.log
  const lost = Object.assign(new Error('write CONNECTION_CLOSED'), { code: 'CONNECTION_CLOSED' })
  const sqlError = Object.assign(new Error('relation does not exist'), { code: '42P01' })
  let fail: Error | null = null
  const replicaRepos = new Proxy(app.repos, {
    get(target, prop) {
      if (prop !== 'workspaces') return target[prop as keyof Repositories]
      return {
        ...target.workspaces,
        async name() {
          if (fail) throw fail
          return '(the replica)'
        },
      }
    },
  }) as Repositories
  const events: string[] = []
  const primaryChoice: ReadChoice = { repos: app.repos, replica: null }
  const registry = new Registry({
    repos: app.repos,
    now: () => new Date(),
    reads: {
      primary: primaryChoice,
      async choose(reader) {
        events.push(`choose ${reader}`)
        return { repos: replicaRepos, replica: 'replica-1' }
      },
      async marked(reader) {
        events.push(`mark ${reader}`)
      },
    },
  })
  const where = async (ctx: { repos: Repositories }) => ((await ctx.repos.workspaces.name(ws.workspace.id)) === '(the replica)' ? 'replica' : 'primary')
  const common = { scope: 'workspace' as const, role: 'viewer' as const, input: Type.Object({}), output: Type.Object({ at: Type.String(), nested: Type.Optional(Type.String()) }), examples: { valid: [{ title: 't', args: {} }] as [{ title: string; args: Record<string, never> }], invalid: [] } }
  registry.add(defineOperation({ ...common, name: 'reader', title: 'r', description: 'r', annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true }, handler: async (_a, ctx) => ({ at: await where(ctx) }) }))
  registry.add(defineOperation({ ...common, name: 'pinned', title: 'p', description: 'p', annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true }, reads: 'primary', handler: async (_a, ctx) => ({ at: await where(ctx) }) }))
  registry.add(defineOperation({ ...common, name: 'writer', title: 'w', description: 'w', annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false }, handler: async (_a, ctx) => ({ at: await where(ctx), nested: ((await ctx.call('reader')) as { at: string }).at }) }))
  registry.add(defineOperation({ ...common, name: 'outer', title: 'o', description: 'o', annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true }, handler: async (_a, ctx) => ({ at: await where(ctx), nested: ((await ctx.call('reader')) as { at: string }).at }) }))
  const call = { principal, surface: 'tools-api' as const, log }
  const invoke = (name: string) => registry.invoke(registry.operation(name), {}, call)

  t.same(await invoke('reader'), { at: 'replica' }, 'a read-only operation reads where the router says')
  t.same(events, ['choose key:key_x'], 'for the credential, and marks nothing')
  events.length = 0
  t.same(await invoke('pinned'), { at: 'primary' }, "reads: 'primary' stays on the primary")
  t.same(events, [], 'without asking the router')
  t.same(await invoke('writer'), { at: 'primary', nested: 'primary' }, 'a write, and a read it calls, run on the primary')
  t.same(events, ['mark key:key_x'], 'then its caller is marked, once')
  events.length = 0
  t.same(await invoke('outer'), { at: 'replica', nested: 'replica' }, 'a nested read inherits its caller’s choice')
  t.same(events, ['choose key:key_x'], 'chosen once')
  events.length = 0
  t.same(await registry.invoke(registry.operation('writer'), {}, { ...call, principal: { ...principal, kind: 'session', keyId: 'console' } }), { at: 'primary', nested: 'primary' })
  t.same(events, [`mark user:${ws.user.id}`], 'a console session is marked as its user')

  fail = lost
  t.same(await invoke('reader'), { at: 'primary' }, 'a connection lost on the replica: retried once on the primary')
  fail = sqlError
  await t.rejects(invoke('reader'), /relation does not exist/, 'an error of the query itself is not retried')
  fail = null

  t.ok(isConnectionLost(lost) && isConnectionLost({ cause: { code: '57P01' } }) && isConnectionLost({ code: 'ECONNREFUSED' }) && isConnectionLost({ code: '40001' }))
  t.notOk(isConnectionLost(sqlError) || isConnectionLost({ code: '23505' }) || isConnectionLost(new Error('x')))
  t.equal(parseLsn('16/B374D848'), (0x16n << 32n) + 0xB374D848n)
  t.ok(parseLsn('1/0') > parseLsn('0/FFFFFFFF'), 'positions compare as numbers, not text')
  t.throws(() => registry.add({ ...registry.operation('reader'), name: 'bad_reads', reads: 'replicas' } as never), /reads "replicas": it must be 'replica' or 'primary'/)
})
