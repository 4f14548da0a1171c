// Resilience of one instance (issue 30, item 4): a connection the database dropped is never a
// 500 — a read is run once more, a write is answered 503 `unavailable` with Retry-After — and the
// embedded database's full disk turns /health to 503 with the reason until it can write again.
//
// The dropped connection is made deterministic with a lock: a session of the test holds a lock
// on `memories`, so the app's statement waits on it; the test terminates that waiting backend
// (pg_terminate_backend, as an administrator or a failover does), then lets the lock go.
import t from 'tap'
import fs from 'node:fs'
import type { Test } from 'tap'
import { installPostgresGuard, postgresGuard } from '../db/postgres-guard.ts'
import { isConnectionLost, isDiskFull, unavailableReason } from '../db/unavailable.ts'
import { errorResponse } from '../core/errors.ts'

// As the server does (db/client.ts): the guard before postgres.js first loads, which the helpers
// import (a static import would load it before any line here runs).
installPostgresGuard()
const { default: postgres } = await import('postgres')
const { bearer, buildTestApp, seedWorkspace, testDatabase } = await import('./helpers/app.ts')
const { mcp } = await import('./helpers/triage.ts')

const url = process.env.DATABASE_URL
const onPostgres = Boolean(url && url !== 'memory://')

t.test('the classifier: lost connections and full disks, through drizzle\'s wrapper', async (t) => {
  const wrapped = (cause: object) => Object.assign(new Error('Failed query: select 1\nparams: '), { cause })
  for (const code of ['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'ECONNRESET', 'ECONNREFUSED', '57P01', '57P02', '57P03', '08006', '08003']) {
    t.ok(isConnectionLost(wrapped({ code })), `${code} is a lost connection`)
    t.ok(isConnectionLost({ code }), `${code} unwrapped too`)
    t.equal(isDiskFull(wrapped({ code })), false)
  }
  for (const code of ['53100', 'ENOSPC']) {
    t.ok(isDiskFull(wrapped({ code, message: 'could not extend file "base/5/1": No space left on device' })), `${code} is a full disk`)
    t.equal(unavailableReason(wrapped({ code })), 'disk_full')
  }
  for (const code of ['23505', '42P01', '57014', '53200', undefined]) {
    t.equal(unavailableReason(wrapped({ code })), undefined, `${code} is neither`)
  }
  // A message is not trusted: drizzle's quotes the statement's parameters, a user's text.
  t.equal(isDiskFull(new Error('Failed query: insert …\nparams: No space left on device')), false)
  const mapped = errorResponse(wrapped({ code: '57P01' }))
  t.equal(mapped.status, 503)
  t.equal(mapped.internal, false)
  t.equal(mapped.body.error.code, 'unavailable')
  t.equal(errorResponse(new Error('boom')).status, 500, 'anything else is still a 500')
})

/** Holds an ACCESS EXCLUSIVE lock on `memories` in a session of the test until `release`. */
async function lockMemories(databaseUrl: string) {
  const admin = postgres(databaseUrl, { max: 2, onnotice: () => {} })
  const reserved = await admin.reserve()
  await reserved`begin`
  await reserved`lock table memories in access exclusive mode`
  const terminated = new Set<number>()
  return {
    /**
     * Terminates the app's backend that waits for the lock, once it waits; throws if `pending`
     * (the request) settles first: it never waited, and the test would prove nothing.
     */
    async terminateWaiter(pending: Promise<unknown>): Promise<void> {
      let settled = false
      void pending.then(() => (settled = true), () => (settled = true))
      for (;;) {
        // A backend terminated before may still be listed, waiting, for a moment: not again.
        const rows = await admin`select pid, pg_terminate_backend(pid) as done from pg_stat_activity
          where application_name = 'growthdesk' and wait_event_type = 'Lock' and datname = current_database()
          and not (pid = any(${[...terminated]}::int[]))`
        for (const row of rows) terminated.add(row.pid as number)
        if (rows.length > 0) return
        if (settled) throw new Error('the request was answered without waiting for the lock')
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
    },
    async release() {
      await reserved`commit`
      reserved.release()
      await admin.end()
    },
  }
}

async function appOnPostgres(t: Test) {
  const database = await testDatabase(t)
  if (database.kind !== 'postgres') throw new Error('PostgreSQL only')
  const app = await buildTestApp(t, { database })
  return { app, ws: await seedWorkspace(app), databaseUrl: database.url }
}

t.test('PostgreSQL: a dropped connection is never a 500', { skip: !onPostgres && 'PostgreSQL only (DATABASE_URL)' }, async (t) => {
  t.ok(postgresGuard.applied, 'postgres.js is the version db/postgres-guard.ts patches')
  const { app, ws, databaseUrl } = await appOnPostgres(t)
  const call = (name: string, args: object) =>
    app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: { ...bearer(ws.keys.service), 'x-service-project': ws.project.id }, payload: args })
  const added = await call('add_memory', { content: 'before' })
  t.equal(added.statusCode, 200, added.body)
  t.equal((await call('list_memories', {})).statusCode, 200, 'the key and the project are known (cached) before the drop')

  t.test('a read whose connection is dropped is run once more and answers 200', async (t) => {
    const lock = await lockMemories(databaseUrl)
    const read = call('list_memories', {})
    await lock.terminateWaiter(read)
    await lock.release()
    const res = await read
    t.equal(res.statusCode, 200, res.body)
    t.equal(res.json().result.items.length, 1)
  })

  t.test('a read whose connection is dropped twice answers 503 with Retry-After', async (t) => {
    const lock = await lockMemories(databaseUrl)
    const read = call('list_memories', {})
    await lock.terminateWaiter(read)
    await lock.terminateWaiter(read) // the second try waits for the lock too
    await lock.release()
    const res = await read
    t.equal(res.statusCode, 503, res.body)
    t.equal(res.headers['retry-after'], '1')
    t.equal(res.json().error.code, 'unavailable')
  })

  t.test('a write whose connection is dropped is not run again: 503 with Retry-After, nothing written', async (t) => {
    const lock = await lockMemories(databaseUrl)
    const write = call('add_memory', { content: 'during the drop' })
    await lock.terminateWaiter(write)
    await lock.release()
    const res = await write
    t.equal(res.statusCode, 503, res.body)
    t.equal(res.headers['retry-after'], '1')
    t.same(Object.keys(res.json().error).sort(), ['code', 'message'])
    t.equal(res.json().error.code, 'unavailable')
    const list = await call('list_memories', {})
    t.same(list.json().result.items.map((m: { content: string }) => m.content), ['before'], 'the write was not made (nor made twice)')
    t.equal((await call('add_memory', { content: 'after' })).statusCode, 200, 'the next write succeeds')
  })

  t.test('over MCP the same write is a tool error with the same body', async (t) => {
    const lock = await lockMemories(databaseUrl)
    const write = mcp(app, ws.keys.service, 'add_memory', { project: ws.project.id, content: 'over mcp' })
    await lock.terminateWaiter(write)
    await lock.release()
    const res = await write
    t.equal(res.body.error?.code, 'unavailable')
    t.equal(res.body.error?.message, 'The connection to the database was lost before the answer came. Retry in a moment.')
  })
})

/**
 * The embedded database on a full disk, without a small disk: Node's fs.writeSync (which PGlite's
 * NODEFS calls for every write) fails with ENOSPC for a write that would grow a file of the data
 * folder — as a full file system does; a write inside a file's allocated size (a WAL segment) goes on.
 */
function fillDisk(dataDir: string): () => void {
  const original = fs.writeSync
  const inData = (fd: number) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(dataDir)
    } catch {
      return false
    }
  }
  fs.writeSync = function (this: unknown, fd: number, buffer: NodeJS.ArrayBufferView, offset?: number, length?: number, position?: number | null) {
    if (typeof buffer !== 'string' && inData(fd)) {
      const size = fs.fstatSync(fd).size
      const at = typeof position === 'number' ? position : size
      if (at + (length ?? buffer.byteLength) > size) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' })
    }
    return (original as (...args: unknown[]) => number).apply(this, [...arguments])
  } as typeof fs.writeSync
  return () => {
    fs.writeSync = original
  }
}

t.test('embedded: a full disk is a 503 for the write and on /health, until the disk can write again', { skip: (onPostgres || process.platform !== 'linux') && 'embedded PGlite on Linux only' }, async (t) => {
  const database = await testDatabase(t)
  if (database.kind !== 'pglite' || !database.dataDir) throw new Error('a PGlite folder')
  const dataDir = database.dataDir
  const app = await buildTestApp(t, { database })
  const ws = await seedWorkspace(app)
  const call = (name: string, args: object) =>
    app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: { ...bearer(ws.keys.service), 'x-service-project': ws.project.id }, payload: args })
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200)
  t.equal((await call('list_memories', {})).statusCode, 200)

  const restore = fillDisk(dataDir)
  t.teardown(restore)
  // The first memory of the project grows the table's file (a new page): the disk refuses it.
  const write = await call('add_memory', { content: 'x'.repeat(2000) })
  t.equal(write.statusCode, 503, write.body)
  t.equal(write.headers['retry-after'], '1')
  t.equal(write.json().error.code, 'unavailable')
  t.equal(write.json().error.message, 'The database cannot write: its disk is full. Retry once space is freed.')
  const sick = await app.inject({ method: 'GET', url: '/health' })
  t.equal(sick.statusCode, 503, 'health says so while the disk is full (its probe write fails too)')
  t.equal(sick.headers['retry-after'], '1')
  t.equal(sick.json().error.code, 'unavailable')
  t.match(sick.json().error.message, /^The embedded database cannot write: its disk is full \(.*No space left on device.*\)\.$/)
  t.equal((await call('list_memories', {})).statusCode, 200, 'reads still answer')
  t.same((await call('list_memories', {})).json().result.items, [], 'nothing was written')

  restore()
  const healthy = await app.inject({ method: 'GET', url: '/health' })
  t.equal(healthy.statusCode, 200, 'space is back: the probe write succeeds')
  t.same(healthy.json(), { status: 'ok' })
  const again = await call('add_memory', { content: 'after' })
  t.equal(again.statusCode, 200, again.body)
})

t.test('embedded: a write that succeeds clears the mark', { skip: (onPostgres || process.platform !== 'linux') && 'embedded PGlite on Linux only' }, async (t) => {
  const database = await testDatabase(t)
  if (database.kind !== 'pglite' || !database.dataDir) throw new Error('a PGlite folder')
  const app = await buildTestApp(t, { database })
  const ws = await seedWorkspace(app)
  const call = (name: string, args: object) =>
    app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: { ...bearer(ws.keys.service), 'x-service-project': ws.project.id }, payload: args })
  let restore = fillDisk(database.dataDir)
  t.teardown(() => restore())
  t.equal((await call('add_memory', { content: 'refused' })).statusCode, 503)
  restore()
  t.equal((await call('add_memory', { content: 'accepted' })).statusCode, 200)
  // The disk full again, but nothing has failed since the write that succeeded: healthy (a probe,
  // which would fail now, runs only while a failure is on record).
  restore = fillDisk(database.dataDir)
  t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200)
})
