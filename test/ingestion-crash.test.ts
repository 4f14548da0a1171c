// Exact rollups through a kill -9 in the middle of concurrent ingestion (issue 31). The server as
// `npm start` runs it, on a database of its own (the embedded one in a temporary DATA_DIR, or a
// fresh PostgreSQL database when DATABASE_URL is set), takes batches from four clients at once —
// a quarter of their events resends of earlier ones, so batches race on the same uuids, users and
// counter rows — and is killed with SIGKILL while batches are in flight. Started again on the same
// data, it takes every batch whose answer was lost again (as a client retries), and a few that
// were answered. Then:
//  - every event sent is stored exactly once: nothing acknowledged is lost, nothing doubled;
//  - a batch answered before the kill is all duplicates when sent again: it was all or nothing;
//  - get_daily_ops answers what the client's own count of its events says;
//  - with the server stopped, every rollup equals a naive count of the raw events
//    (test/helpers/ingestion.ts: counters, unique users, first sightings, last active days and
//    their tallies, the event total, retention's cells once its queue is folded).
import t from 'tap'
import { randomUUID } from 'node:crypto'
import { openDatabase, rowsOf } from '../db/client.ts'
import { sql } from '../db/orm.ts'
import { testDatabase } from './helpers/app.ts'
import { compareRollups } from './helpers/ingestion.ts'
import { serverEnv, startServer } from './helpers/server-process.ts'

const DEADLINE_MS = 150_000
const CLIENTS = 4
/** Batches answered before the kill. */
const BEFORE_KILL = 24

interface Ev { uuid: string; event: string; distinct_id: string; timestamp: string }
type Outcome = { status: number; body: { accepted?: number; duplicates?: number } } | { lost: unknown }

t.test('rollups stay exact through a kill -9 in the middle of concurrent batches', async (t) => {
  const deadline = Date.now() + DEADLINE_MS
  const database = await testDatabase(t, { empty: true })
  const env = serverEnv(t, database, 'ingest-crash')

  const first = startServer(env)
  t.teardown(() => first.child.kill('SIGKILL'))
  const url1 = await first.url(deadline)
  const ingestKey = /ingest:\s+(gdi_\S+)/.exec(first.output())?.[1]
  const serviceKey = /service:\s+(gds_\S+)/.exec(first.output())?.[1]
  const project = /project:\s+\S+ \((prj_\w+)\)/.exec(first.output())?.[1]
  if (!ingestKey || !serviceKey || !project) throw new Error(`the first start printed no keys or project:\n${first.output()}`)

  const post = async (base: string, events: Ev[]): Promise<Outcome> => {
    try {
      const res = await fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ingestKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
      })
      return { status: res.status, body: (await res.json()) as { accepted?: number; duplicates?: number } }
    } catch (err) {
      return { lost: err } // the connection died with the server: stored or not, the client can't know
    }
  }

  // The same cases on every run: a small deterministic generator. Events of the last 60 hours
  // (three days, so the restart's fold has finished days to fold), 5 names, 30 users (skewed).
  let seed = 31
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648)
  const names = ['daily_use', 'daily_use', 'daily_use', 'signup', 'page_view']
  const now = Date.now()
  const sent: Ev[] = []
  const batchOf = (n: number): Ev[] => Array.from({ length: n }, () => {
    if (sent.length && rand() < 0.25) return sent[Math.floor(rand() * sent.length)]!
    const e = {
      uuid: randomUUID(),
      event: names[Math.floor(rand() * names.length)]!,
      distinct_id: `u${Math.floor(rand() * rand() * 30)}`,
      timestamp: new Date(now - Math.floor(rand() * 60 * 3600_000)).toISOString(),
    }
    sent.push(e)
    return e
  })

  // Four clients, each sending its next batch as soon as the last is answered, until the kill.
  const answered: Ev[][] = []
  const lost: Ev[][] = []
  let killed = false
  let inFlightAtKill = -1
  let inFlight = 0
  const client = async () => {
    while (!killed) {
      const batch = batchOf(1 + Math.floor(rand() * 40))
      inFlight++
      const outcome = await post(url1, batch)
      inFlight--
      if ('lost' in outcome) {
        lost.push(batch)
        continue
      }
      if (outcome.status !== 200) throw new Error(`a batch before the kill: ${outcome.status} ${JSON.stringify(outcome.body)}`)
      answered.push(batch)
      if (answered.length >= BEFORE_KILL && !killed) {
        // kill -9 with the other clients' batches in flight: no shutdown hook runs.
        killed = true
        inFlightAtKill = inFlight
        process.kill(first.child.pid!, 'SIGKILL')
      }
    }
  }
  await Promise.all(Array.from({ length: CLIENTS }, client))
  await first.exited
  t.equal(first.child.signalCode, 'SIGKILL', 'the first process was killed')
  t.ok(inFlightAtKill >= 1, `batches were in flight at the kill (${inFlightAtKill})`)
  // Usually one to three lost their answer (an in-flight batch may have been answered just before).
  t.comment(`${lost.length} batch(es) lost their answer`)

  // The same data, started again: what a client does next is send its unanswered batches again.
  const second = startServer(env)
  t.teardown(() => second.child.kill('SIGKILL'))
  const url2 = await second.url(deadline)
  t.notMatch(second.output(), /first start/, 'the restart found the data of the first process')
  for (const batch of lost) {
    const outcome = await post(url2, batch)
    t.equal('status' in outcome && outcome.status, 200, 'an unanswered batch, sent again')
  }
  // A batch answered before the kill was stored whole: sent again, every event is a duplicate.
  for (const batch of answered.slice(-3)) {
    const outcome = await post(url2, batch)
    t.same('status' in outcome && outcome.body, { accepted: 0, duplicates: batch.length }, 'an answered batch, sent again: all duplicates')
  }

  // get_daily_ops against the client's own count of what it sent (each uuid once).
  const unique = [...new Map(sent.map((e) => [e.uuid, e])).values()]
  const res = await fetch(`${url2}/v1/tools/get_daily_ops`, {
    method: 'POST',
    headers: { authorization: `Bearer ${serviceKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ project }),
  })
  t.equal(res.status, 200, 'get_daily_ops')
  const ops = ((await res.json()) as { result: { timezone: string; days: { date: string; registered_users: number; signup_events: number; daily_use_users: number; daily_use_events: number }[] } }).result
  const dayOf = new Intl.DateTimeFormat('en-CA', { timeZone: ops.timezone, year: 'numeric', month: '2-digit', day: '2-digit' })
  const expected = ops.days.map(({ date }) => {
    const of = (name: string) => unique.filter((e) => e.event === name && dayOf.format(new Date(e.timestamp)) === date)
    return {
      date,
      registered_users: new Set(of('signup').map((e) => e.distinct_id)).size,
      signup_events: of('signup').length,
      daily_use_users: new Set(of('daily_use').map((e) => e.distinct_id)).size,
      daily_use_events: of('daily_use').length,
    }
  })
  t.same(ops.days.map(({ date, registered_users, signup_events, daily_use_users, daily_use_events }) => ({ date, registered_users, signup_events, daily_use_users, daily_use_events })), expected,
    'get_daily_ops: the events and users of each day, as the client counts them')
  t.ok(expected.reduce((n, d) => n + d.daily_use_events, 0) > 100, 'with a few hundred events to count')

  second.child.kill('SIGTERM')
  await second.exited
  t.equal(second.child.exitCode, 0, 'the second process stopped cleanly')

  // The database itself, with no server on it.
  const opened = await openDatabase(database.kind === 'postgres' ? database : { kind: 'pglite', dataDir: env.DATA_DIR! })
  t.teardown(() => opened.close())
  const stored = rowsOf<{ uuid: string; n: number }>(await opened.db.execute(sql`select uuid::text as uuid, count(*)::int as n from events where project_id = ${project} group by 1`))
  t.equal(stored.filter((r) => r.n !== 1).length, 0, 'no event stored twice')
  t.same(stored.map((r) => r.uuid).sort(), unique.map((e) => e.uuid).sort(), `every event sent stored (${unique.length}), none other`)
  t.equal(await compareRollups(t, 'after the kill and the restart', opened.db, project), unique.length, 'the events the rollups count are those sent')
})
