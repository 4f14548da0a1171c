// The embedded database syncs every commit to disk before it is acknowledged (EMBEDDED_SYNC,
// on by default): PostgreSQL runs with fsync on, flushes its WAL by fsync(2), and the file
// system under PGlite turns that into a real fsync of the file. Off, nothing is synced.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { embeddedSyncs, openDatabase, rowsOf } from '../db/client.ts'
import { sql } from '../db/orm.ts'

async function probe(t: Test, sync: boolean | undefined) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gd-durability-'))
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const database = await openDatabase({ kind: 'pglite', dataDir, sync })
  t.teardown(() => database.close())
  const setting = async (name: string) => rowsOf<Record<string, string>>(await database.db.execute(sql.raw(`show ${name}`)))[0]![name]
  await database.db.execute(sql`create table t (v text)`)
  const before = embeddedSyncs.count
  for (let i = 0; i < 3; i++) await database.db.execute(sql`insert into t values (${String(i)})`)
  return { fsync: await setting('fsync'), method: await setting('wal_sync_method'), syncs: embeddedSyncs.count - before }
}

t.test('by default every commit is synced to disk', async (t) => {
  const { fsync, method, syncs } = await probe(t, undefined)
  t.equal(fsync, 'on')
  t.equal(method, 'fsync')
  t.ok(syncs >= 3, `three commits, ${syncs} fsync calls`)
})

t.test('EMBEDDED_SYNC=false: nothing is synced', async (t) => {
  const { fsync, syncs } = await probe(t, false)
  t.equal(fsync, 'off')
  t.equal(syncs, 0)
})
