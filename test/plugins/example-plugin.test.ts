// The example plugin package (examples/acme-growthdesk-tools) as a user installs it: in
// node_modules beside growthdesk, named in GROWTHDESK_PLUGINS. Its tools are listed and called
// over /v1/tools, MCP in both eras (byte-identical results and errors), OpenAPI, SKILL.md and
// the CLI; its examples hold (valid calls pass validation, invalid ones name their field).
// CI installs the package with npm (.ci/run); elsewhere this file copies it into node_modules
// for its run.
import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client'
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { main } from '../../bin/cli.ts'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'

const PACKAGE = 'acme-growthdesk-tools'
const root = path.resolve(import.meta.dirname, '../..')
const installed = path.join(root, 'node_modules', PACKAGE)
if (!fs.existsSync(path.join(installed, 'package.json'))) {
  fs.cpSync(path.join(root, 'examples', PACKAGE), installed, { recursive: true })
  t.teardown(() => fs.rmSync(installed, { recursive: true, force: true }))
}

const { app, url } = await listenTestApp(t, { config: { plugins: [PACKAGE] } })
const ws = await seedWorkspace(app)
const project = ws.project.slug
const key = ws.keys.service

async function rest(name: string, args: Record<string, unknown>) {
  const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: args })
  return { status: res.statusCode, body: res.body }
}
// Three opportunities: two pending, one adopted.
const ids: string[] = []
for (const [i, text] of ['Pricing page confuses teams', 'Wants a Slack digest', 'Pricing for nonprofits'].entries()) {
  const res = await rest('submit_opportunity', { project, contribution_type: 'potential_user_opportunity', key_information: text, reason: 'r', suggested_action: 's', external_id: `acme-${i}` })
  if (res.status !== 200) throw new Error(`seeding: ${res.status} ${res.body}`)
  ids.push((JSON.parse(res.body) as { result: { event_id: string } }).result.event_id)
}
const adopted = await rest('review_opportunity', { project, event_id: ids[1], status: 'adopted' })
if (adopted.status !== 200) throw new Error(`seeding a review: ${adopted.status} ${adopted.body}`)

const modern = new ClientV2({ name: 'plugin-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
await modern.connect(new TransportV2(new URL(`${url}/mcp`), { requestInit: { headers: bearer(key) } }))
t.teardown(() => modern.close())
const legacy = new ClientV1({ name: 'plugin-test-v1', version: '1.0.0' })
await legacy.connect(new TransportV1(new URL(`${url}/mcp`), { requestInit: { headers: bearer(key) } }))
t.teardown(() => legacy.close())

interface ToolResult { content: { type: string; text?: string }[]; structuredContent?: unknown; isError?: boolean }
const textOf = (r: ToolResult) => r.content[0]?.text ?? ''
const TOOLS = ['count_opportunities_by_status', 'pending_digest']

t.test('the tools answer what they say', async (t) => {
  const counts = await rest('count_opportunities_by_status', { project })
  t.equal(counts.status, 200)
  t.same(JSON.parse(counts.body).result, { counts: { pending: 2, reviewing: 0, contacted: 0, adopted: 1, ignored: 0, done: 0 }, total: 3 })
  const pricing = JSON.parse((await rest('count_opportunities_by_status', { project, q: 'pricing' })).body).result
  t.same(pricing, { counts: { pending: 2, reviewing: 0, contacted: 0, adopted: 0, ignored: 0, done: 0 }, total: 2 })
  const digest = JSON.parse((await rest('pending_digest', { project, limit: 1, style: 'numbered' })).body).result
  t.equal(digest.pending, 2)
  t.match(digest.markdown, /^2 opportunities wait for review\.\n1\. \*\*potential_user_opportunity\*\*: Pricing for nonprofits \(`opp_/)
})

t.test('listed everywhere: /v1/tools, MCP in both eras, OpenAPI, SKILL.md', async (t) => {
  const listed = (await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(key) })).json().tools.map((c: { name: string }) => c.name)
  for (const name of TOOLS) t.ok(listed.includes(name), `/v1/tools: ${name}`)
  // A plugin's tools are in the default toolset: what MCP lists by default, as /v1/tools?toolsets=default.
  const listedByDefault = (await app.inject({ method: 'GET', url: '/v1/tools?toolsets=default', headers: bearer(key) })).json().tools.map((c: { name: string }) => c.name)
  for (const name of TOOLS) t.ok(listedByDefault.includes(name), `/v1/tools?toolsets=default: ${name}`)
  const [a, b] = [await modern.listTools(), await legacy.listTools()]
  t.strictSame(a.tools.map((x) => x.name), listedByDefault, 'MCP 2026-07-28: the same tools, in the same order')
  t.strictSame(b.tools, a.tools, 'MCP 2025-11-25: the same list')
  const tool = a.tools.find((x) => x.name === 'count_opportunities_by_status')!
  t.ok(tool.outputSchema, 'with its output schema')
  t.ok((tool.inputSchema.properties as Record<string, unknown>).project, 'and `project`, which every project tool takes')

  const openapi = (await app.inject({ method: 'GET', url: '/openapi.json' })).json()
  for (const name of TOOLS) t.ok(openapi.paths[`/v1/tools/${name}`]?.post, `OpenAPI: ${name}`)
  const skill = (await app.inject({ method: 'GET', url: '/SKILL.md' })).body
  for (const name of TOOLS) t.match(skill, name, `SKILL.md: ${name}`)
  // Each shows its first valid example, as a caller sends it.
  t.match(skill, '- `count_opportunities_by_status` — How many growth opportunities of a project are in each pipeline status (pending, reviewing, contacted, adopted, ignored, done), optionally only those of one `type` or matching a text `q`. Arguments: `project?`, `type?`, `q?`. Example: `{"project":"my-project"}`')
  const body = openapi.paths['/v1/tools/pending_digest'].post.requestBody.content['application/json']
  t.same(Object.values(body.examples ?? {}).map((e) => (e as { value: unknown }).value),
    [{ project: 'my-project' }, { project: 'my-project', limit: 3, style: 'numbered' }], 'OpenAPI: the example requests')
})

t.test('results and errors are the same bytes on REST and both MCP eras', async (t) => {
  const op = (name: string) => app.registry.operation(name)
  for (const name of TOOLS) {
    const { examples } = op(name)
    t.ok(examples.valid.length > 0 && examples.invalid.length > 0, `${name} carries examples`)
    for (const example of examples.valid) {
      const args = { project, ...example.args }
      const r = await rest(name, args)
      t.equal(r.status, 200, `${name} (${example.title}): REST 200`)
      const expected = r.body.slice('{"result":'.length, -1)
      const m = await modern.callTool({ name, arguments: args }) as ToolResult
      const l = await legacy.callTool({ name, arguments: args }) as ToolResult
      t.equal(textOf(m), expected, `${name} (${example.title}): 2026-07-28 text`)
      t.equal(textOf(l), expected, `${name} (${example.title}): 2025-11-25 text`)
      t.same(m.structuredContent, JSON.parse(expected))
    }
    for (const example of examples.invalid) {
      const args = { project, ...example.args }
      const r = await rest(name, args)
      t.equal(r.status, 400, `${name} (${example.title}): REST 400`)
      const error = JSON.parse(r.body).error
      t.equal(error.code, 'invalid_arguments')
      t.ok(error.details.some((d: { path: string }) => d.path === example.field), `${name} (${example.title}): names ${example.field}`)
      const m = await modern.callTool({ name, arguments: args }) as ToolResult
      const l = await legacy.callTool({ name, arguments: args }) as ToolResult
      t.same([m.isError, textOf(m)], [true, r.body], `${name} (${example.title}): 2026-07-28 error`)
      t.same([l.isError, textOf(l)], [true, r.body], `${name} (${example.title}): 2025-11-25 error`)
    }
  }
  // Access: a viewer cannot count (the tool needs review access, as list_opportunities does).
  const noProject = await rest('pending_digest', {})
  t.equal(noProject.status, 400)
  t.match(JSON.parse(noProject.body).error.message, /needs a project/)
})

t.test('the CLI lists and calls them', async (t) => {
  const out = { stdout: '', stderr: '' }
  const io = { stdout: { write: (s: string) => (out.stdout += s) }, stderr: { write: (s: string) => (out.stderr += s) }, env: { SERVICE_URL: url, SERVICE_API_KEY: key } }
  t.equal(await main(['tools'], io), 0)
  for (const name of TOOLS) t.match(out.stdout, name)
  out.stdout = ''
  t.equal(await main(['call', 'count_opportunities_by_status', '--project', project], io), 0, out.stderr)
  t.match(out.stdout, /"total": ?3/)
})
