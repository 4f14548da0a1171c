// `npm start` as a user runs it: package.json's flags, start.js, a data folder of its own. The
// server answers, makes its one memory-reducing collection a second after the start (which needs
// npm start's --expose-gc), and still answers afterwards.
import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

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
