// npm run bench:start — where a start spends its time: spawns the server as `npm start` does
// (package.json's command, minus npm itself), times spawn → first 200 from /health, reads the
// server's own start-up line (module load, database open, migrations, plugins) and the idle RSS
// a few seconds later.
// Embedded database: a first start on an empty folder (migrations, bootstrap), then warm
// restarts. PostgreSQL (the server BENCH_DATABASE_URL names, default the local one, as for every
// bench): the same on a fresh database, dropped afterwards (also on Ctrl-C).
//   node bench/start.ts [--runs 5] [--idle 5]
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { median } from './client-process.ts'
import { databaseUrl, dropDatabases, recreateDatabase, registerCleanup } from './database.ts'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, idle: { type: 'string', default: '5' } } })
const RUNS = Number(values.runs)
const IDLE_MS = Number(values.idle) * 1000
const root = path.join(import.meta.dirname, '..')
// `npm start`'s command (`node <flags> start.js`), run by this Node.
const startArgs = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } })
  .scripts.start.split(/\s+/).slice(1)

interface Startup { node: number; modules: number; databaseOpen: number; migrations: number; plugins: number; firstStart: number; ready: number }
interface Run { health: number; startup: Startup; rssMb: number }

function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024)
}

async function startOnce(env: NodeJS.ProcessEnv, port: number): Promise<Run> {
  const began = performance.now()
  const child = spawn(process.execPath, startArgs, {
    cwd: root, env: { ...env, PORT: String(port), LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'],
  })
  let out = ''
  const startupLine = new Promise<Startup>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk
      for (const line of out.split('\n')) {
        if (line.includes('"startup"')) resolve((JSON.parse(line) as { startup: Startup }).startup)
      }
    })
  })
  let health = 0
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${out}`)
    const ok = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)
    if (ok) {
      health = performance.now() - began
      break
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const startup = await startupLine
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS))
  const rss = rssMb(child.pid!)
  child.kill('SIGTERM')
  await new Promise((resolve) => child.once('exit', resolve))
  return { health, startup, rssMb: rss }
}

function report(label: string, runs: Run[]) {
  const col = (f: (r: Run) => number) => String(Math.round(median(runs.map(f)))).padStart(8)
  console.log(
    `${label.padEnd(34)}${col((r) => r.health)}${col((r) => r.startup.node)}${col((r) => r.startup.modules)}` +
      `${col((r) => r.startup.databaseOpen)}${col((r) => r.startup.migrations)}${col((r) => r.startup.plugins)}` +
      `${col((r) => r.startup.firstStart)}${col((r) => r.rssMb)}   (n=${runs.length})`
  )
}

async function series(label: string, env: NodeJS.ProcessEnv, fresh: () => Promise<void>) {
  const port = 4700 + Math.floor(Math.random() * 500)
  const first: Run[] = []
  const warm: Run[] = []
  for (let i = 0; i < Math.max(1, Math.ceil(RUNS / 2)); i++) {
    await fresh()
    first.push(await startOnce(env, port))
  }
  for (let i = 0; i < RUNS; i++) warm.push(await startOnce(env, port))
  report(`${label}: first start`, first)
  report(`${label}: warm start`, warm)
}

console.log(`node ${process.version}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}, ${os.cpus().length} cpus; medians, ms (RSS in MB, ${IDLE_MS / 1000} s idle)`)
console.log(`${''.padEnd(34)}${['/health', 'node', 'modules', 'db open', 'migrate', 'plugins', 'bootstr', 'RSS MB'].map((h) => h.padStart(8)).join('')}`)

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-bench-start-'))
const name = `growthdesk_bench_start_${process.pid}`
const cleanup = registerCleanup(async () => {
  fs.rmSync(dataDir, { recursive: true, force: true })
  await dropDatabases([name])
})
const baseEnv = { ...process.env }
delete baseEnv.DATABASE_URL
try {
  await series('embedded (DATA_DIR)', { ...baseEnv, DATA_DIR: dataDir }, async () => {
    fs.rmSync(dataDir, { recursive: true, force: true })
  })
  await series('PostgreSQL', { ...baseEnv, DATABASE_URL: databaseUrl(name) }, () => recreateDatabase(name))
} finally {
  await cleanup()
}
