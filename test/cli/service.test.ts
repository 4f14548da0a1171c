import t from 'tap'
import { spawn } from 'node:child_process'
import path from 'node:path'
import { main } from '../../bin/cli.ts'
import { listenTestApp, seedWorkspace } from '../helpers/app.ts'

function capture(env: NodeJS.ProcessEnv) {
  const out = { stdout: '', stderr: '' }
  return {
    out,
    io: { stdout: { write: (s: string) => (out.stdout += s) }, stderr: { write: (s: string) => (out.stderr += s) }, env },
  }
}

t.test('growthdesk tools and call against a started server', async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const env = { SERVICE_URL: url, SERVICE_API_KEY: ws.keys.service }

  t.test('tools: a table of every enabled tool; --json the raw listing', async (t) => {
    const c = capture(env)
    t.equal(await main(['tools'], c.io), 0)
    for (const name of app.registry.contracts().map((x) => x.name)) t.match(c.out.stdout, new RegExp(`^${name}\\s+(read|write)\\s`, 'm'))
    const j = capture(env)
    t.equal(await main(['tools', '--json'], j.io), 0)
    t.same(JSON.parse(j.out.stdout).tools.map((x: { name: string }) => x.name), app.registry.contracts().map((x) => x.name))
  })

  t.test('call prints the result as JSON; --project, SERVICE_PROJECT and the body select the project', async (t) => {
    const a = capture(env)
    t.equal(await main(['call', 'get_daily_ops', '--project', ws.project.slug, '--json', '{"window":"30d"}'], a.io), 0)
    const result = JSON.parse(a.out.stdout)
    t.equal(result.window, '30d')
    t.equal(result.days.length, 30)
    const b = capture({ ...env, SERVICE_PROJECT: ws.project.id })
    t.equal(await main(['call', 'get_project'], b.io), 0)
    t.equal(JSON.parse(b.out.stdout).slug, ws.project.slug)
    const c = capture(env)
    t.equal(await main(['call', 'get_project', '--json', JSON.stringify({ project: ws.project.slug })], c.io), 0)
    const d = capture(env)
    t.equal(await main(['call', 'discover_tools'], d.io), 0, 'no --json means {}')
  })

  t.test('a tool error prints the error object on stderr and exits 1', async (t) => {
    const c = capture(env)
    t.equal(await main(['call', 'get_daily_ops', '--project', ws.project.slug, '--json', '{"window":"9d"}'], c.io), 1)
    t.equal(c.out.stdout, '')
    const err = JSON.parse(c.out.stderr)
    t.equal(err.error.code, 'invalid_arguments')
    t.equal(err.error.details[0].path, 'window')
    const missing = capture(env)
    t.equal(await main(['call', 'get_project'], missing.io), 1)
    t.equal(JSON.parse(missing.out.stderr).error.details[0].path, 'project')
    const unknown = capture(env)
    t.equal(await main(['call', 'no_such_tool'], unknown.io), 1)
    t.equal(JSON.parse(unknown.out.stderr).error.code, 'not_found')
  })

  t.test('usage errors exit 2 with one line naming the problem', async (t) => {
    const noUrl = capture({ SERVICE_API_KEY: ws.keys.service })
    t.equal(await main(['tools'], noUrl.io), 2)
    t.match(noUrl.out.stderr, /^growthdesk: SERVICE_URL is not set/)
    t.equal(noUrl.out.stderr.trim().split('\n').length, 1)
    const noKey = capture({ SERVICE_URL: url })
    t.equal(await main(['call', 'discover_tools'], noKey.io), 2)
    t.match(noKey.out.stderr, /SERVICE_API_KEY/)
    const bad = capture(env)
    t.equal(await main(['call', 'discover_tools', '--json', '{nope'], bad.io), 2)
    t.match(bad.out.stderr, /--json is not valid JSON/)
    const arr = capture(env)
    t.equal(await main(['call', 'discover_tools', '--json', '[1]'], arr.io), 2)
  })

  t.test('a network failure names the URL and exits 1', async (t) => {
    const c = capture({ SERVICE_URL: 'http://127.0.0.1:9', SERVICE_API_KEY: ws.keys.service })
    t.equal(await main(['tools'], c.io), 1)
    t.match(c.out.stderr, /cannot reach http:\/\/127\.0\.0\.1:9\/v1\/tools/)
  })

  t.test('the real bin, as a user runs it', async (t) => {
    const bin = path.join(import.meta.dirname, '..', '..', 'bin', 'growthdesk.js')
    const run = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, ...env } })
        let stdout = ''
        let stderr = ''
        child.stdout.on('data', (d) => (stdout += d))
        child.stderr.on('data', (d) => (stderr += d))
        child.on('close', (code) => resolve({ code, stdout, stderr }))
      })
    const ok = await run(['call', 'list_projects'])
    t.equal(ok.code, 0, ok.stderr)
    t.equal(JSON.parse(ok.stdout).items[0].slug, ws.project.slug)
    const fail = await run(['call', 'get_project'])
    t.equal(fail.code, 1)
    t.equal(JSON.parse(fail.stderr).error.code, 'invalid_arguments')
  })
  t.end()
})
