// `npm start` as a user runs it: package.json's flags, start.js, a data folder of its own. The
// server answers, makes its one memory-reducing collection a second after the start (which needs
// npm start's --expose-gc), and still answers afterwards.
import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import net from 'node:net'
import { once } from 'node:events'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

t.test("npm start's process collects start-up garbage once, then serves on", async (t) => {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  const [node, ...args] = scripts.start.split(/\s+/)
  t.equal(node, 'node')
  t.ok(args.includes('--expose-gc'), 'npm start exposes gc() for the collection')

  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-start-'))
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'debug' }
  delete env.DATABASE_URL
  delete env.PUBLIC_URL
  delete env.NODE_OPTIONS
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.teardown(() => child.kill('SIGKILL'))

  // Log lines as they come: the address it listens on, then the collection.
  const lines: Record<string, unknown>[] = []
  let waiting: (() => void) | undefined
  let buffered = ''
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    for (const line of parts) {
      if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>)
    }
    waiting?.()
  })
  const logged = async (msg: RegExp) => {
    const deadline = Date.now() + 60_000
    for (;;) {
      const line = lines.find((l) => msg.test(String(l.msg)))
      if (line) return line
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no log line ${msg} (exit ${child.exitCode})`)
      await new Promise<void>((resolve) => {
        waiting = resolve
        setTimeout(resolve, 500)
      })
    }
  }

  const listening = await logged(/^Server listening at /)
  const url = String(listening.msg).replace('Server listening at ', '')
  t.equal((await fetch(`${url}/health`)).status, 200, 'answers once ready')

  const collected = await logged(/^start-up garbage collected$/)
  t.type(collected.ms, 'number', 'the collection is logged with its duration')
  t.equal((await fetch(`${url}/health`)).status, 200, 'answers after the collection')
})

t.test('a port in use: one line, and the first start creates nothing until it listens', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-start-'))
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const taken = net.createServer()
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
  t.teardown(() => taken.close())
  const port = (taken.address() as net.AddressInfo).port
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn' }
  delete env.DATABASE_URL
  delete env.PUBLIC_URL
  delete env.NODE_OPTIONS
  const start = (port: number) => {
    const child = spawn(process.execPath, ['start.js'], { cwd: root, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
    t.teardown(() => child.kill('SIGKILL'))
    const out = { stdout: '', stderr: '' }
    child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()))
    return { child, out }
  }

  const refused = start(port)
  const [code] = await once(refused.child, 'exit')
  t.equal(code, 1)
  t.equal(refused.out.stderr, `growthdesk: Port ${port} on 127.0.0.1 is in use by another process: stop it, or set PORT to a free port.\n`)
  t.notMatch(refused.out.stdout, /password|gdm_|first start/, 'no credentials were made (or printed) for a start that failed')

  // The next start, on a free port, is still the first: its banner has the password and keys.
  const next = start(0)
  const deadline = Date.now() + 60_000
  while (!/owner password|password:/i.test(next.out.stdout) && Date.now() < deadline && next.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 200))
  t.match(next.out.stdout, /first start/, 'the banner of a first start')
  t.match(next.out.stdout, /gdm_[0-9A-Za-z]{38}/, 'with the keys')
})
