// npm run bench:durability [-- --rounds 3] [--batches 100]
//
// What syncing every commit costs the embedded database: two apps on PGlite in temporary
// folders, one with EMBEDDED_SYNC on (the default) and one with it off, each ingesting the same
// batches through POST /v1/events (in-process requests, so HTTP costs nothing here) in
// alternating rounds. Printed per batch size: events/s of each, the ratio, and how many
// fsync calls the synced app made.
import { parseArgs } from 'node:util'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import { embeddedSyncs } from '../db/client.ts'
import { loadAverage, median } from './client-process.ts'

const { values: args } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, batches: { type: 'string', default: '100' } } })
const rounds = Number(args.rounds)
const batches = Number(args.batches)
if (!(rounds >= 1 && rounds <= 100) || !(batches >= 1 && batches <= 100_000)) {
  process.stderr.write('Usage: npm run bench:durability -- [--rounds 1…100] [--batches 1…100000]\n')
  process.exit(2)
}
const log = (line = '') => process.stdout.write(`${line}\n`)

const folders: string[] = []
async function open(sync: boolean) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `gd-bench-durability-${sync ? 'sync' : 'nosync'}-`))
  folders.push(dataDir)
  const app = await buildApp({
    config: { ...loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_INGEST_MAX: '0' }), database: { kind: 'pglite', dataDir, sync } },
    logger: false,
  })
  const ws = await bootstrap(app, { workspace: 'bench', email: 'bench@growthdesk.bench', project: 'Bench' })
  return { app, key: ws.keys.ingest }
}

async function ingest(target: { app: FastifyInstance; key: string }, size: number): Promise<number> {
  const started = performance.now()
  for (let b = 0; b < batches; b++) {
    const events = Array.from({ length: size }, (_, i) => ({ uuid: randomUUID(), event: 'daily_use', distinct_id: `user_${(b * size + i) % 500}` }))
    const res = await target.app.inject({ method: 'POST', url: '/v1/events', headers: { authorization: `Bearer ${target.key}` }, payload: { events } })
    if (res.statusCode !== 200) throw new Error(`ingest: ${res.statusCode} ${res.body}`)
  }
  return (batches * size) / ((performance.now() - started) / 1000)
}

log(`growthdesk bench:durability — embedded PGlite, ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadAverage()}`)
log(`${batches} batches per round, ${rounds} rounds, the two apps alternating`)
const synced = await open(true)
const unsynced = await open(false)
try {
  for (const size of [1, 100]) {
    const rates = { sync: [] as number[], nosync: [] as number[] }
    let syncs = 0
    for (let r = 0; r < rounds; r++) {
      const before = embeddedSyncs.count
      rates.sync.push(await ingest(synced, size))
      syncs += embeddedSyncs.count - before
      rates.nosync.push(await ingest(unsynced, size))
    }
    const s = median(rates.sync)
    const n = median(rates.nosync)
    log(`batches of ${String(size).padStart(3)}: synced ${Math.round(s).toLocaleString('en-US').padStart(7)} events/s, unsynced ${Math.round(n).toLocaleString('en-US').padStart(7)} events/s — synced/unsynced ${(s / n * 100).toFixed(1)} % (${(syncs / (rounds * batches)).toFixed(1)} fsync calls per batch)`)
  }
} finally {
  await synced.app.close()
  await unsynced.app.close()
  for (const f of folders) fs.rmSync(f, { recursive: true, force: true })
}
log(`load average after: ${loadAverage()}`)
