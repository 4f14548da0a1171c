// Bad input never gets a 500 and never changes anything; responses say what they are and are
// not cached; credentials sent in a URL stay out of the logs; Node's own refusals and slow
// requests are answered or closed in the API's terms.
import t from 'tap'
import net from 'node:net'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { Writable } from 'node:stream'
import type { InjectOptions } from 'fastify'
import { BODY_LIMIT, LINGER_MAX_BYTES, buildApp, loggerOptions } from '../app.ts'
import { bearer, buildTestApp, listenTestApp, seedWorkspace, testConfig, testDatabase } from './helpers/app.ts'

const MCP_HOST = '127.0.0.1:3000'

t.test('inputs that used to reach the database as 500s are 4xx in the error shape, and change nothing', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const P = ws.project.id
  const json = (key: string) => ({ ...bearer(key), 'content-type': 'application/json' })
  const counts = async () => {
    const [memories, events] = await Promise.all([
      app.inject({ method: 'GET', url: `/v1/projects/${P}/memories`, headers: bearer(ws.keys.service) }),
      app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${P}/daily-event-summary`, headers: bearer(ws.keys.mcp) }),
    ])
    return { memories: memories.json().total ?? memories.json().items?.length, events: events.body }
  }
  const before = await counts()
  const cases: [string, InjectOptions, number, RegExp][] = [
    ['page=1e300', { method: 'GET', url: `/api/v1/mcp/projects/${P}/opportunities?page=1e300`, headers: bearer(ws.keys.mcp) }, 400, /page/],
    ['page=Infinity', { method: 'GET', url: `/api/v1/mcp/projects/${P}/opportunities?page=Infinity`, headers: bearer(ws.keys.mcp) }, 400, /page/],
    ['{"page":5e17} to a tool', { method: 'POST', url: '/v1/tools/list_opportunities', headers: json(ws.keys.service), payload: JSON.stringify({ project: P, page: 5e17 }) }, 400, /page/],
    ['JSON nested 5,000 deep', { method: 'POST', url: '/v1/tools/add_memory', headers: json(ws.keys.service), payload: `{"project":"${P}","content":"x","tags":${'['.repeat(5000)}${']'.repeat(5000)}}` }, 400, /nests deeper/],
    ['a lone surrogate in an event name', { method: 'POST', url: '/v1/events', headers: json(ws.keys.ingest), payload: '{"events":[{"event":"a\\ud800","distinct_id":"u"}]}' }, 400, /events\[0\]\.event: must be valid Unicode/],
    ['a lone surrogate in an event property', { method: 'POST', url: '/v1/events', headers: json(ws.keys.ingest), payload: '{"events":[{"event":"a","distinct_id":"u","properties":{"k":"\\udc00"}}]}' }, 400, /properties\.k/],
    ['a lone surrogate in a memory', { method: 'POST', url: `/v1/projects/${P}/memories`, headers: json(ws.keys.service), payload: '{"content":"x\\ud800y"}' }, 400, /content: must be valid Unicode/],
    ['a NUL in a project id in a path', { method: 'GET', url: `/api/v1/mcp/projects/${P}%00/overview`, headers: bearer(ws.keys.mcp) }, 404, /No project/],
    ['a NUL in the project of /v1/events', { method: 'POST', url: '/v1/events', headers: json(ws.keys.service), payload: '{"project":"a\\u0000b","events":[{"event":"a","distinct_id":"u"}]}' }, 404, /No project/],
    ['a NUL in X-Service-Project', { method: 'POST', url: '/v1/tools/get_project', headers: { ...json(ws.keys.service), 'x-service-project': 'a\u0000b' }, payload: '{}' }, 404, /No project/],
    ['a path parameter over 100 characters', { method: 'GET', url: `/api/v1/mcp/projects/${P}/opportunities/opp_${'a'.repeat(200)}/history`, headers: bearer(ws.keys.mcp) }, 400, /longer than the 100/],
    ['a memory id over 100 characters', { method: 'DELETE', url: `/v1/memories/mem_${'a'.repeat(200)}`, headers: bearer(ws.keys.service) }, 400, /longer than the 100/],
  ]
  for (const [what, request, status, message] of cases) {
    const res = await app.inject(request)
    t.equal(res.statusCode, status, `${what}: ${res.body.slice(0, 200)}`)
    t.match(res.json(), { error: { code: /^[a-z_]+$/, message } }, `${what}: the error shape, saying what is wrong`)
  }
  t.same(await counts(), before, 'nothing was stored')

  const empty = await app.inject({ method: 'POST', url: '/mcp', headers: { ...json(ws.keys.service), host: MCP_HOST, accept: 'application/json, text/event-stream' }, payload: '[]' })
  t.equal(empty.statusCode, 400)
  t.same(empty.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'An empty JSON-RPC batch is not a request.' } }, 'an empty JSON-RPC batch is one Invalid Request error')
})

t.test('API responses: nosniff everywhere, no-store on authenticated ones', async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  const authed = await app.inject({ method: 'GET', url: '/v1/projects', headers: bearer(ws.keys.service) })
  t.equal(authed.headers['x-content-type-options'], 'nosniff')
  t.equal(authed.headers['cache-control'], 'no-store')
  const refused = await app.inject({ method: 'GET', url: '/v1/projects' })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers['cache-control'], 'no-store', 'refusals too')
  const health = await app.inject({ method: 'GET', url: '/health' })
  t.equal(health.headers['x-content-type-options'], 'nosniff')
  // Refusals made before any route is found (no hook has run) carry it too.
  for (const url of ['/v1/projects/%E0%A4%A', `/v1/projects/${'a'.repeat(200)}`]) {
    const res = await app.inject({ method: 'GET', url, headers: bearer(ws.keys.service) })
    t.equal(res.statusCode, 400, url.slice(0, 30))
    t.equal(res.headers['x-content-type-options'], 'nosniff', `${url.slice(0, 30)}: nosniff`)
  }
})

t.test("a plugin's own refusal keeps its status, in the error shape; a huge array gets a bounded answer", async (t) => {
  const app = await buildTestApp(t)
  const ws = await seedWorkspace(app)
  // @fastify/static (behind /docs) refuses a path with a NUL or a name too long for the file system with a 403 of its own.
  for (const url of ['/docs/static/a%00b', `/docs/static/${'x'.repeat(300)}`]) {
    const res = await app.inject({ method: 'GET', url })
    t.equal(res.statusCode, 403, url.slice(0, 30))
    t.same(res.json(), { error: { code: 'forbidden', message: 'Forbidden.' } }, 'in the error shape, not a 500')
  }
  // 100,000 wrong items: the answer names the first 100 and counts the rest (it was 5 MB of details).
  const res = await app.inject({ method: 'POST', url: '/v1/tools/add_memory', headers: { ...bearer(ws.keys.service), 'content-type': 'application/json' }, payload: JSON.stringify({ project: ws.project.id, content: 'x', tags: new Array(100_000).fill(0) }) })
  t.equal(res.statusCode, 400)
  const { error } = res.json()
  t.equal(error.details.length, 100, 'at most 100 details')
  t.match(error.message, /\(and 100000 more\)/, 'the message counts them all')
  t.ok(res.body.length < 20_000, `a bounded answer (${res.body.length} bytes)`)
})

t.test('a credential in a query string never reaches a log line', async (t) => {
  let logs = ''
  const stream = new Writable({ write(chunk, _encoding, done) { logs += chunk.toString(); done() } })
  const database = await testDatabase(t)
  const options = loggerOptions('info') as Exclude<ReturnType<typeof loggerOptions>, boolean | undefined>
  const app = await buildApp({ config: testConfig(database, { logLevel: 'info' }), logger: { ...options, stream } as never })
  t.teardown(() => app.close())
  const ws = await seedWorkspace(app)
  await app.inject({ method: 'GET', url: `/v1/projects?api_key=${ws.keys.service}&x=${ws.keys.mcp}&page=2`, headers: bearer(ws.keys.service) })
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.match(logs, /\/v1\/projects\?api_key=%5Bredacted%5D&x=%5Bredacted%5D&page=2/, 'the URL is logged with its credentials redacted')
  t.notOk(logs.includes(ws.keys.service) || logs.includes(ws.keys.mcp), 'no key in any line')
})

/** Sends raw bytes on a fresh connection; resolves with what came back and when the server closed it. */
function raw(port: number, bytes: string, wait: number): Promise<{ text: string; closedAfterMs: number | null }> {
  return new Promise((resolve) => {
    const started = Date.now()
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes))
    let text = ''
    socket.on('data', (chunk) => (text += chunk))
    const timer = setTimeout(() => { socket.destroy(); resolve({ text, closedAfterMs: null }) }, wait)
    socket.on('close', () => { clearTimeout(timer); resolve({ text, closedAfterMs: Date.now() - started }) })
    socket.on('error', () => {})
  })
}

t.test("Node's own refusals and slow requests", async (t) => {
  const { app, url } = await listenTestApp(t, { config: { requestTimeoutMs: 1000 } })
  const port = Number(new URL(url).port)
  const ws = await seedWorkspace(app)

  const huge = await raw(port, `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 10_000)
  t.match(huge.text, /^HTTP\/1\.1 431 /, 'headers too large: 431')
  t.match(huge.text, /\{"error":\{"code":"request_header_fields_too_large","message":"[^"]+"\}\}$/, 'in the error shape')
  t.match(huge.text, /\r\nX-Content-Type-Options: nosniff\r\n/i, 'with nosniff')

  // A body that never finishes: closed once the request timeout (here 1 s) has passed, not left open.
  const slow = await raw(port, `POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ws.keys.ingest}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"ev`, 20_000)
  t.not(slow.closedAfterMs, null, 'the server closed the connection')
  t.ok(slow.text === '' || /^HTTP\/1\.1 408 [^]*\{"error":\{"code":"request_timeout"/.test(slow.text), `with a 408 in the error shape, or silently: ${slow.text.slice(0, 120)}`)
})

/**
 * Writes a whole request before reading anything — as a client busy sending a large body does —
 * then reads what came back. `wrote` is false when the connection was cut before the last byte.
 */
function sendThenRead(port: number, head: string, bodyBytes: number): Promise<{ text: string; wrote: boolean; error?: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.pause()
    let text = ''
    let error: string | undefined
    let wrote = false
    socket.on('error', (err: NodeJS.ErrnoException) => { error = err.code })
    socket.on('data', (chunk) => { text += chunk })
    socket.on('close', () => resolve({ text, wrote, error }))
    socket.on('connect', async () => {
      socket.write(head)
      const chunk = Buffer.alloc(64 * 1024, 97)
      for (let sent = 0; sent < bodyBytes && !socket.destroyed; sent += chunk.length) {
        if (!socket.write(chunk)) await new Promise((resolve) => { socket.once('drain', resolve); socket.once('close', resolve) })
      }
      wrote = !socket.destroyed
      socket.resume()
      // The answer is complete once its body is in (a kept-alive connection stays open).
      const complete = () => {
        const [headers, body = ''] = text.split('\r\n\r\n')
        const length = Number(/content-length: (\d+)/i.exec(headers ?? '')?.[1] ?? NaN)
        if (Buffer.byteLength(body) >= length) socket.end()
      }
      socket.on('data', complete)
      complete()
      setTimeout(() => socket.destroy(), 10_000).unref()
    })
  })
}

t.test('a body over the limit: the client reads the 413 even when it sends the whole body at once', async (t) => {
  const { app, url } = await listenTestApp(t)
  const ws = await seedWorkspace(app)
  const port = Number(new URL(url).port)
  const MiB = 1024 * 1024
  const expected = { error: { code: 'payload_too_large', message: 'The request body is larger than the 1 MiB limit.' } }

  // Node's fetch, here and in a process of its own (as a real client is: in one process the
  // event loop's order happened to read the answer before the reset; from another it did not).
  const here = await fetch(`${url}/v1/events`, { method: 'POST', headers: { ...bearer(ws.keys.ingest), 'content-type': 'application/json' }, body: 'a'.repeat(2 * MiB) })
  t.equal(here.status, 413)
  t.same(await here.json(), expected)
  const client = `const res = await fetch(process.argv[1], { method: 'POST', headers: { authorization: process.argv[3], 'content-type': 'application/json' }, body: 'a'.repeat(Number(process.argv[2])) })
process.stdout.write(JSON.stringify({ status: res.status, body: await res.json() }))`
  for (const size of [2 * MiB, 8 * MiB]) {
    const run = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', client, `${url}/v1/events`, String(size), `Bearer ${ws.keys.ingest}`]).then((r) => r.stdout, (err: Error) => err.message)
    t.same(JSON.parse(run.startsWith('{') ? run : '{}'), { status: 413, body: expected }, `${size / MiB} MiB with fetch from another process: ${run.slice(0, 200)}`)
  }

  // A client that reads nothing until it has sent everything: before, the connection was reset
  // as soon as the 413 was written, and the reset dropped the answer.
  for (const connection of ['keep-alive', 'close']) {
    const res = await sendThenRead(port, `POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ws.keys.ingest}\r\nContent-Type: application/json\r\nConnection: ${connection}\r\nContent-Length: ${8 * MiB}\r\n\r\n`, 8 * MiB)
    t.ok(res.wrote, `Connection: ${connection}: the whole body was taken (${res.error ?? 'no error'})`)
    t.match(res.text, /^HTTP\/1\.1 413 /, `Connection: ${connection}: the 413 arrives`)
    t.same(JSON.parse(res.text.split('\r\n\r\n')[1] ?? '{}'), expected, 'with its body')
  }

  // Draining is bounded: past LINGER_MAX_BYTES the connection is cut.
  t.ok(BODY_LIMIT < LINGER_MAX_BYTES)
  const endless = await sendThenRead(port, `POST /v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ws.keys.ingest}\r\nContent-Type: application/json\r\nContent-Length: ${1024 * MiB}\r\n\r\n`, 64 * MiB)
  t.notOk(endless.wrote, `a 1 GiB body is cut off before 64 MiB have been sent (${endless.error})`)
})
