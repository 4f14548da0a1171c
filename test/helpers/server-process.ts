// The server as `npm start` runs it (start.js with package.json's Node flags), in a process of
// its own, for the tests that kill it (test/webhooks-crash.test.ts, test/ingestion-crash.test.ts).
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Database } from '../../config.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** Polls `check` until it returns something other than undefined, or throws at the deadline. */
export async function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, deadline: number): Promise<T> {
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/**
 * The environment of a server on `database` (a PostgreSQL database's URL, or the embedded one),
 * with a fresh DATA_DIR of its own (the embedded database's folder; on PostgreSQL it holds only
 * the secrets key file, which a restart must find again), removed at teardown; listening on a
 * free loopback port, logging at info, nothing else of this process's configuration.
 */
export function serverEnv(t: { teardown: (fn: () => void) => void }, database: Database, name: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `growthdesk-${name}-`))
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...extra, DATA_DIR: dataDir }
  for (const name of ['PUBLIC_URL', 'NODE_OPTIONS', 'DATABASE_URL', 'SECRETS_KEY', 'SECRETS_KEY_PREVIOUS']) delete env[name]
  if (database.kind === 'postgres') env.DATABASE_URL = database.url
  return env
}

/** `npm start` with the given environment; its output, its address once it listens, and how to kill it. */
export function startServer(env: NodeJS.ProcessEnv) {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const [, ...args] = scripts.start.split(/\s+/)
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    child,
    exited,
    output: () => out,
    async url(deadline: number): Promise<string> {
      return until('the server to listen', () => {
        if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${err}${out}`)
        // "ready in …" comes after the first start's banner (printed once the port is taken).
        return /"msg":"ready in /.test(out) ? /"msg":"Server listening at (http:\/\/[^"]+)"/.exec(out)?.[1] : undefined
      }, deadline)
    },
  }
}
