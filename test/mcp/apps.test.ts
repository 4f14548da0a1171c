// MCP App views on the wire (routes/mcp-apps.ts), in both eras: the extension declared, the two
// ui:// resources listed and read (one self-contained HTML document each, no origin to load
// from, CSP metadata empty), the tools that name them, and the app-only review tool, which is
// review_opportunity on every surface: the same errors for a viewer, another workspace's project
// or a missing opportunity, the same history. In Chromium: apps.browser.test.ts.
import t from 'tap'
import fs from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { addMember, bearer, buildTestApp, PUBLIC_URL, seedWorkspace } from '../helpers/app.ts'
import { Registry, type Operation } from '../../core/operations.ts'

const UI = 'io.modelcontextprotocol/ui'
const MIME = 'text/html;profile=mcp-app'
const VIEWS = ['ui://growthdesk/board', 'ui://growthdesk/daily-ops']
const META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { extensions: { [UI]: { mimeTypes: [MIME] } } } }
const host = new URL(PUBLIC_URL).host

const app: FastifyInstance = await buildTestApp(t)
const ws = await seedWorkspace(app)
const other = await seedWorkspace(app)
const viewer = await addMember(app, ws.project.id, 'viewer')
const project = ws.project.slug

type Era = '2025-11-25' | '2026-07-28'
interface Rpc { result?: Record<string, unknown> & { contents?: { uri: string; mimeType: string; text: string; _meta?: unknown }[] }; error?: { code: number; message: string } }

/** One JSON-RPC request over /mcp in an era (2026-07-28 with its envelope and headers). */
async function mcp(era: Era, method: string, params: Record<string, unknown> = {}, key = ws.keys.service): Promise<Rpc> {
  const modern = era === '2026-07-28'
  const name = method === 'tools/call' ? params.name : method === 'resources/read' ? params.uri : undefined
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: {
      ...bearer(key),
      host,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': era,
      ...(modern ? { 'mcp-method': method, ...(typeof name === 'string' ? { 'mcp-name': name } : {}) } : {}),
    },
    payload: { jsonrpc: '2.0', id: 1, method, params: modern ? { ...params, _meta: META } : params },
  })
  t.equal(res.statusCode, 200, `${era} ${method}: ${res.body.slice(0, 200)}`)
  return res.json() as Rpc
}
const eras: Era[] = ['2025-11-25', '2026-07-28']

t.test('the extension is declared in both eras, as capabilities.extensions["io.modelcontextprotocol/ui"]', async (t) => {
  // Beside the skills extension (test/mcp/skills.test.ts).
  const declared = { 'io.modelcontextprotocol/skills': {}, [UI]: { mimeTypes: [MIME] } }
  const initialize = await mcp('2025-11-25', 'initialize', { protocolVersion: '2025-11-25', capabilities: { extensions: { [UI]: { mimeTypes: [MIME] } } }, clientInfo: { name: 'host', version: '1' } })
  t.strictSame((initialize.result?.capabilities as Record<string, unknown>).extensions, declared, '2025-11-25: initialize')
  const discover = await mcp('2026-07-28', 'server/discover')
  t.strictSame((discover.result?.capabilities as Record<string, unknown>).extensions, declared, '2026-07-28: server/discover')
})

t.test('resources/list lists both views beside the documents, with their CSP declared empty', async (t) => {
  for (const era of eras) {
    const { resources } = (await mcp(era, 'resources/list')).result as { resources: { uri: string; mimeType: string; name: string; title: string; _meta?: unknown }[] }
    const views = resources.filter((r) => r.uri.startsWith('ui://'))
    t.same(views.map((r) => r.uri), VIEWS, `${era}: the two views`)
    for (const view of views) {
      t.equal(view.mimeType, MIME, `${era} ${view.uri}: its type`)
      t.ok(view.title && view.name, `${era} ${view.uri}: named`)
      t.strictSame(view._meta, { ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: true } }, `${era} ${view.uri}: no origin at all`)
    }
    t.ok(resources.some((r) => r.uri === 'skill://growthdesk/SKILL.md'), `${era}: the documents (as skills) are still there`)
  }
})

/** The absolute URLs written in a text. */
const urlsIn = (text: string) => new Set(text.match(/\bhttps?:\/\/[^\s"'`)<>\\]+/g) ?? [])
const bundleUrls = urlsIn(fs.readFileSync(new URL(import.meta.resolve('@modelcontextprotocol/ext-apps/app-with-deps')), 'utf8'))

t.test('resources/read: one self-contained HTML document per view, that loads nothing from anywhere', async (t) => {
  for (const uri of VIEWS) {
    const [legacy, modern] = await Promise.all(eras.map((era) => mcp(era, 'resources/read', { uri }))) as [Rpc, Rpc]
    const contents = legacy.result?.contents ?? []
    t.equal(contents.length, 1, `${uri}: one content`)
    t.strictSame(modern.result?.contents, contents, `${uri}: the same in both eras`)
    const { text, mimeType, _meta } = contents[0]!
    t.equal(mimeType, MIME)
    t.strictSame(_meta, { ui: { csp: { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] }, prefersBorder: true } }, `${uri}: CSP declared empty`)
    t.match(text, /^<!doctype html>\n<html lang="en">/, `${uri}: an HTML document`)
    t.equal(text.match(/<html\b/g)?.length, 1, 'one html element')
    t.equal(text.match(/<\/html>/g)?.length, 1)
    t.equal(text.match(/<script\b/g)?.length, 1, 'one script')
    t.match(text, /<script type="module">/, 'a module, inline')
    t.notMatch(text, /<(link|img|iframe|base|object|embed)\b/i, 'no element that loads')
    t.notMatch(text, /\b(src|href|srcset|action|poster)\s*=/i, 'no attribute that points anywhere')
    const css = [...text.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]).join('\n')
    t.ok(css.length > 0, 'its style, inline')
    t.notMatch(css, /url\(\s*['"]?(https?:)?\/\//i, 'no CSS url() to an origin')
    t.notMatch(css, /@import/i, 'no CSS @import')
    t.notMatch(text, /\bimport\s*\(|^\s*import\s/m, 'no module import: the App bundle is inlined')
    t.match(text, /ui\/initialize/, 'the ext-apps App is in it')
    // Every absolute URL is a name, never fetched: the bundle's own (JSON Schema dialect ids,
    // comments) or the SVG namespace the chart creates its elements in.
    const own = [...urlsIn(text)].filter((u) => !bundleUrls.has(u))
    t.strictSame(own, uri.endsWith('daily-ops') ? ['http://www.w3.org/2000/svg'] : [], `${uri}: no URL of its own but the SVG namespace`)
    t.ok(text.length < 600_000, `${uri}: ${text.length} characters`)
  }
})

t.test('a ui:// URI that is no view is the resource-not-found error', async (t) => {
  for (const era of eras) {
    const missing = await mcp(era, 'resources/read', { uri: 'ui://growthdesk/nothing' })
    t.equal(missing.error?.code, -32602, era)
  }
})

interface ListedTool { name: string; _meta?: { ui?: { resourceUri: string; visibility?: string[] }; 'ui/resourceUri'?: string } }

t.test('tools/list: the two tools name their views, the review tool is for views only; REST lists the same `ui`', async (t) => {
  const [a, b] = await Promise.all(eras.map(async (era) => ((await mcp(era, 'tools/list')).result as { tools: ListedTool[] }).tools))
  t.strictSame(b, a, 'the same list in both eras')
  const meta = (name: string) => a!.find((tool) => tool.name === name)?._meta
  t.strictSame(meta('list_opportunities'), { ui: { resourceUri: 'ui://growthdesk/board' }, 'ui/resourceUri': 'ui://growthdesk/board' })
  t.strictSame(meta('get_daily_ops'), { ui: { resourceUri: 'ui://growthdesk/daily-ops' }, 'ui/resourceUri': 'ui://growthdesk/daily-ops' })
  t.strictSame(meta('review_opportunity_from_view'), { ui: { resourceUri: 'ui://growthdesk/board', visibility: ['app'] }, 'ui/resourceUri': 'ui://growthdesk/board' })
  t.equal(meta('review_opportunity'), undefined, 'tools without a view carry no _meta')
  for (const tool of a!) if (tool._meta?.ui) t.ok(VIEWS.includes(tool._meta.ui.resourceUri), `${tool.name}: its view exists`)
  const rest = (await app.inject({ method: 'GET', url: '/v1/tools', headers: bearer(ws.keys.service) })).json().tools as { name: string; ui?: unknown }[]
  for (const tool of a!) t.strictSame(rest.find((r) => r.name === tool.name)?.ui, tool._meta?.ui, `${tool.name}: REST's ui is MCP's _meta.ui`)
  const one = (await app.inject({ method: 'GET', url: '/v1/tools/review_opportunity_from_view', headers: bearer(ws.keys.service) })).json()
  t.strictSame(one.ui, { resourceUri: 'ui://growthdesk/board', visibility: ['app'] })
})

t.test('the tools with a view: content stays the text for the model, structuredContent the data', async (t) => {
  for (const era of eras) {
    for (const name of ['list_opportunities', 'get_daily_ops']) {
      const { result } = await mcp(era, 'tools/call', { name, arguments: { project } })
      const text = (result?.content as { type: string; text: string }[])[0]!.text
      const rest = (await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(ws.keys.service), payload: { project } })).body
      t.equal(`{"result":${text}}`, rest, `${era} ${name}: the text is REST's result`)
      t.strictSame(result?.structuredContent, JSON.parse(text), `${era} ${name}: structuredContent is its data`)
    }
  }
})

t.test('review_opportunity_from_view is review_opportunity: result, history, errors, on REST and MCP', async (t) => {
  const submit = async () => (await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities`, headers: bearer(ws.keys.mcp), payload: { contribution_type: 'potential_user_opportunity', key_information: 'From the board', reason: 'r', suggested_action: 's' } })).json().event_id as string
  const id = await submit()
  const rest = async (name: string, args: Record<string, unknown>, key = ws.keys.service) => {
    const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: bearer(key), payload: args })
    return { status: res.statusCode, body: res.body }
  }
  const viaRest = await rest('review_opportunity_from_view', { project, event_id: id, status: 'contacted' })
  t.equal(viaRest.status, 200, viaRest.body)
  t.match(JSON.parse(viaRest.body).result, { event_id: id, status: 'contacted', evaluation: '', review_note: '' })
  for (const era of eras) {
    const { result } = await mcp(era, 'tools/call', { name: 'review_opportunity_from_view', arguments: { project, event_id: id, evaluation: 'useful', note: `from ${era}` } })
    t.notOk(result?.isError, JSON.stringify(result))
    t.match(result?.structuredContent, { event_id: id, status: 'contacted', evaluation: 'useful', review_note: `from ${era}` }, `${era}: the review's result`)
  }
  const history = JSON.parse((await rest('get_review_history', { project, event_id: id })).body).result.items as { actor: { email: string }; before: unknown; after: unknown }[]
  t.equal(history.length, 3, 'a history entry for each review')
  t.strictSame(history[0]!.after, { status: 'contacted' })
  t.equal(history[0]!.actor.email, ws.user.email, 'by the key\'s user')

  // The same refusals as review_opportunity, byte for byte, over REST and in both eras.
  const refusals: [string, Record<string, unknown>, string][] = [
    ['a viewer', { project, event_id: id, status: 'done' }, viewer.keys.service],
    ['another workspace\'s project', { project: other.project.id, event_id: id, status: 'done' }, ws.keys.service],
    ['an opportunity of another workspace', { project, event_id: await (async () => (await app.inject({ method: 'POST', url: `/api/v1/mcp/projects/${other.project.id}/opportunities`, headers: bearer(other.keys.mcp), payload: { contribution_type: 'x_y', key_information: 'k', reason: 'r', suggested_action: 's' } })).json().event_id)(), status: 'done' }, ws.keys.service],
    ['nothing to change', { project, event_id: id }, ws.keys.service],
    ['a bad status', { project, event_id: id, status: 'open' }, ws.keys.service],
  ]
  for (const [label, args, key] of refusals) {
    const expected = await rest('review_opportunity', args, key)
    t.ok(expected.status >= 400, `${label}: review_opportunity refuses (${expected.status})`)
    const got = await rest('review_opportunity_from_view', args, key)
    t.equal(got.status, expected.status, `${label}: REST status`)
    t.equal(got.body, expected.body, `${label}: REST error`)
    for (const era of eras) {
      const { result } = await mcp(era, 'tools/call', { name: 'review_opportunity_from_view', arguments: args }, key)
      t.equal(result?.isError, true, `${label} ${era}: a failed call`)
      t.equal((result?.content as { text: string }[])[0]!.text, expected.body, `${label} ${era}: the same error`)
    }
  }
  t.match(JSON.parse((await rest('review_opportunity_from_view', refusals[0]![1], viewer.keys.service)).body), { error: { code: 'review_access_required' } })
  t.equal(JSON.parse((await rest('get_review_history', { project, event_id: id })).body).result.items.length, 3, 'no refusal left a history entry')
})

t.test('a tool\'s `ui` is checked when it is added: a ui:// view, and model and/or app, each once', async (t) => {
  const registry = new Registry({ repos: app.repos, now: () => new Date() })
  const base = app.registry.operation('get_daily_ops')
  const withUi = (name: string, ui: unknown) => ({ ...base, name, ui }) as Operation
  registry.add(withUi('fine_one', { resourceUri: 'ui://growthdesk/daily-ops', visibility: ['model', 'app'] }))
  t.strictSame(registry.contract('fine_one')?.ui, { resourceUri: 'ui://growthdesk/daily-ops', visibility: ['model', 'app'] })
  for (const [ui, message] of [
    [{ resourceUri: 'https://example.com/view.html' }, /'bad_view' has a ui without a ui:\/\/ resourceUri/],
    [{}, /without a ui:\/\/ resourceUri/],
    [{ resourceUri: 'ui://growthdesk/board', visibility: [] }, /visibility \[\]: it must list 'model' and\/or 'app', each once/],
    [{ resourceUri: 'ui://growthdesk/board', visibility: ['agent'] }, /visibility \["agent"\]/],
    [{ resourceUri: 'ui://growthdesk/board', visibility: ['app', 'app'] }, /each once/],
    [{ resourceUri: 'ui://growthdesk/board', visibility: 'app' }, /visibility "app"/],
  ] as const) {
    t.throws(() => registry.add(withUi('bad_view', ui)), { name: 'RegistryError', message }, JSON.stringify(ui))
  }
})
