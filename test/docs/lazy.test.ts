// /openapi.json and /docs load @fastify/swagger and @fastify/swagger-ui with their first request
// (plugins/openapi.ts), not at start: nothing of either is loaded by building the app, the very
// first requests (at once, over a real socket) answer as the plugins did when registered at
// start, and the document still lists every route the app has.
import { createRequire } from 'node:module'
import t from 'tap'
import { buildTestApp, listenTestApp } from '../helpers/app.ts'
import { appRoutes } from '../fuzz/routes.ts'

const loaded = (name: string) => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes(`/node_modules/${name}/`))

t.test('the first /openapi.json and /docs requests after a start', async (t) => {
  const { app, url } = await listenTestApp(t)
  t.notOk(loaded('@fastify/swagger'), '@fastify/swagger is not loaded at start')
  t.notOk(loaded('@fastify/swagger-ui'), '@fastify/swagger-ui is not loaded at start')
  t.notOk(loaded('@fastify/static'), '@fastify/static is not loaded at start')

  // The first requests all at once: one build of each, shared.
  const paths = ['/docs', '/openapi.json', '/docs/', '/docs/json', '/docs/yaml', '/docs/static/swagger-initializer.js', '/docs/static/swagger-ui.css', '/docs/static/index.html']
  const [docs, openapi, docsSlash, docsJson, docsYaml, initializer, css, index] = await Promise.all(paths.map((p) => fetch(`${url}${p}`, { redirect: 'manual' })))
  t.equal(docs!.status, 200)
  t.match(docs!.headers.get('content-type'), /^text\/html/)
  const html = await docs!.text()
  t.match(html, /swagger-ui/, '/docs is the reference page')
  t.equal(docsSlash!.status, 200)
  t.match(await docsSlash!.text(), /swagger-ui/)
  t.equal(openapi!.status, 200)
  const doc = await openapi!.json() as { openapi: string; paths: Record<string, Record<string, unknown>> }
  t.equal(doc.openapi, '3.1.0')
  t.same(await docsJson!.json(), doc, '/docs/json is the same document')
  t.equal(docsYaml!.status, 200)
  t.match(docsYaml!.headers.get('content-type'), /yaml/)
  t.match(await docsYaml!.text(), /^openapi: 3\.1\.0/m)
  t.equal(initializer!.status, 200)
  t.match(initializer!.headers.get('content-type'), /javascript/)
  t.match(await initializer!.text(), /SwaggerUIBundle/)
  t.equal(css!.status, 200)
  t.match(css!.headers.get('content-type'), /^text\/css/)
  const etag = css!.headers.get('etag')
  t.ok(etag, 'static files carry an ETag')
  await css!.arrayBuffer()
  t.equal(index!.status, 302, 'static/index.html redirects to /docs/')
  t.equal(index!.headers.get('location'), '/docs/')
  t.equal(index!.headers.get('content-type'), null, 'a redirect has no body and no content type')
  t.ok(loaded('@fastify/swagger-ui'), 'loaded by the first /docs request')

  t.test('conditional and HEAD requests, refusals in the API error shape', async (t) => {
    // (Through inject: Node's fetch asks the server not to answer from a cache.)
    const notModified = await app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css', headers: { 'if-none-match': etag! } })
    t.equal(notModified.statusCode, 304)
    t.equal(notModified.body, '')
    const head = await fetch(`${url}/docs/static/swagger-ui.css`, { method: 'HEAD' })
    t.equal(head.status, 200)
    t.equal(head.headers.get('content-length'), css!.headers.get('content-length'), 'HEAD gives the length of the GET')
    for (const method of ['GET', 'HEAD']) {
      const missing = await app.inject({ method: method as 'GET', url: '/docs/static/no-such-file.js' })
      t.equal(missing.statusCode, 404, `${method} of a missing file`)
      const unknown = await app.inject({ method: method as 'GET', url: '/docs/nothing-here' })
      t.equal(unknown.statusCode, 404, `${method} of an unknown /docs path`)
    }
    const nul = await app.inject({ method: 'GET', url: '/docs/static/a%00b' })
    t.equal(nul.statusCode, 403)
    t.same(nul.json(), { error: { code: 'forbidden', message: 'Forbidden.' } })
    const post = await app.inject({ method: 'POST', url: '/docs' })
    t.equal(post.statusCode, 405)
    t.equal(post.headers.allow, 'GET')
  })
})

t.test('the lazily built document lists every route of the app', async (t) => {
  const app = await buildTestApp(t)
  const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> }
  const documented = new Set(Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`)))
  const asDocumented = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}')
  const routes = appRoutes(app).filter((r) => r.method !== 'HEAD' && r.method !== 'OPTIONS')
  const undocumented = routes.map((r) => `${r.method} ${r.url}`).filter((k) => !documented.has(asDocumented(k)) && !k.split(' ')[1]!.startsWith('/console'))
  // Hidden on purpose: the documents themselves, the catch-all tool call (each tool has its own
  // documented call), the browser half of OAuth's form post, MCP's stream and session end, and
  // the root's redirect to the console.
  t.same(undocumented.sort(), ['DELETE /mcp', 'GET /', 'GET /docs', 'GET /docs/*', 'GET /mcp', 'GET /openapi.json', 'POST /oauth/authorize', 'POST /v1/tools/:name'])
  t.same([...documented].filter((d) => !routes.some((r) => `${r.method} ${asDocumented(r.url)}` === d)), [], 'nothing documented that the app does not have')
  t.ok(documented.size > 40)
})
