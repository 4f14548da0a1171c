// `growthdesk admin reset-password --email E [--json]`: a link (PUBLIC_URL/console/reset/gdp_…)
// that sets a new password once, for one hour; one-line errors and exit codes like every admin
// command. On PostgreSQL it works while the server runs (the executable, another process,
// writes the link the running server then accepts); the embedded database is held by the
// server, and the command says how to free it.
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { main } from '../../bin/cli.ts'
import { buildTestApp, freePort, seedWorkspace, TEST_SECRETS_KEY_TEXT, testDatabase } from '../helpers/app.ts'
import { Agent } from '../console/helpers.ts'
import { verifyPassword } from '../../core/passwords.ts'
import { users } from '../../db/schema.ts'

const BIN = fileURLToPath(new URL('../../bin/growthdesk.js', import.meta.url))
const NEW_PASSWORD = 'a long new password for the owner'
const LINK = /^http:\/\/gd\.example\.test\/console\/reset\/gdp_[0-9A-Za-z]{38}$/

// Each command opens the database afresh (seconds on the embedded one): more than the usual 120 s.
t.setTimeout(300_000)

async function cli(env: NodeJS.ProcessEnv, ...argv: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, env })
  return { code, stdout, stderr }
}

/** Opens a reset link's page and sets the password with it; the status of the form's answer. */
async function useLink(agent: Agent, link: string, password = NEW_PASSWORD) {
  const where = new URL(link).pathname
  const page = await agent.get(where)
  if (page.statusCode !== 200) return page.statusCode
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)![1]!
  return (await agent.post(where, { _csrf: csrf, password, repeat: password })).statusCode
}

t.test('reset-password on the configured database: text and --json, a link that works once', async (t) => {
  const database = await testDatabase(t)
  const dataDir = database.kind === 'pglite' ? fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-cli-reset-')) : undefined
  if (dataDir) t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const env = { ...(database.kind === 'postgres' ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir }), SECRETS_KEY: TEST_SECRETS_KEY_TEXT, PUBLIC_URL: 'http://gd.example.test' }

  const boot = await cli(env, 'admin', 'bootstrap', '--json', '--workspace', 'Lost', '--email', 'owner@lost.test')
  t.equal(boot.code, 0, boot.stderr)
  const before = Date.now()
  const json = await cli(env, 'admin', 'reset-password', '--email', 'Owner@Lost.test', '--json')
  t.equal(json.code, 0, json.stderr)
  t.equal(json.stderr, '')
  t.match(json.stdout, /^[^\n]+\n$/, 'one line')
  const result = JSON.parse(json.stdout)
  t.strictSame(Object.keys(result), ['email', 'link', 'expires_at'])
  t.equal(result.email, 'owner@lost.test')
  t.match(result.link, LINK, 'PUBLIC_URL/console/reset/gdp_…')
  const expires = Date.parse(result.expires_at)
  t.ok(expires >= before + 3_600_000 - 5_000 && expires <= Date.now() + 3_600_000, 'valid for one hour')

  const text = await cli(env, 'admin', 'reset-password', '--email', 'owner@lost.test')
  t.equal(text.code, 0)
  t.match(text.stdout, /^Password-reset link for owner@lost\.test, valid once until \d{4}-\d\d-\d\dT[\d:.]+Z:\n {2}http:\/\/gd\.example\.test\/console\/reset\/gdp_[0-9A-Za-z]{38}\nOpen it in a browser to choose a new password\./)
  const textLink = /http:\/\/\S+/.exec(text.stdout)![0]
  t.not(textLink, result.link, 'each run makes a new link')

  t.strictSame(await cli(env, 'admin', 'reset-password', '--email', 'nobody@lost.test'), { code: 1, stdout: '', stderr: 'growthdesk: No user with the email nobody@lost.test.\n' })
  const usage = await cli(env, 'admin', 'reset-password')
  t.equal(usage.code, 2)
  t.match(usage.stderr, /^growthdesk: 'admin reset-password' needs --email EMAIL \(see 'growthdesk help admin reset-password'\)\n$/)
  const help = await cli({}, 'help', 'admin', 'reset-password')
  t.match(help.stdout, /^Usage: growthdesk admin reset-password --email EMAIL \[--json\]\n/)
  t.match(help.stdout, /same PUBLIC_URL as the server/)
  t.match((await cli({}, 'help')).stdout, /admin reset-password +Print a single-use link/)

  // The server on that database (after the commands: the embedded one admits one process).
  const app = await buildTestApp(t, { database: dataDir ? { kind: 'pglite', dataDir } : database })
  const owner = new Agent(app, '10.9.0.1')
  t.equal(await useLink(owner, result.link), 303, 'the link sets a new password')
  t.equal((await owner.get('/console')).statusCode, 200, 'and signs in')
  const [row] = (await app.db.select().from(users)).filter((u) => u.email === 'owner@lost.test')
  t.ok(await verifyPassword(NEW_PASSWORD, row!.passwordHash), 'the password is the new one')
  t.equal(await useLink(new Agent(app, '10.9.0.2'), result.link, 'yet another password here'), 410, 'once only')
  t.equal(await useLink(new Agent(app, '10.9.0.3'), textLink, 'yet another password here'), 410, 'and the other link it made is spent too')
  t.ok(await verifyPassword(NEW_PASSWORD, (await app.db.select().from(users)).find((u) => u.email === 'owner@lost.test')!.passwordHash))
})

t.test('while the server runs', async (t) => {
  const database = await testDatabase(t)
  if (database.kind === 'pglite') {
    // The embedded database is held by the running server: refused, with the way out.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-cli-reset-'))
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    const app = await buildTestApp(t, { database: { kind: 'pglite', dataDir } })
    const ws = await seedWorkspace(app)
    const r = await cli({ DATA_DIR: dataDir, SECRETS_KEY: TEST_SECRETS_KEY_TEXT }, 'admin', 'reset-password', '--email', ws.user.email, '--json')
    t.equal(r.code, 1)
    t.equal(r.stdout, '')
    t.match(r.stderr, /^growthdesk: The embedded database in .* is in use by another growthdesk process \(pid \d+\)\. Stop that process first, or set DATABASE_URL to a PostgreSQL server, which many processes can share\.\n$/)
    return
  }
  // On PostgreSQL: the executable, another process, makes the link while the server listens.
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const app = await buildTestApp(t, { database, config: { publicUrl: url, port } })
  await app.listen({ host: '127.0.0.1', port })
  const ws = await seedWorkspace(app)
  const child = spawn(BIN, ['admin', 'reset-password', '--email', ws.user.email, '--json'], {
    env: { PATH: process.env.PATH, DATABASE_URL: database.url, SECRETS_KEY: TEST_SECRETS_KEY_TEXT, PUBLIC_URL: url },
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const [code] = await once(child, 'exit')
  t.equal(code, 0, stderr)
  const { link } = JSON.parse(stdout) as { link: string }
  t.ok(link.startsWith(`${url}/console/reset/gdp_`), 'a link to the running server')

  // Through the running server's socket, as a browser would.
  const page = await fetch(link)
  t.equal(page.status, 200, 'the running server opens it')
  const cookies = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!
  const post = (password: string) => fetch(link, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookies, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, password, repeat: password }),
  })
  const set = await post(NEW_PASSWORD)
  t.equal(set.status, 303, 'and sets the password')
  t.equal(set.headers.get('location'), '/console')
  t.equal((await post('and once more with feeling')).status, 410, 'once')
  const [row] = (await app.db.select().from(users)).filter((u) => u.email === ws.user.email)
  t.ok(await verifyPassword(NEW_PASSWORD, row!.passwordHash))
})
