// Property-based: arbitrary arguments to every tool, over REST and over MCP, and arbitrary
// query strings on the project-side routes, never get a 500 and always get the error shape (a
// JSON-RPC answer on /mcp). FUZZ_RUNS sets how many cases per tool and surface (default 40).
import t from 'tap'
import fc from 'fast-check'
import { bearer, buildTestApp, seedWorkspace } from './helpers/app.ts'

const RUNS = Number(process.env.FUZZ_RUNS ?? 40)
const MCP_HOST = '127.0.0.1:3000'

t.test('fuzzed arguments and query strings', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const tools = app.registry.names()
  // Values that have broken APIs before: huge and negative numbers, NUL, lone surrogates, long text.
  const edge = fc.constantFrom(1e300, 5e17, 2 ** 53, -1, 0, 0.5, '', '\u0000', 'a\ud800', '\udc00b', 'x'.repeat(5000), 'prj_x', 'opp_x')
  const value = fc.oneof(edge, edge, fc.string({ unit: 'binary' }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 3 }))
  // Arguments: sometimes the tool's own names with odd values, sometimes anything at all.
  const args = (name: string) => {
    const known = Object.keys((app.registry.contract(name)!.input_schema as { properties: object }).properties)
    return fc.oneof(
      fc.dictionary(fc.constantFrom(...known, 'project'), value, { maxKeys: 4 }),
      fc.dictionary(fc.string(), value, { maxKeys: 3 }),
      value
    )
  }
  const errorShape = (body: unknown) => typeof (body as { error?: { code?: unknown } }).error?.code === 'string'

  await t.test('tools over REST', async (t) => {
    for (const name of tools) {
      await fc.assert(fc.asyncProperty(args(name), async (a) => {
        const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers: { ...bearer(ws.keys.service), 'x-service-project': ws.project.id }, payload: JSON.stringify(a) })
        if (res.statusCode >= 500) throw new Error(`${name} ${JSON.stringify(a)} → ${res.statusCode} ${res.body}`)
        if (res.statusCode >= 400 && !errorShape(res.json())) throw new Error(`${name}: ${res.body}`)
      }), { numRuns: RUNS })
    }
    t.pass(`${RUNS} cases for each of ${tools.length} tools`)
  })

  await t.test('tools over MCP', async (t) => {
    for (const name of tools) {
      await fc.assert(fc.asyncProperty(args(name), async (a) => {
        const res = await app.inject({
          method: 'POST',
          url: '/mcp',
          headers: { ...bearer(ws.keys.service), host: MCP_HOST, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', 'x-service-project': ws.project.id },
          payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: a } }),
        })
        if (res.statusCode >= 500) throw new Error(`${name} ${JSON.stringify(a)} → ${res.statusCode} ${res.body}`)
        const body = res.json() as { result?: { isError?: boolean; content?: { text: string }[] }; error?: { code: number } }
        if (!body.result && typeof body.error?.code !== 'number') throw new Error(`${name}: not a JSON-RPC answer: ${res.body}`)
        if (body.result?.isError && !errorShape(JSON.parse(body.result.content![0]!.text))) throw new Error(`${name}: ${res.body}`)
      }), { numRuns: RUNS })
    }
    t.pass(`${RUNS} cases for each of ${tools.length} tools`)
  })

  await t.test('query strings and path values on the project-side API', async (t) => {
    const routes = ['opportunities', 'overview', 'daily-ops', 'daily-event-summary', 'event-stream']
    await fc.assert(fc.asyncProperty(fc.constantFrom(...routes), fc.oneof(fc.constant(ws.project.id), fc.string({ maxLength: 120 })), fc.dictionary(fc.constantFrom('page', 'page_size', 'window', 'status', 'type', 'date', 'evaluation', 'before', 'limit', 'x'), fc.string({ unit: 'binary', maxLength: 30 }), { maxKeys: 4 }), async (route, project, query) => {
      const url = `/api/v1/mcp/projects/${encodeURIComponent(project)}/${route}?${new URLSearchParams(query)}`
      const res = await app.inject({ method: 'GET', url, headers: bearer(ws.keys.mcp) })
      if (res.statusCode >= 500) throw new Error(`${url} → ${res.statusCode} ${res.body}`)
      if (res.statusCode >= 400 && !errorShape(res.json())) throw new Error(`${url}: ${res.body}`)
    }), { numRuns: RUNS })
    t.pass(`${RUNS} cases`)
  })
})
