// `npm run conformance`: the official MCP conformance suite against growthdesk with its
// conformance fixtures on (MCP_CONFORMANCE_FIXTURES=true; routes/mcp-conformance.ts). Builds the
// app on a fresh in-memory database, bootstraps a workspace and its keys, puts the key-adding
// proxy (bin/conformance-proxy.ts) in front of it, and runs the pinned suites one after another:
//
//   @modelcontextprotocol/conformance 0.2.0-alpha.12 (the devDependency) --requirements 2026-07-28
//   @modelcontextprotocol/conformance 0.2.0-alpha.12                     --requirements 2025-11-25
//   @modelcontextprotocol/conformance 0.1.16 (through npx)               its active suite
//
// Each scenario a run scores passes when none of its checks failed or warned. Prints one line per
// scenario and the totals (`N passed, N failed`); exits 1 when any scored scenario failed.
// `--only alpha-2026|alpha-2025|0.1.16` (repeatable) runs some of them; `--keep` keeps the
// suites' result folders and prints where.
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { startConformanceProxy } from './conformance-proxy.ts'

/** The suite versions this project is held to, pinned (README and docs/mcp.md name them). */
export const CONFORMANCE_ALPHA = '0.2.0-alpha.12'
export const CONFORMANCE_STABLE = '0.1.16'

interface Run {
  id: string
  label: string
  /** The command that runs the suite (its arguments before `server`). */
  command: string[]
  args: string[]
  /** Scenarios the run reports but does not score (`not_scored` of the requirements file). */
  notScored: (scenario: string) => boolean
}

const require = createRequire(import.meta.url)
const alphaCli = path.join(path.dirname(require.resolve('@modelcontextprotocol/conformance/package.json')), 'dist/index.js')

/** The `not_scored` server scenarios of a requirements file of the pinned alpha. */
function notScoredOf(revision: string): Set<string> {
  const file = path.join(path.dirname(alphaCli), '..', 'requirements', `${revision}.yaml`)
  const text = readFileSync(file, 'utf8')
  const section = text.slice(text.indexOf('\nnot_scored:'))
  const names = new Set<string>()
  // Entries are `- scenario: <name>` followed by `leg: server|client`.
  for (const m of section.matchAll(/- scenario: (\S+)\s+leg: server/g)) names.add(m[1]!)
  return names
}

const RUNS: Run[] = [
  { id: 'alpha-2026', label: `conformance ${CONFORMANCE_ALPHA}, 2026-07-28`, command: [process.execPath, alphaCli], args: ['--requirements', '2026-07-28'], notScored: (s) => notScoredOf('2026-07-28').has(s) },
  { id: 'alpha-2025', label: `conformance ${CONFORMANCE_ALPHA}, 2025-11-25`, command: [process.execPath, alphaCli], args: ['--requirements', '2025-11-25'], notScored: (s) => notScoredOf('2025-11-25').has(s) },
  { id: '0.1.16', label: `conformance ${CONFORMANCE_STABLE}, active suite`, command: ['npx', '-y', `@modelcontextprotocol/conformance@${CONFORMANCE_STABLE}`], args: [], notScored: () => false },
]

interface Check { id: string; status: string; errorMessage?: string }
export interface ScenarioResult { scenario: string; passed: boolean; problems: string[] }

/** Runs one suite against `url`; the scored scenarios, each passed or not, with what failed. */
async function runSuite(run: Run, url: string, keep: boolean): Promise<{ results: ScenarioResult[]; output: string; dir: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), `gd-conformance-${run.id}-`))
  const [cmd, ...pre] = run.command
  const child = spawn(cmd!, [...pre, 'server', '--url', url, '-o', dir, ...run.args], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (c: Buffer) => (output += c.toString()))
  child.stderr.on('data', (c: Buffer) => (output += c.toString()))
  await new Promise((resolve) => child.on('close', resolve))
  const results: ScenarioResult[] = []
  for (const entry of readdirSync(dir).sort()) {
    // server-<scenario>-<ISO timestamp>
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '')
    if (run.notScored(scenario)) continue
    let checks: Check[]
    try {
      checks = JSON.parse(readFileSync(path.join(dir, entry, 'checks.json'), 'utf8')) as Check[]
    } catch {
      results.push({ scenario, passed: false, problems: ['no checks.json'] })
      continue
    }
    const problems = checks.filter((c) => !['SUCCESS', 'SKIPPED', 'INFO'].includes(c.status)).map((c) => `${c.id}: ${c.status}${c.errorMessage ? ` ${c.errorMessage}` : ''}`)
    results.push({ scenario, passed: problems.length === 0, problems })
  }
  if (!keep) rmSync(dir, { recursive: true, force: true })
  return { results, output, dir }
}

/** A free loopback port (bound, then released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { only: { type: 'string', multiple: true }, keep: { type: 'boolean', default: false } } })
  const runs = values.only ? RUNS.filter((r) => values.only!.includes(r.id)) : RUNS
  if (runs.length === 0) {
    process.stderr.write(`--only takes ${RUNS.map((r) => r.id).join(', ')}\n`)
    return 2
  }
  // The app is imported here, after the arguments: `--only` mistakes cost no start.
  const { buildApp } = await import('../app.ts')
  const { loadConfig } = await import('../config.ts')
  const { bootstrap } = await import('./admin.ts')
  const config = loadConfig({ ...process.env, DATABASE_URL: 'memory://', PORT: '0', HOST: '127.0.0.1', PUBLIC_URL: undefined, LOG_LEVEL: 'silent', MCP_CONFORMANCE_FIXTURES: 'true', NODE_ENV: 'test', RATE_LIMIT_MAX: '0', RATE_LIMIT_CONCURRENCY: '0', WEBHOOKS_ENABLED: 'false' })
  // PUBLIC_URL must be the address the app listens on (its Host and Origin checks).
  const port = await freePort()
  const app = await buildApp({ config: { ...config, port, publicUrl: `http://127.0.0.1:${port}` } })
  await app.listen({ host: '127.0.0.1', port })
  const { keys } = await bootstrap(app, { workspace: 'Conformance' })
  const proxy = await startConformanceProxy({ target: `http://127.0.0.1:${port}`, key: keys.service })
  let passed = 0
  let failed = 0
  try {
    for (const run of runs) {
      const started = Date.now()
      const { results, output, dir } = await runSuite(run, `${proxy.url}/mcp`, values.keep)
      const ok = results.filter((r) => r.passed).length
      process.stdout.write(`\n=== ${run.label}: ${ok} of ${results.length} scored scenarios pass (${((Date.now() - started) / 1000).toFixed(0)} s)${values.keep ? `, results in ${dir}` : ''}\n`)
      for (const r of results) {
        process.stdout.write(`${r.passed ? 'ok    ' : 'FAILED'} ${r.scenario}\n`)
        for (const p of r.problems) process.stdout.write(`         ${p}\n`)
      }
      if (results.length === 0) {
        process.stdout.write(`the suite reported nothing:\n${output.slice(-3000)}\n`)
        failed++
      }
      passed += ok
      failed += results.length - ok
    }
  } finally {
    await proxy.close()
    await app.close()
  }
  process.stdout.write(`\n${passed} passed, ${failed} failed\n`)
  return failed === 0 ? 0 : 1
}

process.exitCode = await main()
