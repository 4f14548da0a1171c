// npm run drill [-- --phase-seconds 15] [--writers 4] [--json]
//
// A drill of the reference topology (docs/deploy.md), on this machine, with Debian's PostgreSQL
// 15 and haproxy: a primary and a streaming replica in temporary folders on free ports (bin/pg-cluster.ts),
// haproxy in front of three instances (`npm start`'s command) and in front of the primary
// (bin/haproxy.ts), and mixed load from this process — writers that submit and review
// opportunities, each review read back at once with the same key; ingestion batches with unique
// uuids; daily metrics; MCP tools/call. Phases: warm-up; kill -9 of one instance (restarted at
// the end of the phase); replay paused on the replica; a switchover (the primary stopped
// cleanly, the replica promoted, haproxy's database front repointed through its runtime API, no
// restart of anything). Then it counts, on the final primary, what was acknowledged against what
// is there, and prints what it saw. Exit code 1 when anything acknowledged is missing, a writer
// did not read its own write, a 500 was answered or the instances did not recover; 2 when the
// drill itself could not run (no PostgreSQL binaries or haproxy, a start that failed).
import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { execFile } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import postgres from 'postgres'
import { clusterUnavailable, createPrimary, createReplica, destroyCluster, freePort, type PgServer } from './pg-cluster.ts'
import { haproxyUnavailable, startHaproxy, type Haproxy } from './haproxy.ts'

const run = promisify(execFile)
const ROOT = path.resolve(import.meta.dirname, '..')
// `npm start`'s command (package.json's `node <flags> start.js`), so that the instances run as deployed.
const START = (JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start as string).split(/\s+/).slice(1)
const DATABASE = 'growthdesk'
const MCP_VERSION = '2025-11-25'

const USAGE = `Usage: npm run drill -- [options]

  --phase-seconds <s>  length of each phase (default 15; the drill takes about 5 phases + set-up)
  --writers <n>        concurrent writers, each with its own key (default 4)
  --keep               keep the temporary folder (instances' and haproxy's logs, configuration)
  --json               print the report as one JSON object (progress still goes to stderr)
  --help               this text

Needs Debian's PostgreSQL 15 (PG_BIN) and haproxy (HAPROXY_BIN); as root, the servers run as
the postgres user. Everything runs on loopback, in temporary folders removed at the end.`

// ——— What the drill counts ———

type Phase = 'setup' | 'warm-up' | 'kill' | 'paused replay' | 'switchover' | 'after'

interface Tally {
  requests: Record<string, number>
  errors: Record<string, number>
}

const phases = new Map<Phase, Tally>()
let phase: Phase = 'setup'
let stopping = false
let inFlight = 0
// Read through functions in the workers' loops: the loops themselves do not change them.
const running = () => !stopping
const recoveredAfter = () => writesAfterSwitch
const serverErrors: string[] = []

function tally(p: Phase): Tally {
  let t = phases.get(p)
  if (!t) phases.set(p, (t = { requests: {}, errors: {} }))
  return t
}

const bump = (record: Record<string, number>, key: string) => { record[key] = (record[key] ?? 0) + 1 }

/** Acknowledged writes, by kind, and what the read-backs saw. */
const acked = {
  opportunities: new Set<string>(),
  /** note → opportunity id (every note is unique). */
  reviews: new Map<string, string>(),
  events: new Set<string>(),
}
let writesAfterSwitch: number | null = null
let switchStarted = 0
const ryw = { reads: 0, violations: 0, examples: [] as string[] }
const stale = { reads: 0, stale: 0 }

interface Answer {
  ok: boolean
  status: number
  body: Record<string, unknown> | null
  retryAfterMs: number
}

/**
 * One request through the load balancer, counted under `kind`. An error is labelled by what the
 * client saw: an HTTP status (and who answered it: the app's JSON error, or haproxy's own page),
 * or a connection error.
 */
/** `expected`: statuses that are an answer here, not an error (a stale read's 404). */
async function request(kind: string, url: string, init: RequestInit, expected: readonly number[] = []): Promise<Answer> {
  const started = phase
  const t = tally(started)
  bump(t.requests, kind)
  inFlight++
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) })
    const text = await res.text()
    let body: Record<string, unknown> | null = null
    try { body = JSON.parse(text) } catch { body = null }
    const retryAfter = Number(res.headers.get('retry-after'))
    const answer = { ok: res.ok, status: res.status, body, retryAfterMs: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 0 }
    if (!res.ok && !expected.includes(res.status)) {
      const code = (body?.error as { code?: string } | undefined)?.code
      bump(t.errors, `${kind}: HTTP ${res.status} ${code ? `(app: ${code})` : '(load balancer)'}`)
      if (res.status >= 500 && res.status !== 502 && res.status !== 503 && res.status !== 504) serverErrors.push(`${started} ${kind}: ${res.status} ${text.slice(0, 300)}`)
    }
    return answer
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } }
    bump(t.errors, `${kind}: connection ${e.cause?.code ?? e.name}`)
    return { ok: false, status: 0, body: null, retryAfterMs: 0 }
  } finally {
    inFlight--
  }
}

// ——— The drill ———

interface Setup {
  dir: string
  primary: PgServer
  replica: PgServer
  haproxy: Haproxy
  origin: string
  project: string
  keys: { owner: string; ingest: string; writers: string[] }
  instances: Instance[]
}

interface Instance {
  name: string
  port: number
  env: NodeJS.ProcessEnv
  child: ChildProcess | null
  log: string
  starts: number
  /** Set before the drill kills or stops it: any other exit is a failure of the drill. */
  expectExit: boolean
}

/** Instances that exited without being asked to, with where and why (their log's last error). */
const unexpectedExits: { instance: string; phase: Phase; code: number | null; signal: string | null; reason: string }[] = []

// Ctrl-C (or SIGTERM) aborts this: the drill stops at its next step, and cleans up all it made.
const interrupt = new AbortController()
const pause = (ms: number) => sleep(ms, undefined, { signal: interrupt.signal })
const checkpoint = () => interrupt.signal.throwIfAborted()

const cleanups: (() => Promise<void>)[] = []
let cleaning: Promise<void> | null = null
function cleanUp() {
  cleaning ??= (async () => {
    for (const fn of cleanups.reverse()) await fn().catch((err) => progress(`clean-up: ${(err as Error).message}`))
  })()
  return cleaning
}

function progress(line: string) {
  process.stderr.write(`drill: ${line}\n`)
}

function loadAverage() {
  return os.loadavg().map((n) => n.toFixed(2)).join(' ')
}

async function main() {
  const parsed = (() => {
    // Its refusals (an unknown option, a missing value) are usage errors.
    try {
      return parseArgs({
        args: process.argv.slice(2),
        options: {
          'phase-seconds': { type: 'string', default: '15' },
          writers: { type: 'string', default: '4' },
          json: { type: 'boolean', default: false },
          keep: { type: 'boolean', default: false },
          help: { type: 'boolean', default: false },
        },
      })
    } catch (err) {
      throw new UsageError((err as Error).message)
    }
  })()
  const args = parsed.values
  if (args.help) {
    process.stdout.write(USAGE + '\n')
    return 0
  }
  const phaseMs = Number(args['phase-seconds']) * 1000
  const writers = Number(args.writers)
  if (!Number.isFinite(phaseMs) || phaseMs < 2000 || phaseMs > 600_000) throw new UsageError('--phase-seconds takes a number from 2 to 600')
  if (!Number.isInteger(writers) || writers < 1 || writers > 32) throw new UsageError('--writers takes an integer from 1 to 32')
  const missing = clusterUnavailable() ?? haproxyUnavailable()
  if (missing) throw new UsageError(`cannot run the drill here: ${missing}`)

  const loadBefore = loadAverage()
  const setup = await prepare(writers, args.keep)
  const started = Date.now()
  const workers = startLoad(setup)

  phase = 'warm-up'
  progress(`warm-up: ${phaseMs / 1000} s of load (${writers} writers, ingestion, metrics, MCP) through the LB at ${setup.origin}`)
  await pause(phaseMs)

  phase = 'kill'
  const victim = setup.instances[2]!
  await pause(Math.min(2000, phaseMs / 4))
  const inFlightAtKill = inFlight
  progress(`kill: kill -9 of ${victim.name} (pid ${victim.child?.pid}) with ${inFlightAtKill} requests in flight through the LB`)
  victim.expectExit = true
  victim.child?.kill('SIGKILL')
  await pause(phaseMs - Math.min(2000, phaseMs / 4))
  progress(`kill: restarting ${victim.name}`)
  await startInstance(victim, setup.origin)

  phase = 'paused replay'
  await setup.replica.pauseReplay()
  progress(`paused replay: replay paused on the replica for ${phaseMs / 1000} s`)
  await pause(phaseMs)
  await setup.replica.resumeReplay()
  progress('paused replay: resumed')

  phase = 'switchover'
  const pids = setup.instances.map((i) => i.child?.pid)
  switchStarted = Date.now()
  progress('switchover: the old primary out of the database front, its sessions shut, stopped (fast)')
  await setup.haproxy.command('disable server primary/pg1')
  await setup.haproxy.command('shutdown sessions server primary/pg1')
  await setup.primary.stop('fast')
  const endOfWal = await setup.primary.checkpointLsn()
  // The replica has everything the old primary wrote before it promotes: a clean stop sends all of it.
  let replayed = ''
  for (let i = 0; i < 100; i++) {
    replayed = await setup.replica.psql(`select pg_last_wal_replay_lsn() >= '${endOfWal}'::pg_lsn`)
    if (replayed === 't') break
    await pause(100)
  }
  if (replayed !== 't') throw new Error(`the replica did not replay up to the old primary's end of WAL (${endOfWal})`)
  await setup.replica.promote()
  await setup.haproxy.command('enable server primary/pg2')
  const repointedMs = Date.now() - switchStarted
  progress(`switchover: replica promoted and the database front repointed after ${repointedMs} ms`)
  const reconnecting = waitForInstances(setup, switchStarted, 60_000)
  // The first write acknowledged after the switchover began, through the LB.
  while (recoveredAfter() === null && Date.now() - switchStarted < 60_000) await pause(50)
  const recoveryMs = writesAfterSwitch
  progress(recoveryMs === null ? 'switchover: no write succeeded within 60 s' : `switchover: first write through the LB ${recoveryMs} ms after the switchover began`)
  phase = 'after'
  await pause(phaseMs)
  const reconnected = await reconnecting
  const lbStates = await setup.haproxy.states('instances')

  stopping = true
  await Promise.all(workers)
  const restarted = setup.instances.filter((inst, i) => inst.child?.pid !== pids[i]).map((i) => i.name)
  const totalMs = Date.now() - started

  // What the final primary has, against what was acknowledged.
  const sql = postgres(setup.replica.url(DATABASE), { max: 1, onnotice: () => {} })
  const found = { opportunities: 0, reviews: 0, events: 0 }
  try {
    const oppIds = [...acked.opportunities]
    found.opportunities = (await sql`select count(*)::int as n from opportunities where id = any(${oppIds})`)[0]!.n
    const notes = new Set((await sql`select after->>'review_note' as note from review_history where opportunity_id = any(${[...new Set(acked.reviews.values())]})`).map((r) => r.note as string))
    found.reviews = [...acked.reviews.keys()].filter((n) => notes.has(n)).length
    const uuids = [...acked.events]
    for (let i = 0; i < uuids.length; i += 10_000) {
      found.events += (await sql`select count(*)::int as n from events where uuid = any(${uuids.slice(i, i + 10_000)}::uuid[])`)[0]!.n
    }
  } finally {
    await sql.end()
  }
  const kinds = ['opportunities', 'reviews', 'events'] as const
  const writes = Object.fromEntries(kinds.map((k) => {
    const a = k === 'reviews' ? acked.reviews.size : acked[k].size
    return [k, { acknowledged: a, found: found[k], lost: a - found[k] }]
  })) as Record<(typeof kinds)[number], { acknowledged: number; found: number; lost: number }>
  const lost = kinds.reduce((n, k) => n + writes[k].lost, 0)

  const report = {
    phase_seconds: phaseMs / 1000,
    writers,
    total_seconds: Math.round(totalMs / 100) / 10,
    phases: Object.fromEntries([...phases].filter(([p]) => p !== 'setup')),
    killed: { instance: victim.name, in_flight_at_kill: inFlightAtKill, errors_in_phase: sum(tally('kill').errors), restarted_after_phase: true },
    writes,
    lost,
    read_your_writes: { reads: ryw.reads, violations: ryw.violations, examples: ryw.examples },
    other_key_reads_while_paused: stale,
    switchover: {
      repointed_ms: repointedMs,
      first_write_ms: recoveryMs,
      instances_healthy_ms: reconnected,
      instances_restarted: restarted,
      lb_states_at_end: lbStates,
      errors: tally('switchover').errors,
    },
    instances_exited: unexpectedExits,
    server_errors: serverErrors.length,
    server_error_examples: serverErrors.slice(0, 5),
    load_average: { before: loadBefore, after: loadAverage() },
    node: process.version,
  }
  const failures = [
    lost > 0 && `${lost} acknowledged writes are missing`,
    ryw.violations > 0 && `${ryw.violations} read-your-writes violations`,
    // Every request in flight through the LB at the kill is an upper bound of what the kill may cost.
    sum(tally('kill').errors) > inFlightAtKill && `the kill cost ${sum(tally('kill').errors)} failed requests, more than the ${inFlightAtKill} in flight`,
    serverErrors.length > 0 && `${serverErrors.length} answers were a 5xx other than 502/503/504`,
    recoveryMs === null && 'no write succeeded after the switchover',
    unexpectedExits.length > 0 && `instances exited by themselves: ${unexpectedExits.map((e) => `${e.instance} (${e.phase})`).join(', ')}`,
    restarted.length > 0 && `instances were restarted by the switchover: ${restarted.join(', ')}`,
    Object.values(reconnected).some((ms) => ms === null) && 'an instance did not answer /health after the switchover',
  ].filter((f): f is string => typeof f === 'string')
  if (args.json) process.stdout.write(JSON.stringify({ ...report, ok: failures.length === 0, failures }, null, 2) + '\n')
  else process.stdout.write(describe(report, failures))
  return failures.length === 0 ? 0 : 1
}

function sum(record: Record<string, number>) {
  return Object.values(record).reduce((a, b) => a + b, 0)
}

class UsageError extends Error {}

/** The cluster, the database with its workspace and keys, haproxy, three instances. */
async function prepare(writers: number, keep: boolean): Promise<Setup> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-drill-'))
  cleanups.push(async () => (keep ? progress(`kept ${dir}`) : fs.rmSync(dir, { recursive: true, force: true })))
  progress(`set-up in ${dir} (load average ${loadAverage()})`)
  const servers: PgServer[] = []
  cleanups.push(() => destroyCluster(...servers))
  const primary = await createPrimary()
  servers.push(primary)
  checkpoint()
  await primary.psql(`create database ${DATABASE}`)
  const replica = await createReplica(primary)
  servers.push(replica)
  checkpoint()
  progress(`PostgreSQL: primary on ${primary.port}, streaming replica on ${replica.port}`)

  const secretsKey = randomBytes(32).toString('base64')
  const cli = async (argv: string[]) => {
    const { stdout } = await run(process.execPath, [path.join(ROOT, 'bin/cli.ts'), ...argv], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: primary.url(DATABASE), SECRETS_KEY: secretsKey, LOG_LEVEL: 'warn', DATA_DIR: dir },
      maxBuffer: 4 * 1024 * 1024,
    })
    return JSON.parse(stdout)
  }
  await run(process.execPath, [path.join(ROOT, 'bin/cli.ts'), 'migrate'], { cwd: ROOT, env: { ...process.env, DATABASE_URL: primary.url(DATABASE), SECRETS_KEY: secretsKey, LOG_LEVEL: 'warn', DATA_DIR: dir } })
  const boot = await cli(['admin', 'bootstrap', '--json', '--workspace', 'Drill', '--email', 'owner@drill.test', '--project', 'Drill project'])
  const writerKeys: string[] = []
  for (let i = 0; i < writers; i++) {
    const user = await cli(['admin', 'create-user', '--json', '--email', `writer${i}@drill.test`, '--project', boot.project.id, '--role', 'reviewer'])
    checkpoint()
    writerKeys.push(user.keys.service)
  }
  progress(`workspace, project ${boot.project.slug} and ${writers} writers with a key each`)
  checkpoint()

  const [httpPort, dbPort, ...ports] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()])
  const origin = `http://127.0.0.1:${httpPort}`
  const instances: Instance[] = ports.map((port, i) => ({
    name: `app${i + 1}`,
    port,
    child: null,
    starts: 0,
    expectExit: false,
    log: path.join(dir, `app${i + 1}.log`),
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      HOST: '127.0.0.1',
      PORT: String(port),
      // Clients reach the instances through the LB: that is the address MCP checks Host against.
      PUBLIC_URL: origin,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${dbPort}/${DATABASE}`,
      DATABASE_REPLICA_URLS: replica.url(DATABASE),
      SECRETS_KEY: secretsKey,
      DATA_DIR: path.join(dir, `app${i + 1}`),
      LOG_LEVEL: 'warn',
      // Fair use stays on (its counts go through the database too), above what the drill sends.
      RATE_LIMIT_MAX: '100000',
      RATE_LIMIT_INGEST_MAX: '100000',
    },
  }))
  const haproxy = await startHaproxy({
    dir,
    httpPort,
    dbPort,
    instances: Object.fromEntries(instances.map((i) => [i.name, i.port])),
    databases: { pg1: primary.port, pg2: replica.port },
  })
  cleanups.push(() => haproxy.stop())
  checkpoint()
  cleanups.push(async () => {
    await Promise.all(instances.map((i) => stopInstance(i)))
  })
  await Promise.all(instances.map((i) => startInstance(i, origin)))
  checkpoint()
  for (let i = 0; i < 40; i++) {
    const states = await haproxy.states('instances')
    if (Object.values(states).every((s) => s === 'UP')) break
    await sleep(250)
  }
  progress(`haproxy: HTTP ${origin} over ${instances.map((i) => `${i.name}:${i.port}`).join(', ')}; database front 127.0.0.1:${dbPort} → primary`)
  return {
    dir,
    primary,
    replica,
    haproxy,
    origin,
    project: boot.project.id,
    keys: { owner: boot.keys.service, ingest: boot.keys.ingest, writers: writerKeys },
    instances,
  }
}

async function startInstance(inst: Instance, origin: string) {
  checkpoint()
  fs.mkdirSync(inst.env.DATA_DIR!, { recursive: true })
  const log = fs.openSync(inst.log, 'a')
  const child = spawn(process.execPath, START, { cwd: ROOT, env: inst.env, stdio: ['ignore', log, log] })
  fs.closeSync(log)
  inst.child = child
  inst.starts++
  inst.expectExit = false
  child.once('exit', (code, signal) => {
    if (inst.expectExit || stopping) return
    // Why: the shutdown after an uncaught error when it was logged, else an uncaught error's
    // stack written by Node itself, else the last error logged (the shutdown's line may be lost).
    const lines = fs.readFileSync(inst.log, 'utf8').trim().split('\n').reverse()
    const logged = lines.map((l) => { try { return JSON.parse(l) } catch { return null } })
    const line = (l: { msg?: string; err?: { message?: string; stack?: string } }) => `${l.msg}: ${l.err?.message ?? ''} ${(l.err?.stack ?? '').split('\n')[1]?.trim() ?? ''}`.trim()
    const shutdown = logged.find((l) => l?.msg === 'shutting down after an error')
    const uncaught = lines.find((l) => /^\w*Error\b/.test(l))
    const last = logged.find((l) => l?.level >= 50)
    const reason = shutdown ? line(shutdown) : uncaught ?? (last ? `last error logged: ${line(last)}` : (lines[0] ?? ''))
    unexpectedExits.push({ instance: inst.name, phase, code, signal, reason })
    progress(`${inst.name} exited by itself (${code ?? signal}) during ${phase}: ${reason}`)
  })
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${inst.name} exited (${child.exitCode}): ${fs.readFileSync(inst.log, 'utf8').slice(-2000)}`)
    const ok = await fetch(`http://127.0.0.1:${inst.port}/health`).then((r) => r.ok, () => false)
    if (ok) return
    await pause(100)
  }
  throw new Error(`${inst.name} did not answer /health within 60 s (LB ${origin})`)
}

async function stopInstance(inst: Instance) {
  const child = inst.child
  inst.expectExit = true
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await Promise.race([exited, sleep(5000)])
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
}

/** For each instance, directly (not through the LB): ms from `since` to its first /health 200, or null. */
async function waitForInstances(setup: Setup, since: number, limitMs: number) {
  const result: Record<string, number | null> = {}
  await Promise.all(setup.instances.map(async (inst) => {
    result[inst.name] = null
    while (Date.now() - since < limitMs) {
      const ok = await fetch(`http://127.0.0.1:${inst.port}/health`, { signal: AbortSignal.timeout(5000) }).then((r) => r.ok, () => false)
      if (ok) {
        result[inst.name] = Date.now() - since
        return
      }
      await sleep(100)
    }
  }))
  return result
}

// ——— The load ———

function startLoad(setup: Setup): Promise<void>[] {
  const { origin, project } = setup
  const headers = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' })
  const rest = (kind: string, key: string, tool: string, args: object, expected: readonly number[] = []) =>
    request(kind, `${origin}/v1/tools/${tool}`, { method: 'POST', headers: headers(key), body: JSON.stringify({ project, ...args }) }, expected)
  const mcp = async (kind: string, key: string, tool: string, args: object): Promise<Answer> => {
    const answer = await request(kind, `${origin}/mcp`, {
      method: 'POST',
      headers: { ...headers(key), accept: 'application/json, text/event-stream', 'mcp-protocol-version': MCP_VERSION },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: { project, ...args } } }),
    })
    const result = answer.body?.result as { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text: string }[] } | undefined
    if (!answer.ok || !result) return answer
    if (result.isError) {
      // The tool's error, in the same shape as REST's, inside a 200.
      let code = 'unknown'
      try { code = JSON.parse(result.content?.[0]?.text ?? '{}').error?.code ?? code } catch {}
      bump(tally(phase).errors, `${kind}: tool error (app: ${code})`)
      if (code === 'internal') serverErrors.push(`${phase} ${kind}: tool error internal`)
      return { ...answer, ok: false }
    }
    return { ...answer, body: { result: result.structuredContent } }
  }
  const result = (a: Answer) => (a.body?.result ?? {}) as Record<string, unknown>
  // After a failure, wait as the answer asks (Retry-After, at most 1 s) or 100 ms.
  const backOff = (a: Answer) => sleep(Math.min(1000, a.retryAfterMs || 100))
  const wrote = (startedAt: number) => {
    if (switchStarted && writesAfterSwitch === null && startedAt >= switchStarted) writesAfterSwitch = Date.now() - switchStarted
  }

  const writer = async (w: number) => {
    const key = setup.keys.writers[w]!
    let n = 0
    while (running()) {
      let at = Date.now()
      const sub = await rest('submit_opportunity', key, 'submit_opportunity', {
        contribution_type: 'partnership',
        key_information: `Drill writer ${w} lead ${n}: a team asking about pricing in the forum`,
        reason: 'Asked twice this week',
        suggested_action: 'Reply and offer a call',
      })
      if (!sub.ok) { await backOff(sub); continue }
      const id = result(sub).event_id as string
      acked.opportunities.add(id)
      wrote(at)
      for (const status of ['reviewing', 'contacted', 'done']) {
        if (stopping) break
        const note = `drill w${w} n${n++}`
        at = Date.now()
        const rev = await rest('review_opportunity', key, 'review_opportunity', { event_id: id, status, note })
        if (!rev.ok) { await backOff(rev); continue }
        acked.reviews.set(note, id)
        wrote(at)
        const version = result(rev).version as number
        if (w === 0) lastOfWriter0 = { id, version }
        // At once, with the same key: over REST and MCP in turn.
        const read = n % 2 ? await rest('get_opportunity', key, 'get_opportunity', { event_id: id }) : await mcp('mcp get_opportunity', key, 'get_opportunity', { event_id: id })
        if (!read.ok) { await backOff(read); continue }
        ryw.reads++
        const seen = result(read)
        if ((seen.version as number) < version || ((seen.version as number) === version && seen.review_note !== note)) {
          ryw.violations++
          if (ryw.examples.length < 5) ryw.examples.push(`${phase}: writer ${w} wrote ${id} v${version} (${note}), read v${seen.version} (${seen.review_note})`)
        }
      }
    }
  }
  let lastOfWriter0: { id: string; version: number } | null = null

  const ingester = async () => {
    let retry: { uuid: string }[] | null = null
    while (running()) {
      // A failed batch is sent again as it was (same uuids): ingestion is idempotent by uuid.
      const events: { uuid: string }[] = retry ?? Array.from({ length: 50 }, (_, i) => ({ event: i % 10 ? 'daily_use' : 'signup', distinct_id: `drill-user-${Math.floor(Math.random() * 500)}`, uuid: randomUUID() }))
      const at = Date.now()
      const res = await request('POST /v1/events', `${origin}/v1/events`, { method: 'POST', headers: headers(setup.keys.ingest), body: JSON.stringify({ events }) })
      const r = result({ ...res, body: { result: res.body } })
      if (!res.ok || (r.accepted as number) + (r.duplicates as number) !== events.length) {
        retry = events
        await backOff(res)
        continue
      }
      retry = null
      for (const e of events) acked.events.add(e.uuid)
      wrote(at)
    }
  }

  const metrics = async () => {
    while (running()) {
      const a = await rest('get_daily_ops', setup.keys.owner, 'get_daily_ops', { window: '7d' })
      if (!a.ok) await backOff(a)
      else await sleep(20)
    }
  }

  const mcpReader = async () => {
    let i = 0
    while (running()) {
      const a = i++ % 2
        ? await mcp('mcp get_daily_ops', setup.keys.owner, 'get_daily_ops', { window: '30d' })
        : await mcp('mcp list_opportunities', setup.keys.owner, 'list_opportunities', { status: 'done' })
      if (!a.ok) await backOff(a)
      else await sleep(20)
    }
  }

  // Another key reads writer 0's latest acknowledged review: with replay paused, a replica may
  // show it an older version, or not have the opportunity yet (404). That is a fact of reading
  // from replicas, not an error; counted.
  const otherKey = async () => {
    while (running()) {
      const last = lastOfWriter0
      if (last && phase === 'paused replay') {
        const a = await rest('get_opportunity (other key)', setup.keys.owner, 'get_opportunity', { event_id: last.id }, [404])
        if (a.ok || a.status === 404) {
          stale.reads++
          if (a.status === 404 || (result(a).version as number) < last.version) stale.stale++
        }
      }
      await sleep(100)
    }
  }

  return [
    ...setup.keys.writers.map((_, w) => writer(w)),
    ingester(),
    metrics(),
    mcpReader(),
    otherKey(),
  ]
}

// ——— The report ———

function describe(r: Record<string, any>, failures: string[]): string {
  const lines: string[] = []
  const row = (...cells: (string | number)[]) => lines.push('  ' + cells.map(String).join('  '))
  lines.push(`growthdesk drill — ${r.writers} writers, ${r.phase_seconds} s phases, ${r.total_seconds} s of load, Node ${r.node}, load average ${r.load_average.before} → ${r.load_average.after}`)
  lines.push('', 'Requests and errors by phase:')
  for (const [name, t] of Object.entries(r.phases as Record<string, Tally>)) {
    lines.push(`  ${name}: ${sum(t.requests)} requests (${Object.entries(t.requests).map(([k, v]) => `${k} ${v}`).join(', ')})`)
    const errs = Object.entries(t.errors)
    lines.push(errs.length ? `    errors ${sum(t.errors)}: ${errs.map(([k, v]) => `${k} ×${v}`).join('; ')}` : '    errors 0')
  }
  lines.push('', `Kill -9 of ${r.killed.instance}: ${r.killed.in_flight_at_kill} requests in flight through the LB at the kill, ${r.killed.errors_in_phase} errors in the phase; restarted at the end of the phase`)
  lines.push('', 'Acknowledged writes against rows found on the final primary:')
  for (const [k, w] of Object.entries(r.writes as Record<string, { acknowledged: number; found: number; lost: number }>)) row(k.padEnd(14), `acknowledged ${w.acknowledged}`, `found ${w.found}`, `lost ${w.lost}`)
  lines.push('', `Read-your-writes: ${r.read_your_writes.reads} reads right after a review by the same key, ${r.read_your_writes.violations} violations`)
  for (const e of r.read_your_writes.examples) lines.push(`  ${e}`)
  lines.push(`Another key while replay was paused: ${r.other_key_reads_while_paused.reads} reads, ${r.other_key_reads_while_paused.stale} saw an older version or none yet (a replica's lag, not an error)`)
  const s = r.switchover
  lines.push('', `Switchover: database front repointed after ${s.repointed_ms} ms; first write through the LB ${s.first_write_ms === null ? 'never' : `after ${s.first_write_ms} ms`}`)
  lines.push(`  instances healthy again (direct /health): ${Object.entries(s.instances_healthy_ms).map(([k, v]) => `${k} ${v === null ? 'never' : `${v} ms`}`).join(', ')}; restarted: ${s.instances_restarted.length ? s.instances_restarted.join(', ') : 'none'}`)
  lines.push(`  haproxy's view of the instances at the end: ${Object.entries(s.lb_states_at_end).map(([k, v]) => `${k} ${v}`).join(', ')}`)
  lines.push(`  errors during it: ${Object.entries(s.errors).map(([k, v]) => `${k} ×${v}`).join('; ') || 'none'}`)
  lines.push('', `Instances that exited by themselves: ${r.instances_exited.length || 'none'}`)
  for (const e of r.instances_exited) lines.push(`  ${e.instance} during ${e.phase} (${e.code ?? e.signal}): ${e.reason}`)
  lines.push('', `5xx answers other than 502/503/504: ${r.server_errors}`)
  for (const e of r.server_error_examples) lines.push(`  ${e}`)
  lines.push('', failures.length ? `FAILED: ${failures.join('; ')}` : 'OK: nothing acknowledged lost, every writer read its own writes, no 500, recovered without a restart')
  return lines.join('\n') + '\n'
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopping = true
    if (!interrupt.signal.aborted) {
      progress(`${signal}: stopping and cleaning up (again to quit at once)`)
      interrupt.abort()
      return
    }
    cleanUp().finally(() => process.exit(130))
  })
}

let code = 2
try {
  code = await main()
} catch (err) {
  if (interrupt.signal.aborted) {
    process.stderr.write('drill: interrupted\n')
    code = 130
  } else if (err instanceof UsageError) process.stderr.write(`drill: ${err.message}\n${err.message.startsWith('cannot') ? '' : USAGE + '\n'}`)
  else process.stderr.write(`drill: ${(err as Error).stack}\n`)
  if (!interrupt.signal.aborted) code = 2
} finally {
  stopping = true
  await cleanUp()
}
process.exit(code)
