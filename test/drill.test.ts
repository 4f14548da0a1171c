// The drill of the topology (bin/drill.ts, `npm run drill`). The haproxy configuration it writes
// is checked by haproxy itself on every run (when haproxy is installed); the drill itself, a
// minute or two of PostgreSQL servers, haproxy and three instances under load, runs only with
// GROWTHDESK_DRILL=1 (short phases), and must end as `npm run drill` must: nothing acknowledged
// lost, every writer reading its own writes, no 500, the instances serving again after the
// switchover without a restart.
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { HAPROXY_BIN, haproxyConfig, haproxyUnavailable } from '../bin/haproxy.ts'
import { clusterUnavailable } from '../bin/pg-cluster.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

t.test("the drill's haproxy configuration: retries only what never reached an instance, one database server at a time", (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-drill-cfg-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const cfg = haproxyConfig({ dir, httpPort: 18080, dbPort: 15432, instances: { app1: 13001, app2: 13002 }, databases: { pg1: 15433, pg2: 15434 } })
  t.match(cfg, /option redispatch/)
  t.match(cfg, /retries 3/)
  t.notMatch(cfg, /retry-on/, 'no L7 retries: a request an instance may have begun is never sent again')
  t.match(cfg, /option httpchk GET \/health/)
  t.match(cfg, /server app1 127\.0\.0\.1:13001 check/)
  t.match(cfg, /server pg1 127\.0\.0\.1:15433\n/, 'the first database server is enabled')
  t.match(cfg, /server pg2 127\.0\.0\.1:15434 disabled/, 'the other waits in maintenance')
  t.match(cfg, new RegExp(`stats socket ${dir}/haproxy.sock mode 600 level admin`))
  const missing = haproxyUnavailable()
  if (missing) {
    t.comment(`not checked by haproxy: ${missing}`)
  } else {
    fs.writeFileSync(path.join(dir, 'haproxy.cfg'), cfg)
    const check = spawnSync(HAPROXY_BIN, ['-c', '-f', path.join(dir, 'haproxy.cfg')], { encoding: 'utf8' })
    t.equal(check.status, 0, `haproxy -c accepts it: ${check.stderr}`)
  }
  t.end()
})

const skip = process.env.GROWTHDESK_DRILL !== '1'
  ? 'the drill runs only with GROWTHDESK_DRILL=1 (PostgreSQL 15 servers, haproxy and three instances for a minute or two)'
  : (clusterUnavailable() ?? haproxyUnavailable() ?? false)

// A minute or two of set-up and load on a shared machine: more than the file's timeout in .taprc.
if (!skip) t.setTimeout(15 * 60_000)

t.test('npm run drill: nothing acknowledged lost, read-your-writes, recovery after the switchover without a restart', { skip, timeout: 15 * 60_000 }, async (t) => {
  // A process group of its own: if tap ends this file's process, the drill still cleans up after
  // itself (a SIGINT from the teardown stops it at its next step).
  const child = spawn(process.execPath, ['bin/drill.ts', '--json', '--phase-seconds', '5', '--writers', '2'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (c: Buffer) => { stdout += c })
  child.stderr.on('data', (c: Buffer) => { stderr += c })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGINT') })
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve))
  t.comment(stderr.trim())
  const report = JSON.parse(stdout) as {
    ok: boolean
    failures: string[]
    writes: Record<string, { acknowledged: number; found: number; lost: number }>
    read_your_writes: { reads: number; violations: number }
    server_errors: number
    instances_exited: unknown[]
    switchover: { first_write_ms: number | null; instances_restarted: string[]; instances_healthy_ms: Record<string, number | null> }
  }
  t.same(report.failures, [], 'the drill names no failure')
  t.equal(code, 0, 'exit code 0')
  for (const [kind, w] of Object.entries(report.writes)) {
    t.ok(w.acknowledged > 0, `${kind}: some were acknowledged`)
    t.equal(w.lost, 0, `${kind}: none acknowledged is missing`)
  }
  t.ok(report.read_your_writes.reads > 0, 'writers read their writes back')
  t.equal(report.read_your_writes.violations, 0, 'every writer read its own writes')
  t.equal(report.server_errors, 0, 'no 500')
  t.same(report.instances_exited, [], 'no instance exited by itself')
  t.not(report.switchover.first_write_ms, null, 'a write succeeded after the switchover')
  t.same(report.switchover.instances_restarted, [], 'no instance restarted by the switchover')
  t.notOk(Object.values(report.switchover.instances_healthy_ms).includes(null), 'every instance answers /health again')
})
