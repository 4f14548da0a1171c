// server.json, the MCP Registry's description of growthdesk (format 2025-12-11): valid, a remote
// whose URL is a deployment's own `/mcp` through a variable, and in step with the package and the
// README's connect commands. No network: the format's rules are in test/fixtures.
import t from 'tap'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const read = (file: string) => JSON.parse(readFileSync(path.join(root, file), 'utf8')) as Record<string, unknown>
const server = read('server.json') as {
  $schema: string
  name: string
  version: string
  description: string
  remotes: { type: string; url: string; variables: Record<string, { isRequired?: boolean }>; headers: { name: string; value: string; isSecret: boolean }[] }[]
}

t.test('server.json follows the registry format of 2025-12-11', async (t) => {
  t.equal(server.$schema, 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json')
  const ajv = new Ajv({ allErrors: true, strict: false })
  addFormats.default(ajv)
  const validate = ajv.compile(read('test/fixtures/registry-server.schema.json'))
  t.ok(validate(server), JSON.stringify(validate.errors))
  t.equal(server.version, read('package.json').version, 'the version of the package')
})

t.test('one remote: streamable HTTP at {host}/mcp, a key header that OAuth can replace', async (t) => {
  t.equal(server.remotes.length, 1)
  const [remote] = server.remotes
  t.equal(remote!.type, 'streamable-http')
  t.equal(remote!.url, 'https://{host}/mcp')
  for (const name of remote!.url.match(/\{([a-z_]+)\}/g)!.map((v) => v.slice(1, -1))) t.ok(remote!.variables[name]?.isRequired, `{${name}} is a required variable`)
  const auth = remote!.headers.find((h) => h.name === 'Authorization')!
  t.equal(auth.value, 'Bearer {api_key}')
  t.equal(auth.isSecret, true)
})

t.test('the README says how to connect, each client with the endpoint and the pinned conformance command', async (t) => {
  const readme = readFileSync(path.join(root, 'README.md'), 'utf8')
  for (const client of ['Claude', 'ChatGPT', 'VS Code', 'Cursor']) t.match(readme, client, client)
  t.match(readme, 'npm run conformance')
  t.match(readme, '@modelcontextprotocol/conformance@0.2.0-alpha.12')
  t.ok(readme.split('\n').length <= 300, `README: ${readme.split('\n').length} lines`)
})
