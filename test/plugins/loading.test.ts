// Tool plugins from outside the repository (plugins/tool-plugins.ts): a plugin named by an
// absolute path or in code adds tools that every surface lists and calls, its routes are served,
// and a plugin that cannot be loaded, fails, adds a name that exists or adds too late stops the
// start with one line naming it — in buildApp, and in a real `node start.js`.
import t from 'tap'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { once } from 'node:events'
import { buildApp } from '../../app.ts'
import { defineOperation, PluginError, Type, type ToolPlugin } from '../../index.ts'
import { bearer, buildTestApp, seedWorkspace, testConfig, testDatabase } from '../helpers/app.ts'

const root = path.resolve(import.meta.dirname, '../..')
const fixture = (name: string) => path.join(root, 'test/fixtures/plugins', `${name}.js`)

t.test('a plugin named by an absolute path adds a tool and a route', async (t) => {
  const app = await buildTestApp(t, { config: { plugins: [fixture('with-route')] } })
  const ws = await seedWorkspace(app)
  const owner = bearer(ws.keys.service)

  const list = await app.inject({ method: 'GET', url: '/v1/tools', headers: owner })
  t.ok(list.json().tools.some((c: { name: string }) => c.name === 'greet_member'), 'listed by GET /v1/tools')
  const call = await app.inject({ method: 'POST', url: '/v1/tools/greet_member', headers: owner, payload: { punctuation: '!' } })
  t.equal(call.statusCode, 200)
  t.same(call.json(), { result: { greeting: `Hello, ${ws.user.email}!` } })
  const bad = await app.inject({ method: 'POST', url: '/v1/tools/greet_member', headers: owner, payload: { punctuation: '?' } })
  t.equal(bad.statusCode, 400)
  t.equal(bad.json().error.code, 'invalid_arguments')
  t.equal(bad.json().error.details[0].path, 'punctuation', 'its TypeBox input is validated')

  const ping = await app.inject({ method: 'GET', url: '/v1/acme/ping', headers: owner })
  t.same([ping.statusCode, ping.json()], [200, { pong: true }], "the plugin's own route answers")
  const anonymous = await app.inject({ method: 'GET', url: '/v1/acme/ping' })
  t.equal(anonymous.statusCode, 401, 'and authenticates like the tools API')

  const openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  t.ok(openapi.paths['/v1/tools/greet_member']?.post, 'OpenAPI documents the tool')
  t.ok(openapi.paths['/v1/acme/ping']?.get, "and the plugin's route")
  const skill = (await app.inject({ method: 'GET', url: '/SKILL.md' })).body
  t.match(skill, /greet_member/, 'SKILL.md lists it')
})

t.test("a result is written by the plugin's output schema: what it does not declare is dropped", async (t) => {
  const plugin: ToolPlugin = async (app) => {
    app.operations.add(defineOperation({
      name: 'leaky_tool',
      title: 'Leaky',
      description: 'Returns more than it declares.',
      scope: 'workspace',
      role: 'viewer',
      input: Type.Object({}, { additionalProperties: false }),
      output: Type.Object({ shown: Type.String() }, { additionalProperties: false }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
      examples: { valid: [{ title: 'Call it', args: {} }], invalid: [] },
      async handler() {
        return { shown: 'yes', secret: 'never on the wire' } as { shown: string }
      },
    }))
  }
  const database = await testDatabase(t)
  const app = await buildApp({ config: testConfig(database), logger: false, plugins: [plugin] })
  t.teardown(() => app.close())
  const ws = await seedWorkspace(app)
  const res = await app.inject({ method: 'POST', url: '/v1/tools/leaky_tool', headers: bearer(ws.keys.service) })
  t.equal(res.body, '{"result":{"shown":"yes"}}')

  // Tests build the app with checkOutputs, which fails such a result loudly instead.
  const checked = await buildTestApp(t, { plugins: [plugin] })
  const ws2 = await seedWorkspace(checked)
  const loud = await checked.inject({ method: 'POST', url: '/v1/tools/leaky_tool', headers: bearer(ws2.keys.service) })
  t.equal(loud.statusCode, 500)
})

t.test('a plugin that cannot be used stops the start with one line naming it', async (t) => {
  const cases: [string, RegExp][] = [
    ['duplicate', /^tool plugin '.*duplicate\.js' an operation named 'get_project' exists already$/],
    ['throws', /^tool plugin '.*throws\.js' failed while loading: the ACME_TOKEN setting is missing$/],
    ['no-default', /^tool plugin '.*no-default\.js' has no plugin as its default export: /],
    ['broken-import', /^tool plugin '.*broken-import\.js' cannot be loaded: Cannot find package 'acme-package-that-is-not-installed'/],
    ['bad-name', /^tool plugin '.*bad-name\.js' the operation has the name "Count Things": a name is snake_case/],
    ['not-there', /^tool plugin '.*not-there\.js' cannot be loaded: /],
  ]
  for (const [name, message] of cases) {
    const err = await buildTestApp(t, { config: { plugins: [fixture(name)] } }).then(() => undefined, (e: unknown) => e)
    t.type(err, PluginError, name)
    t.match((err as Error).message, message, name)
    t.notOk((err as Error).message.includes('\n'), `${name}: one line`)
  }

  const unknownPackage = await buildTestApp(t, { config: { plugins: ['acme-tools-nobody-installed'] } }).then(() => undefined, (e: unknown) => e)
  t.match((unknownPackage as Error).message, /^tool plugin 'acme-tools-nobody-installed' cannot be found \(.*\): install it beside growthdesk \(npm install acme-tools-nobody-installed\) or give an absolute path$/)
})

t.test('an operation added after the app is ready stops it', async (t) => {
  const app = await buildTestApp(t, { config: { plugins: [fixture('late')] } })
  await t.rejects(async () => { await app.ready() }, { name: 'PluginError', message: /^tool plugin '.*late\.js' cannot add the operation 'late_tool': operations are added while the app loads, and it is ready \(the registry is sealed\)$/ })
})

t.test('the registry is sealed once the plugins are loaded', async (t) => {
  const app = await buildTestApp(t)
  await app.ready()
  t.ok(app.registry.sealed)
  t.throws(() => app.registry.add(app.registry.operation('get_project')), /the registry is sealed/)
})

t.test('`node start.js` with a failing plugin prints one line and exits 1', async (t) => {
  for (const [name, message] of [
    ['duplicate', /^growthdesk: tool plugin '.*duplicate\.js' an operation named 'get_project' exists already\n$/],
    ['late', /^growthdesk: tool plugin '.*late\.js' cannot add the operation 'late_tool': .*sealed\)\n$/],
  ] as const) {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-plugin-start-'))
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, GROWTHDESK_PLUGINS: fixture(name), LOG_LEVEL: 'warn' }
    delete env.DATABASE_URL
    delete env.NODE_OPTIONS
    const child = spawn(process.execPath, ['start.js'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    const [code] = await once(child, 'exit')
    t.equal(code, 1, `${name}: exit 1`)
    t.match(stderr, message, `${name}: one line, no stack`)
  }
})
