// The admin command line, run in-process through main() on a database that outlives each
// command (a PGlite folder, or a fresh PostgreSQL database), then inspected through the app;
// plus the real executable once, and the refusal to open an embedded database held by another process.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { main } from '../../bin/cli.ts'
import { buildApp } from '../../app.ts'
import type { Database } from '../../config.ts'
import { apiKeys, users } from '../../db/schema.ts'
import { operations } from '../../tools/index.ts'
import { buildTestApp, seedWorkspace, TEST_SECRETS_KEY_TEXT, testConfig, testDatabase } from '../helpers/app.ts'
import { verifyPassword } from '../../core/passwords.ts'

interface Teardown {
  teardown(fn: () => unknown): void
}

const BIN = fileURLToPath(new URL('../../bin/growthdesk.js', import.meta.url))
const KEY = {
  mcp: /^gdm_[0-9A-Za-z]{38}$/,
  service: /^gds_[0-9A-Za-z]{38}$/,
  ingest: /^gdi_[0-9A-Za-z]{38}$/,
}
const ONE_LINE = /^growthdesk: [^\n]+\n$/

function tempDir(t: Teardown): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-cli-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A database every CLI invocation of one test reaches again: the fresh PostgreSQL database
 * when DATABASE_URL is set, else a PGlite folder (memory:// would vanish after each command).
 */
async function persistentDatabase(t: Teardown): Promise<{ env: NodeJS.ProcessEnv; database: Database }> {
  const database = await testDatabase(t)
  // The apps the tests build on it (testConfig) seal with TEST_SECRETS_KEY: the commands too.
  if (database.kind === 'postgres') return { env: { DATABASE_URL: database.url, SECRETS_KEY: TEST_SECRETS_KEY_TEXT }, database }
  const dataDir = tempDir(t)
  return { env: { DATA_DIR: dataDir, SECRETS_KEY: TEST_SECRETS_KEY_TEXT }, database: { kind: 'pglite', dataDir } }
}

async function cli(env: NodeJS.ProcessEnv, ...argv: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
  })
  return { code, stdout, stderr }
}

/** Runs a command expected to succeed with --json; returns the parsed single line. */
async function cliJson(t: Test, env: NodeJS.ProcessEnv, ...argv: string[]) {
  const r = await cli(env, ...argv, '--json')
  t.equal(r.code, 0, `${argv.join(' ')} exits 0`)
  t.equal(r.stderr, '', 'nothing on stderr')
  t.match(r.stdout, /^[^\n]+\n$/, 'exactly one line of output')
  return JSON.parse(r.stdout)
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

// Each command opens the database afresh, as a separate process would; on PGlite an open of a
// folder takes about 2 s (its creation several), so this file needs more than the usual 120 s
// when the machine is busy.
t.setTimeout(300_000)

// One database for the file: creating an embedded one takes seconds, and the executable's
// test below may as well find a database that already exists.
const { env, database } = await persistentDatabase(t)

t.test('admin commands on the configured database', async (t) => {
  const printedKeys: string[] = []
  const passwords: string[] = []

  const migrated = await cli(env, 'migrate')
  t.equal(migrated.code, 0)
  t.match(migrated.stdout, /^Migrations applied: [^\n]+ is up to date\.\n$/)

  const first = await cliJson(t, env, 'admin', 'bootstrap', '--workspace', 'Acme', '--email', 'Owner@Acme.test')
  t.strictSame(Object.keys(first), ['workspace', 'user', 'project', 'keys'])
  t.strictSame(Object.keys(first.workspace), ['id', 'name'])
  t.strictSame(Object.keys(first.user), ['id', 'email', 'password'])
  t.strictSame(Object.keys(first.project), ['id', 'slug'])
  t.strictSame(Object.keys(first.keys), ['mcp', 'service', 'ingest'])
  t.match(first, {
    workspace: { id: /^wsp_/, name: 'Acme' },
    user: { id: /^usr_/, email: 'owner@acme.test', password: /^[0-9A-Za-z]{24}$/ },
    project: { id: /^prj_/, slug: 'demo-project' },
    keys: KEY,
  })
  printedKeys.push(...Object.values<string>(first.keys))
  passwords.push(first.user.password)

  const second = await cliJson(t, env, 'admin', 'bootstrap', '--workspace', 'Second')
  t.match(second, { workspace: { name: 'Second' }, user: { email: 'owner@second.local' }, keys: KEY })
  t.not(second.workspace.id, first.workspace.id, 'a separate workspace')
  t.not(second.user.id, first.user.id)
  t.not(second.project.id, first.project.id)
  printedKeys.push(...Object.values<string>(second.keys))
  passwords.push(second.user.password)

  const member = await cliJson(t, env, 'admin', 'create-user', '--email', 'reviewer@acme.test', '--project', first.project.id, '--role', 'reviewer')
  t.strictSame(Object.keys(member), ['user', 'keys'])
  t.strictSame(Object.keys(member.user), ['id', 'email', 'password'])
  t.strictSame(Object.keys(member.keys), ['mcp', 'service'])
  t.match(member, { user: { id: /^usr_/, email: 'reviewer@acme.test' }, keys: { mcp: KEY.mcp, service: KEY.service } })
  printedKeys.push(member.keys.mcp, member.keys.service)
  passwords.push(member.user.password)

  const unknownProject = await cli(env, 'admin', 'create-user', '--email', 'x@acme.test', '--project', 'prj_missing', '--role', 'viewer')
  t.strictSame(unknownProject, { code: 1, stdout: '', stderr: "growthdesk: No project 'prj_missing'.\n" })

  const ambiguous = await cli(env, 'admin', 'create-user', '--email', 'x@acme.test', '--project', 'demo-project', '--role', 'viewer')
  t.equal(ambiguous.code, 1, 'a slug both workspaces use names no single project')
  t.match(ambiguous.stderr, /^growthdesk: The slug 'demo-project' is used in 2 workspaces; pass the project id \(prj_…\)\.\n$/)

  const before = Date.now()
  const ingest = await cliJson(t, env, 'admin', 'create-key', '--email', 'reviewer@acme.test', '--kind', 'ingest',
    '--project', 'demo-project', '--name', 'ci', '--read-only', '--expires-in-days', '30')
  t.strictSame(Object.keys(ingest), ['id', 'kind', 'name', 'key', 'display', 'project', 'read_only', 'expires_at'])
  t.match(ingest, { id: /^key_/, kind: 'ingest', name: 'ci', key: KEY.ingest, project: first.project.id, read_only: true })
  const after = Date.now()
  t.equal(ingest.display, `gdi_…${ingest.key.slice(-4)}`)
  const expiresAt = Date.parse(ingest.expires_at)
  t.ok(expiresAt >= before + 30 * 86_400_000 && expiresAt <= after + 30 * 86_400_000, 'expires 30 days after it was made')
  printedKeys.push(ingest.key)

  const service = await cliJson(t, env, 'admin', 'create-key', '--email', 'reviewer@acme.test', '--kind', 'service')
  t.match(service, { kind: 'service', name: '', key: KEY.service, project: null, read_only: false, expires_at: null })
  printedKeys.push(service.key)

  t.strictSame(await cliJson(t, env, 'admin', 'revoke-key', service.id), { id: service.id, revoked: true })

  const tool = operations[0]?.name
  await t.test('tools disable and enable', { skip: tool ? false : 'no tool is registered yet' }, async (t) => {
    const ws = first.workspace.id
    t.strictSame(await cliJson(t, env, 'admin', 'tools', 'disable', tool!, '--workspace', ws), {
      workspace: ws, tool, enabled: false, disabled_tools: [tool],
    })
    t.strictSame(await cliJson(t, env, 'admin', 'tools', 'enable', tool!, '--workspace', ws), {
      workspace: ws, tool, enabled: true, disabled_tools: [],
    })
  })
  const unknownTool = await cli(env, 'admin', 'tools', 'disable', 'no_such_tool', '--workspace', first.workspace.id)
  t.equal(unknownTool.code, 1)
  t.match(unknownTool.stderr, /^growthdesk: There is no tool named 'no_such_tool'\./)

  const readable = await cli(env, 'admin', 'create-key', '--email', 'reviewer@acme.test', '--kind', 'mcp', '--name', 'laptop')
  t.equal(readable.code, 0)
  t.match(readable.stdout, /^Created mcp key key_\w+ \(gdm_…\w{4}\) for reviewer@acme\.test\.\n {2}key: +gdm_\w{38}\n/)
  t.match(readable.stdout, /shown once and stored only as a hash/)
  printedKeys.push(/gdm_\w{38}/.exec(readable.stdout)![0])

  await t.test('list-workspaces and list-keys: the ids other commands take', async (t) => {
    const { workspaces } = await cliJson(t, env, 'admin', 'list-workspaces')
    t.match(workspaces, [
      { id: first.workspace.id, name: 'Acme', users: 2, projects: 1, disabled_tools: [] },
      { id: second.workspace.id, name: 'Second', users: 1, projects: 1 },
    ], 'both workspaces with their ids, oldest first')
    const table = await cli(env, 'admin', 'list-workspaces')
    t.equal(table.code, 0)
    t.match(table.stdout, /^ID +NAME +USERS +PROJECTS +DISABLED TOOLS\n/)
    t.match(table.stdout, new RegExp(`\\n${first.workspace.id} +Acme +2 +1 +-\\n`))

    const all = (await cliJson(t, env, 'admin', 'list-keys')).keys
    t.equal(all.length, printedKeys.length, 'every key made so far')
    t.notOk(JSON.stringify(all).match(/gd[msi]_[0-9A-Za-z]{38}/), 'no key itself, only the masked form')
    const narrowed = all.find((k: { id: string }) => k.id === ingest.id)
    t.strictSame(narrowed, {
      id: ingest.id,
      workspace: first.workspace.id,
      user: 'reviewer@acme.test',
      kind: 'ingest',
      name: 'ci',
      display: ingest.display,
      project: { id: first.project.id, slug: 'demo-project' },
      read_only: true,
      expires_at: ingest.expires_at,
      expired: false,
      created_at: narrowed.created_at,
      last_used_at: null,
      revoked_at: null,
    }, 'workspace, user, kind, name, display, id, project, read-only, expiry, last use, revoked')
    t.ok(all.find((k: { id: string }) => k.id === service.id).revoked_at, 'the revoked key says so')

    const acme = (await cliJson(t, env, 'admin', 'list-keys', '--workspace', first.workspace.id)).keys
    t.ok(acme.length > 0 && acme.every((k: { workspace: string }) => k.workspace === first.workspace.id), '--workspace: only that workspace')
    const mine = (await cliJson(t, env, 'admin', 'list-keys', '--user', 'Reviewer@Acme.test', '--kind', 'service')).keys
    t.strictSame(mine.map((k: { id: string }) => k.id).sort(), all.filter((k: { user: string; kind: string }) => k.user === 'reviewer@acme.test' && k.kind === 'service').map((k: { id: string }) => k.id).sort(), '--user and --kind')
    t.equal(mine.length, 2)
    const active = (await cliJson(t, env, 'admin', 'list-keys', '--user', 'reviewer@acme.test', '--kind', 'service', '--active')).keys
    t.equal(active.length, 1, '--active hides the revoked one')

    const readable = await cli(env, 'admin', 'list-keys', '--workspace', first.workspace.id, '--kind', 'ingest')
    t.equal(readable.code, 0)
    t.match(readable.stdout, /^WORKSPACE +USER +KIND +NAME +KEY +ID +PROJECT +ACCESS +EXPIRES +LAST USED +STATE\n/)
    t.match(readable.stdout, new RegExp(`reviewer@acme\\.test +ingest +ci +gdi_…\\w{4} +${ingest.id} +demo-project +read-only +${ingest.expires_at} +never +active`))
    t.match(readable.stdout, /\n2 keys\. Revoke one with: growthdesk admin revoke-key KEY_ID\n$/)

    t.strictSame(await cli(env, 'admin', 'list-keys', '--workspace', 'acme'), { code: 1, stdout: '', stderr: "growthdesk: 'acme' is not a workspace id (wsp_…); admin list-workspaces shows them.\n" })
    t.strictSame(await cli(env, 'admin', 'list-keys', '--user', 'nobody@acme.test'), { code: 1, stdout: '', stderr: 'growthdesk: No user with the email nobody@acme.test.\n' })
    t.equal((await cli(env, 'admin', 'list-keys', '--kind', 'root')).code, 2, 'an unknown kind is a usage error')
    t.match(await cliJson(t, env, 'admin', 'list-keys', '--workspace', 'wsp_none'), { keys: [] }, 'a workspace without keys: none')
  })

  const third = await cli(env, 'admin', 'bootstrap', '--workspace', 'Third')
  t.equal(third.code, 0)
  t.match(third.stdout, /\n {2}workspace: Third \(wsp_[0-9A-Za-z]+\) /, 'the bootstrap banner prints the workspace id')
  t.match(third.stdout, /admin list-keys/, 'and says where keys are listed later')
  printedKeys.push(...(third.stdout.match(/gd[msi]_[0-9A-Za-z]{38}/g) ?? []))
  passwords.push(/password: +(\S+)/.exec(third.stdout)![1]!)

  // Only now: the embedded database admits one process, and each command above has let go of it.
  const app = await buildApp({ config: testConfig(database), logger: false })
  t.teardown(() => app.close())
  const rows = await app.db.select().from(apiKeys)
  t.equal(rows.length, printedKeys.length, 'one row per key printed')
  for (const key of printedKeys) {
    const row = rows.find((r) => r.hash === sha256(key))
    t.ok(row, `${key.slice(0, 4)}… is stored as its SHA-256`)
    t.equal(row?.display, `${key.slice(0, 4)}…${key.slice(-4)}`)
  }
  const stored = JSON.stringify(rows)
  t.notOk(printedKeys.some((key) => stored.includes(key) || stored.includes(key.slice(4, 36))), 'no column holds a key or its secret part')
  t.ok(rows.find((r) => r.id === service.id)?.revokedAt, 'the revoked key is marked revoked')
  const storedUsers = JSON.stringify(await app.db.select().from(users))
  t.notOk(passwords.some((p) => storedUsers.includes(p)), 'no password is stored in clear')
  const hashes = (await app.db.select().from(users)).map((u) => u.passwordHash)
  t.ok(hashes.length >= 3 && hashes.every((h) => h.startsWith('scrypt$32768$8$1$')), 'the CLI hashes at the production cost (N = 2^15) in this process too')
})

t.test('usage errors: one line on stderr, exit 2, before any configuration is read', async (t) => {
  // An invalid DATABASE_URL would fail with exit 1 if a command got as far as the database.
  const env = { DATABASE_URL: 'mysql://not-checked-yet' }
  const cases: [string[], RegExp][] = [
    [['frob'], /unknown command 'frob'/],
    [['admin'], /'admin' needs one of: bootstrap, create-user, create-key, revoke-key, list-keys, list-workspaces, tools/],
    [['admin', 'frob'], /unknown command 'admin frob'/],
    [['--json'], /unknown option '--json'; options go after the command/],
    [['admin', 'bootstrap', '--bogus'], /unknown option '--bogus' for 'admin bootstrap'/],
    [['admin', 'bootstrap', '--json=yes'], /--json takes no value/],
    [['admin', 'bootstrap', '--email'], /--email needs a value \(EMAIL\)/],
    [['admin', 'bootstrap', '--email', '--json'], /--email needs a value \(EMAIL\) before '--json'/],
    [['admin', 'bootstrap', '--workspace', 'A', '--workspace', 'B'], /--workspace is given twice/],
    [['admin', 'create-user', '--email', 'a@b.test', '--project', 'p'], /'admin create-user' needs --role viewer\|reviewer\|owner/],
    [['admin', 'create-user', '--email', 'a@b.test', '--project', 'p', '--role', 'admin'], /--role must be one of viewer, reviewer, owner, not 'admin'/],
    [['admin', 'create-key', '--email', 'a@b.test', '--kind', 'oauth'], /--kind must be one of mcp, service, ingest, not 'oauth'/],
    [['admin', 'create-key', '--email', 'a@b.test', '--kind', 'mcp', '--expires-in-days', 'soon'], /--expires-in-days takes a whole number of days/],
    [['admin', 'revoke-key'], /'admin revoke-key' needs KEY_ID/],
    [['admin', 'revoke-key', 'key_a', 'key_b'], /unexpected argument 'key_b'/],
    [['admin', 'tools', 'disable', 'x'], /'admin tools disable' needs --workspace WORKSPACE_ID/],
    [['help', 'frob'], /no command 'frob'/],
  ]
  for (const [argv, message] of cases) {
    const r = await cli(env, ...argv)
    t.equal(r.code, 2, `${argv.join(' ')} exits 2`)
    t.equal(r.stdout, '')
    t.match(r.stderr, ONE_LINE)
    t.match(r.stderr, message)
  }
})

t.test('help', async (t) => {
  for (const argv of [['help'], ['--help'], ['-h']]) {
    const r = await cli({}, ...argv)
    t.equal(r.code, 0, `${argv.join(' ')} exits 0`)
    t.match(r.stdout, /^growthdesk — .*\n\nUsage: growthdesk <command> \[options\]\n/)
    t.match(r.stdout, /admin create-key {2,}Create an API key/)
    t.equal(r.stderr, '')
  }
  const none = await cli({})
  t.equal(none.code, 2, 'no command is a usage error')
  t.match(none.stdout, /Usage: growthdesk <command>/)

  for (const argv of [['help', 'admin', 'create-key'], ['admin', 'create-key', '--help'], ['admin', 'create-key', '--kind', 'x', '-h']]) {
    const r = await cli({}, ...argv)
    t.equal(r.code, 0)
    t.match(r.stdout, /^Usage: growthdesk admin create-key --email EMAIL --kind mcp\|service\|ingest \[--project ID_OR_SLUG\] .*\[--expires-in-days N\] \[--json\]\n/)
  }
  for (const [argv, kind] of [[['tools'], /service key \(gds_\) in SERVICE_API_KEY/], [['call'], /service key \(gds_\) in SERVICE_API_KEY/],
    [['admin', 'create-key'], /mcp \(gdm_\) the project-side API .* service \(gds_\) the tools REST API .*\n.*ingest \(gdi_\)/],
    [['admin', 'revoke-key'], /Any kind \(mcp gdm_, service gds_, ingest gdi_, oauth gdo_\)/]] as const) {
    t.match((await cli({}, 'help', ...argv)).stdout, kind, `help ${argv.join(' ')} says which key kind it takes`)
  }
  const group = await cli({}, 'admin', 'tools', '--help')
  t.equal(group.code, 0)
  t.match(group.stdout, /admin tools disable .*\n.*admin tools enable/)
})

t.test('configuration errors exit 1 with the message of config.ts', async (t) => {
  const r = await cli({ DATABASE_URL: 'mysql://localhost/x' }, 'migrate')
  t.equal(r.code, 1)
  t.match(r.stderr, ONE_LINE)
  t.match(r.stderr, /^growthdesk: Invalid configuration: DATABASE_URL="mysql:\/\/localhost\/x" — expected a postgres:\/\/ URL/)
})

t.test('an embedded database held by another process is refused with the way out', async (t) => {
  const dataDir = tempDir(t)
  // The lock names a live process other than this one, as a running server would.
  const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' })
  t.teardown(() => holder.kill())
  const lockFile = path.join(dataDir, 'growthdesk.pid')
  fs.writeFileSync(lockFile, String(holder.pid))

  const r = await cli({ DATA_DIR: dataDir }, 'admin', 'bootstrap', '--json')
  t.equal(r.code, 1)
  t.equal(r.stdout, '')
  t.match(r.stderr, ONE_LINE)
  t.equal(
    r.stderr,
    `growthdesk: The embedded database in ${dataDir} is in use by another growthdesk process (pid ${holder.pid}). ` +
      'Stop that process first, or set DATABASE_URL to a PostgreSQL server, which many processes can share.\n'
  )
  t.equal(fs.readFileSync(lockFile, 'utf8'), String(holder.pid), "the other process's lock is left alone")
})

t.test('the executable, its output piped to a reader that has gone: no stack trace', async (t) => {
  const child = spawn(BIN, ['help'], { env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] })
  child.stdout.destroy() // as `| head -c 1` does once it has read enough (here before anything is written)
  let stderr = ''
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const [code] = await once(child, 'exit')
  t.equal(stderr, '', 'nothing on stderr')
  t.equal(code, 0)
})

t.test('an app hashes new passwords at its passwordHashCost; a cost scrypt cannot take is refused', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const hash = (await app.repos.users.findByEmail(ws.user.email))?.passwordHash
  t.match(hash, /^scrypt\$1024\$8\$1\$/, "the test apps' cost, N = 2^10")
  t.ok(await verifyPassword(ws.user.password, hash!), 'the password verifies')
  for (const cost of [0, 1, 1000, 2.5, 2 ** 60]) {
    await t.rejects(buildApp({ config: testConfig(database), logger: false, passwordHashCost: cost }), /passwordHashCost must be a power of two above 1/, `${cost} is refused`)
  }
})

t.test('the installed executable bin/growthdesk.js', async (t) => {
  t.ok(fs.statSync(BIN).mode & 0o111, 'is executable')
  // A bare environment and another working directory: the launcher runs its TypeScript with Node alone.
  const child = spawn(BIN, ['admin', 'bootstrap', '--json'], {
    cwd: os.tmpdir(),
    env: { PATH: process.env.PATH, ...env },
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const [code] = await once(child, 'exit')
  t.equal(code, 0, stderr)
  t.equal(stderr, '')
  t.match(stdout, /^[^\n]+\n$/)
  t.match(JSON.parse(stdout), { workspace: { id: /^wsp_/ }, user: { email: 'owner@default-workspace.local' }, keys: KEY })
  // The executable hashes passwords at the production cost (the suite's test apps hash cheaply).
  const app = await buildApp({ config: testConfig(database), logger: false })
  t.teardown(() => app.close())
  const owner = (await app.db.select().from(users)).find((u) => u.email === 'owner@default-workspace.local')
  t.match(owner?.passwordHash, /^scrypt\$32768\$8\$1\$/, 'scrypt with N = 2^15, r = 8, p = 1')
})
