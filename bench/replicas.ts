// node bench/replicas.ts [--calls 2000] [--rounds 5]
//
// What read-your-writes costs a read: a throwaway primary and streaming replica on loopback
// (bin/pg-cluster.ts), one app without replicas and one with DATABASE_REPLICA_URLS, the same
// warm listing call (GET …/opportunities) by a key, in alternating rounds of `--calls` calls.
// Printed: µs per call for each (median of the rounds), their ratio, and the router's choice
// alone (the mark's primary-key lookup on the primary), with the load average. Both servers
// share this machine's cores with the app, so the ratio is what the extra lookup costs, not
// what a replica on its own machine saves.
import { parseArgs } from 'node:util'
import os from 'node:os'
import { randomBytes } from 'node:crypto'
import { buildApp } from '../app.ts'
import { bootstrap } from '../bin/admin.ts'
import { clusterUnavailable, createPrimary, createReplica, destroyCluster } from '../bin/pg-cluster.ts'
import type { Config } from '../config.ts'

const { values } = parseArgs({ options: { calls: { type: 'string', default: '2000' }, rounds: { type: 'string', default: '5' } } })
const calls = Number(values.calls)
const rounds = Number(values.rounds)
if (!(calls >= 10 && calls <= 100_000) || !(rounds >= 1 && rounds <= 50)) {
  process.stderr.write('Usage: node bench/replicas.ts [--calls 10…100000] [--rounds 1…50]\n')
  process.exit(2)
}
const why = clusterUnavailable()
if (why) {
  process.stderr.write(`cannot make a primary and a replica here: ${why}\n`)
  process.exit(2)
}

const primary = await createPrimary()
const replica = await createReplica(primary)
try {
  await primary.psql('create database bench')
  // One server key for both apps: the second opens what the first sealed (the cookie secret).
  const secrets = { key: randomBytes(32), keyFile: null, previous: [] }
  const config = (replicas: string[]): Config => ({
    production: false,
    host: '127.0.0.1',
    port: 0,
    publicUrl: 'http://127.0.0.1:3000',
    database: { kind: 'postgres', url: primary.url('bench') },
    replicas: { urls: replicas, maxLagMs: 10_000 },
    allowedOrigins: [],
    trustProxy: false,
    logLevel: 'silent',
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 72_000,
    secrets,
  })
  const plain = await buildApp({ config: config([]), logger: false })
  const routed = await buildApp({ config: config([replica.url('bench')]), logger: false })
  const ws = await bootstrap(plain, { workspace: 'bench', email: 'owner@bench.test' })
  const url = `/api/v1/mcp/projects/${ws.project.id}/opportunities`
  const headers = { authorization: `Bearer ${ws.keys.mcp}` }
  for (let i = 0; i < 20; i++) {
    await plain.inject({ method: 'POST', url, headers, payload: { contribution_type: 'potential_user_opportunity', key_information: `Lead ${i}`, reason: 'r', suggested_action: 'a' } })
  }
  // The writer's mark is behind the replica once it has replayed: wait for that.
  const lsn = (await primary.psql('select pg_current_wal_lsn()')).trim()
  for (let i = 0; i < 300 && (await replica.psql(`select pg_last_wal_replay_lsn() >= '${lsn}'`)) !== 't'; i++) await new Promise((resolve) => setTimeout(resolve, 50))
  await routed.replicas!.poll()

  const time = async (fn: () => Promise<unknown>) => {
    const started = process.hrtime.bigint()
    for (let i = 0; i < calls; i++) await fn()
    return Number(process.hrtime.bigint() - started) / 1000 / calls
  }
  const listing = (app: typeof plain) => async () => {
    const res = await app.inject({ method: 'GET', url, headers })
    if (res.statusCode !== 200) throw new Error(res.body)
  }
  const results = { primary: [] as number[], replica: [] as number[], choose: [] as number[] }
  await time(listing(plain))
  await time(listing(routed))
  for (let r = 0; r < rounds; r++) {
    results.primary.push(await time(listing(plain)))
    results.replica.push(await time(listing(routed)))
    results.choose.push(await time(() => routed.replicas!.choose('key:key_bench')))
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const [p, q, c] = [median(results.primary), median(results.replica), median(results.choose)]
  const out = (line: string) => process.stdout.write(`${line}\n`)
  out(`listing call, no replicas (primary):         ${p.toFixed(0)} µs`)
  out(`listing call, replica + mark lookup:         ${q.toFixed(0)} µs   (${(q / p).toFixed(2)}× the primary's)`)
  out(`the router's choice alone (mark lookup):     ${c.toFixed(0)} µs   (${((c / p) * 100).toFixed(0)}% of a listing call)`)
  out(`${calls} calls × ${rounds} rounds; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} on ${os.cpus().length} cores`)
  await routed.close()
  await plain.close()
} finally {
  await destroyCluster(replica, primary)
}
