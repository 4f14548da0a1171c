import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { bearer, listenTestApp, seedWorkspace } from '../helpers/app.ts'

t.test('MCP smoke', async (t) => {
  const { app, url } = await listenTestApp(t)
  const port = new URL(url).port
  const ws = await seedWorkspace(app)
  t.comment(`port ${port}`)
  const client = new Client({ name: 'test', version: '1' })
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: bearer(ws.keys.service) } })
  await client.connect(transport)
  t.teardown(() => client.close())
  const tools = await client.listTools()
  t.ok(tools.tools.length > 5)
  const res = await client.callTool({ name: 'get_daily_ops', arguments: { project: ws.project.slug } })
  t.notOk(res.isError, JSON.stringify(res))
  const bad = await client.callTool({ name: 'get_daily_ops', arguments: { project: ws.project.slug, window: '9d' } })
  t.ok(bad.isError)
  t.comment(JSON.stringify(bad))
  const rest = await app.inject({ method: 'POST', url: '/v1/tools/get_daily_ops', headers: bearer(ws.keys.service), payload: { project: ws.project.slug, window: '9d' } })
  t.same(JSON.parse((bad.content as { text: string }[])[0]!.text), rest.json())
  await t.rejects(client.callTool({ name: 'nope', arguments: {} }))
  const resources = await client.listResources()
  t.equal(resources.resources.length, 2)
  const prompt = await client.getPrompt({ name: 'growth_exploration', arguments: {} })
  t.ok(prompt.messages.length)
  const get = await fetch(`http://127.0.0.1:${port}/mcp`)
  t.equal(get.status, 405)
  t.equal(get.headers.get('allow'), 'POST')
  const parse = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { ...bearer(ws.keys.service), 'content-type': 'application/json', accept: 'application/json' }, body: '{bad' })
  t.equal(parse.status, 400)
  t.comment(await parse.text())
  const unauth = await fetch(`http://127.0.0.1:${port}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(unauth.status, 401)
  t.comment(unauth.headers.get('www-authenticate'))
})
