// How many SQL statements one warm tool call over REST sends (db/client.ts's `onQuery`), on the
// backend the test runs on. Printed for every call; a tool listed in EXPECTED must send exactly
// that many, the others at least one (issue 14 aims at one statement for these calls).
import t from 'tap'
import { buildApp } from '../../app.ts'
import { bearer, expectStatus, fixedClock, ingestEvents, recordKeyUses, seedWorkspace, TEST_PASSWORD_HASH_COST, testConfig, testDatabase } from '../helpers/app.ts'

/** Statements per warm call, once a tool has a fixed budget: e.g. `get_daily_ops: 1`. */
const EXPECTED: Partial<Record<string, number>> = { get_daily_ops: 1, list_opportunities: 1, get_overview: 1 }

t.test('statements per warm tool call', async (t) => {
  const statements: string[] = []
  let recording = false
  const database = await testDatabase(t)
  // A pinned clock: the key's last use is written at its first use and not again (at most once a
  // minute), so never during a counted call.
  const started = new Date()
  const app = await buildApp({
    config: testConfig({ ...database, onQuery: (sql) => recording && statements.push(sql) }),
    logger: false,
    checkOutputs: true,
    now: fixedClock(started.toISOString()),
    passwordHashCost: TEST_PASSWORD_HASH_COST,
  })
  t.teardown(() => app.close())
  // What a tool call leaves running after it has answered: the write of its key's last use
  // (plugins/auth.ts does not await it). Each one started is kept, to be awaited.
  const writes = recordKeyUses(t, app)
  const settled = () => Promise.allSettled(writes.splice(0))
  const ws = await seedWorkspace(app)
  const project = ws.project.id
  const call = (name: string, payload: object) => app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(ws.keys.service), payload })

  // Data for both calls to find: events on two days, opportunities of two types, one reviewed.
  const day = 86_400_000
  await ingestEvents(app, ws.keys.ingest, [
    ['signup', 'u1', new Date(started.getTime() - day).toISOString()],
    ['daily_use', 'u1', new Date(started.getTime() - day).toISOString()],
    ['daily_use', 'u2', started.toISOString()],
  ])
  const ids: string[] = []
  for (let i = 0; i < 6; i++) {
    const res = await call('submit_opportunity', {
      project,
      contribution_type: i % 2 === 0 ? 'partnership' : 'potential_user_opportunity',
      key_information: `lead ${i}`,
      reason: 'inbound',
      suggested_action: 'reply',
    })
    expectStatus(t, res, 200)
    ids.push(res.json().result.event_id)
  }
  expectStatus(t, await call('review_opportunity', { project, event_id: ids[0], status: 'reviewing' }), 200)
  // The alerts' evaluation these changes scheduled (plugins/alerts.ts) runs after their answers: done before counting.
  await app.alerts.settled()

  const calls: [string, object, (result: Record<string, any>) => void][] = [
    ['get_daily_ops', { project, window: '30d' }, (r) => t.equal(r.days.length, 30)],
    ['list_opportunities', { project, status: 'pending', type: 'partnership' }, (r) => t.equal(r.total, 2)],
    // A text search counts its matches beside the rows: still one statement.
    ['list_opportunities', { project, q: 'LEAD', page_size: 4 }, (r) => t.same([r.total, r.items.length], [6, 4])],
  ]
  for (const [name, args, check] of calls) {
    // Warm: the first call fills what is cached per process; a key's last-use write is done
    // before the call that is counted.
    expectStatus(t, await call(name, args), 200)
    await settled()
    statements.length = 0
    recording = true
    const res = await call(name, args)
    t.equal(writes.length, 0, `${name}: the counted call starts no write of its own after answering`)
    await settled()
    recording = false
    expectStatus(t, res, 200)
    check(res.json().result)
    t.comment(`${name}: ${statements.length} statement(s)\n${statements.map((s) => `  ${s.replace(/\s+/g, ' ').slice(0, 160)}`).join('\n')}`)
    const expected = EXPECTED[name]
    if (expected === undefined) t.ok(Number.isInteger(statements.length) && statements.length >= 1, `${name} sends at least one statement (${statements.length})`)
    else t.equal(statements.length, expected, `${name} sends ${expected} statement(s)`)
  }
})
