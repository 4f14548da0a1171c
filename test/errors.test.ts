import t from 'tap'
import Fastify from 'fastify'
import { sql } from '../db/orm.ts'
import { BODY_LIMIT } from '../app.ts'
import { appError } from '../core/errors.ts'
import { frameworkErrors } from '../plugins/errors.ts'
import { bearer, buildTestApp, seedWorkspace } from './helpers/app.ts'

const INTERNAL = { error: { code: 'internal', message: 'Something went wrong on our side; it has been logged.' } }
const JSON_TYPE = 'application/json; charset=utf-8'

t.test('every failure answers {"error":{"code","message","details?"}}', async (t) => {
  const app = await buildTestApp(t)
  // Test routes, added before the app is ready: the root error handler covers them too.
  app.get('/boom', async () => {
    throw new Error('select * from secret_table where password = $1')
  })
  app.get('/boom-sql', async () => {
    await app.db.execute(sql`select secret_column from secret_table`)
    return { ok: true }
  })
  app.get('/boom-status', async () => {
    throw Object.assign(new Error('upstream secret_table said no'), { statusCode: 418 })
  })
  app.get('/boom-serialize', {
    schema: { response: { 200: { type: 'object', required: ['secret_field'], properties: { secret_field: { type: 'string' } } } } },
  }, async () => ({}) as never)
  app.get('/conflict', async () => {
    throw appError('Conflict', 'The slug is taken.', [{ path: 'slug', message: 'is used by another project' }])
  })
  const ws = await seedWorkspace(app)
  const events = (payload: string, contentType = 'application/json', headers: Record<string, string> = bearer(ws.keys.ingest)) =>
    app.inject({ method: 'POST', url: '/v1/events', headers: { ...headers, 'content-type': contentType }, payload })

  t.test('unknown route: 404 not_found as JSON', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/nope?token=abc' })
    t.equal(res.statusCode, 404)
    t.equal(res.headers['content-type'], JSON_TYPE)
    t.same(res.json(), { error: { code: 'not_found', message: 'There is no route GET /nope.' } })
    t.same(Object.keys(res.json().error), ['code', 'message'], 'no details key when there are none')
    const under = await app.inject({ method: 'GET', url: '/api/v1/mcp/projects', headers: bearer(ws.keys.mcp) })
    t.equal(under.statusCode, 404, 'an unknown path under an authenticated prefix')
    t.same(under.json(), { error: { code: 'not_found', message: 'There is no route GET /api/v1/mcp/projects.' } })
    const post = await app.inject({ method: 'POST', url: '/v2/events', payload: {} })
    t.equal(post.statusCode, 404)
    t.equal(post.json().error.code, 'not_found')
  })

  t.test('the root is not a 404: it leads to the console', async (t) => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await app.inject({ method, url: '/' })
      t.equal(res.statusCode, 302, `${method} /: a redirect`)
      t.equal(res.headers.location, '/console')
    }
    const landing = await app.inject({ method: 'GET', url: '/console' })
    t.equal(landing.statusCode, 302, 'which sends a visitor who is not signed in to sign in')
    t.match(landing.headers.location, /^\/console\/login/)
  })

  t.test('wrong method on a known path: 405 method_not_allowed with Allow', async (t) => {
    const health = await app.inject({ method: 'DELETE', url: '/health' })
    t.equal(health.statusCode, 405)
    t.equal(health.headers.allow, 'GET')
    t.equal(health.headers['content-type'], JSON_TYPE)
    t.same(health.json(), { error: { code: 'method_not_allowed', message: 'DELETE is not allowed on /health; use GET.' } })
    const slash = await app.inject({ method: 'POST', url: '/health/?probe=1' })
    t.equal(slash.statusCode, 405, 'with a trailing slash and a query string')
    t.equal(slash.headers.allow, 'GET')
    const params = await app.inject({ method: 'PUT', url: `/api/v1/mcp/projects/${ws.project.id}/opportunities` })
    t.equal(params.statusCode, 405, 'a path with parameters')
    t.equal(params.headers.allow, 'GET, POST')
    t.equal(params.json().error.code, 'method_not_allowed')
    const ingest = await app.inject({ method: 'GET', url: '/v1/events' })
    t.equal(ingest.statusCode, 405)
    t.equal(ingest.headers.allow, 'POST')
    t.same(ingest.json(), { error: { code: 'method_not_allowed', message: 'GET is not allowed on /v1/events; use POST.' } })
  })

  t.test('malformed JSON: 400 invalid_json', async (t) => {
    for (const payload of ['{"events": [', '{events: []}', "{'events': []}", '[1,]']) {
      const res = await events(payload)
      t.equal(res.statusCode, 400, payload)
      t.same(res.json(), { error: { code: 'invalid_json', message: 'The request body is not valid JSON.' } })
    }
    const poisoned = await events('{"events":[],"__proto__":{"admin":true}}')
    t.equal(poisoned.statusCode, 400, 'prototype poisoning is refused')
    t.equal(poisoned.json().error.code, 'invalid_json')
    const anonymous = await events('{"events": [', 'application/json', {})
    t.equal(anonymous.statusCode, 401, 'credentials are checked before the body is read')
  })

  t.test('body over 1 MiB: 413 payload_too_large', async (t) => {
    t.equal(BODY_LIMIT, 1024 * 1024)
    const envelope = (pad: string) => `{"events":[{"event":"x","distinct_id":"${pad}"}]}`
    const exact = envelope('a'.repeat(BODY_LIMIT - envelope('').length))
    t.equal(Buffer.byteLength(exact), BODY_LIMIT)
    const atLimit = await events(exact)
    t.equal(atLimit.statusCode, 400, 'exactly 1 MiB is read (and then fails validation)')
    t.equal(atLimit.json().error.code, 'invalid_arguments')
    const over = await events(envelope('a'.repeat(BODY_LIMIT - envelope('').length + 1)))
    t.equal(over.statusCode, 413)
    t.same(over.json(), { error: { code: 'payload_too_large', message: 'The request body is larger than the 1 MiB limit.' } })
  })

  t.test('wrong content type: 415 unsupported_media_type', async (t) => {
    for (const type of ['application/xml', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const res = await events('<events/>', type)
      t.equal(res.statusCode, 415, type)
      t.equal(res.json().error.code, 'unsupported_media_type')
      t.match(res.json().error.message, /Send Content-Type: application\/json\.$/)
      t.notMatch(res.json().error.message, /FST_/)
    }
    const charset = await events('{"events":[{"event":"a","distinct_id":"b"}]}', 'application/json; charset=utf-8')
    t.equal(charset.statusCode, 200, 'a charset parameter is fine')
    const text = await events('{"events":[{"event":"a","distinct_id":"b"}]}', 'text/plain')
    t.equal(text.statusCode, 415, 'text/plain on a JSON route')
    t.equal(text.json().error.code, 'unsupported_media_type')
  })

  t.test('schema validation: 400 invalid_arguments with one {path, message} per field', async (t) => {
    const res = await app.inject({
      method: 'POST',
      url: '/v1/events',
      headers: bearer(ws.keys.ingest),
      payload: { events: [{ event: '', distinct_id: 5, extra: 1, uuid: 'x', timestamp: 'yesterday' }], bogus: true },
    })
    t.equal(res.statusCode, 400)
    t.same(res.json(), {
      error: {
        code: 'invalid_arguments',
        message: 'Invalid arguments — bogus: is not a known field (and 5 more).',
        details: [
          { path: 'bogus', message: 'is not a known field' },
          { path: 'events[0].extra', message: 'is not a known field' },
          { path: 'events[0].event', message: 'must NOT have fewer than 1 characters' },
          { path: 'events[0].distinct_id', message: 'must be string' },
          { path: 'events[0].timestamp', message: 'must match format "date-time"' },
          { path: 'events[0].uuid', message: 'must match format "uuid"' },
        ],
      },
    })
    const query = await app.inject({
      method: 'GET',
      url: `/api/v1/mcp/projects/${ws.project.id}/opportunities?page=0&page_size=500`,
      headers: bearer(ws.keys.mcp),
    })
    t.equal(query.statusCode, 400)
    t.same(query.json().error.details, [
      { path: 'page', message: 'must be >= 1' },
      { path: 'page_size', message: 'must be <= 100' },
    ])
    const missing = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest), payload: {} })
    t.equal(missing.statusCode, 400)
    t.same(missing.json().error.details, [{ path: 'events', message: 'is required' }])
    const noBody = await app.inject({ method: 'POST', url: '/v1/events', headers: bearer(ws.keys.ingest) })
    t.equal(noBody.statusCode, 400, 'no body at all')
    t.equal(noBody.json().error.code, 'invalid_arguments')
  })

  t.test('a malformed URL: 400 invalid_arguments in the same shape', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/health/%E0%A4%A' })
    t.equal(res.statusCode, 400)
    t.same(res.json(), { error: { code: 'invalid_arguments', message: 'The request URL is not valid: it has a malformed percent-encoding.' } })
  })

  t.test('an error of the catalogue keeps its status, code, message and details', async (t) => {
    const res = await app.inject({ method: 'GET', url: '/conflict' })
    t.equal(res.statusCode, 409)
    t.same(res.json(), { error: { code: 'conflict', message: 'The slug is taken.', details: [{ path: 'slug', message: 'is used by another project' }] } })
  })

  t.test('an unexpected failure: 500 internal, generic message, nothing internal', async (t) => {
    for (const url of ['/boom', '/boom-sql', '/boom-status', '/boom-serialize']) {
      const res = await app.inject({ method: 'GET', url })
      t.equal(res.statusCode, 500, url)
      t.equal(res.headers['content-type'], JSON_TYPE)
      t.same(res.json(), INTERNAL)
      for (const secret of ['secret_table', 'secret_column', 'secret_field', 'select', ' at ', 'Error', 'FST_']) {
        t.notOk(res.body.includes(secret), `${url}: the body does not contain '${secret}'`)
      }
    }
  })
  t.end()
})

t.test('frameworkErrors gives failures before routing the same body', async (t) => {
  const app = Fastify({ logger: false, frameworkErrors })
  t.teardown(() => app.close())
  app.get('/health/:part', async () => ({ ok: true }))
  const res = await app.inject({ method: 'GET', url: '/health/%E0%A4%A' })
  t.equal(res.statusCode, 400)
  t.same(res.json(), { error: { code: 'invalid_arguments', message: 'The request URL is not valid: it has a malformed percent-encoding.' } })
})
