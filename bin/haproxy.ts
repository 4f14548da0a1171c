// A throwaway haproxy (Debian's) on loopback for `npm run drill`: an HTTP front over the
// instances and a TCP front for the primary database, driven through its runtime API (a stats
// socket at admin level), so that a switchover repoints the database front without a restart
// of anything.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'

/** Where Debian installs haproxy (HAPROXY_BIN overrides). */
export const HAPROXY_BIN = process.env.HAPROXY_BIN ?? '/usr/sbin/haproxy'

/** Why haproxy cannot be run here, or null when it can. */
export function haproxyUnavailable(): string | null {
  if (!fs.existsSync(HAPROXY_BIN)) return `no haproxy at ${HAPROXY_BIN} (Debian's haproxy; HAPROXY_BIN to use another)`
  return null
}

export interface HaproxyLayout {
  dir: string
  httpPort: number
  dbPort: number
  /** The instances, as `name → port`. */
  instances: Record<string, number>
  /** The database servers, as `name → port`; the first one is enabled, the others in maintenance. */
  databases: Record<string, number>
}

/**
 * The configuration. HTTP: round robin over the instances, a health check on GET /health every
 * 250 ms (2 failures take one out, 1 success puts it back), and a request whose connection to an
 * instance fails is sent to another (`retries` + `option redispatch`: only a connection failure
 * is retried, never a request an instance may have begun, so a POST is never sent twice). A
 * killed instance so costs only the requests it had in flight. Database: TCP, one server enabled
 * at a time; the rest wait in maintenance for a switchover.
 */
export function haproxyConfig(layout: HaproxyLayout): string {
  const [first, ...others] = Object.entries(layout.databases)
  if (!first) throw new Error('haproxy needs at least one database server')
  return [
    'global',
    `  stats socket ${path.join(layout.dir, 'haproxy.sock')} mode 600 level admin`,
    '  maxconn 4096',
    '',
    'defaults',
    '  timeout connect 2s',
    // Longer than the app's REQUEST_TIMEOUT_MS (25 s): the instance, not haproxy, ends a slow request.
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout check 1s',
    '',
    'frontend http_front',
    '  mode http',
    `  bind 127.0.0.1:${layout.httpPort}`,
    '  default_backend instances',
    '',
    'backend instances',
    '  mode http',
    '  balance roundrobin',
    '  retries 3',
    '  option redispatch 1',
    '  option httpchk GET /health',
    '  http-check expect status 200',
    ...Object.entries(layout.instances).map(([name, port]) => `  server ${name} 127.0.0.1:${port} check inter 250 fall 2 rise 1`),
    '',
    'frontend db_front',
    '  mode tcp',
    `  bind 127.0.0.1:${layout.dbPort}`,
    // Idle pooled connections of the instances stay open for as long as they like.
    '  timeout client 1h',
    '  default_backend primary',
    '',
    'backend primary',
    '  mode tcp',
    '  timeout server 1h',
    `  server ${first[0]} 127.0.0.1:${first[1]}`,
    ...others.map(([name, port]) => `  server ${name} 127.0.0.1:${port} disabled`),
    '',
  ].join('\n')
}

export interface Haproxy {
  process: ChildProcess
  /** Sends one command to the runtime API and answers its output. */
  command(line: string): Promise<string>
  /** The state of each server of a backend (`UP`, `DOWN`, `MAINT`, …), from `show servers state`. */
  states(backend: string): Promise<Record<string, string>>
  stop(): Promise<void>
}

const OPERATIONAL: Record<string, string> = { 0: 'STOPPED', 1: 'STARTING', 2: 'UP', 3: 'STOPPING' }

/** Checks the configuration, then runs haproxy in the foreground until stop(). */
export async function startHaproxy(layout: HaproxyLayout): Promise<Haproxy> {
  const cfg = path.join(layout.dir, 'haproxy.cfg')
  const socket = path.join(layout.dir, 'haproxy.sock')
  fs.writeFileSync(cfg, haproxyConfig(layout))
  const check = spawnSync(HAPROXY_BIN, ['-c', '-q', '-f', cfg], { encoding: 'utf8' })
  if (check.status !== 0) throw new Error(`haproxy refused its configuration: ${check.stderr || check.stdout}`)
  const log = fs.openSync(path.join(layout.dir, 'haproxy.log'), 'a')
  const child = spawn(HAPROXY_BIN, ['-db', '-f', cfg], { stdio: ['ignore', log, log] })
  fs.closeSync(log)
  const command = (line: string) =>
    new Promise<string>((resolve, reject) => {
      const conn = net.connect(socket)
      let out = ''
      conn.setEncoding('utf8')
      conn.on('data', (chunk) => { out += chunk })
      conn.on('error', reject)
      conn.on('end', () => resolve(out.trim()))
      conn.end(line + '\n')
    })
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${fs.readFileSync(path.join(layout.dir, 'haproxy.log'), 'utf8')}`)
    if (fs.existsSync(socket) && (await command('show info').catch(() => '')).includes('Name: HAProxy')) break
    if (i > 100) throw new Error('haproxy did not open its stats socket within 10 s')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return {
    process: child,
    command,
    async states(backend) {
      // `show servers state <backend>`: a version line, a header, then one line per server:
      // be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state …
      const lines = (await command(`show servers state ${backend}`)).split('\n').filter((l) => l && !l.startsWith('#') && !/^\d+$/.test(l))
      const states: Record<string, string> = {}
      for (const line of lines) {
        const [, , , name = '', , op = '', admin = '0'] = line.split(/\s+/)
        states[name] = Number(admin) & 1 ? 'MAINT' : (OPERATIONAL[op] ?? op)
      }
      return states
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))])
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    },
  }
}
