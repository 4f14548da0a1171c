// The OpenAPI document is derived from the operations: it is a valid OpenAPI 3.1 document
// (Redocly's recommended rules find no error in it), every operation has an operationId and
// describes its answers, each tool has a documented call with its own arguments and result,
// and the console's HTML pages are not in it.
import t from 'tap'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { buildTestApp } from '../helpers/app.ts'

t.test('the OpenAPI document', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  const doc = res.json() as { paths: Record<string, Record<string, { operationId?: string; requestBody?: { content: Record<string, { schema: unknown }> }; responses: Record<string, { description: string; content?: Record<string, { schema: { properties?: Record<string, unknown> } }> }> }>> }
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, ...op })))

  t.test('passes Redocly lint (recommended rules) with no error', async (t) => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source: res.body, absoluteRef: 'openapi.json', config })
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)
    t.same(errors, [], 'no lint errors')
  })

  t.test('is a valid OpenAPI 3.1 document: Redocly finds no structural error', async (t) => {
    // Only the rule that checks the document against the OpenAPI 3.1 structure (the recommended
    // set above includes it, among rules of style): a wrong field or type anywhere is an error.
    const config = await createConfig({ rules: { struct: 'error' } })
    const problems = await lintFromString({ source: res.body, absoluteRef: 'openapi.json', config })
    t.same(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`), [], 'no problem at all')
  })

  t.test('every operation describes its answers: none has only the "Default Response" of a route without a response schema', async (t) => {
    t.ok(operations.length > 30)
    const undescribed = operations.filter((op) => Object.values(op.responses).every((r) => r.description === 'Default Response' && !r.content))
    t.same(undescribed.map((op) => op.route), [], 'every route declares what it answers')
    for (const op of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (status.startsWith('2') && status !== '202' && status !== '204') t.ok(response.content && Object.keys(response.content).length > 0, `${op.route} ${status}: a content type and its schema`)
      }
    }
  })

  t.test('the public documents and OAuth say what they answer', async (t) => {
    const answer = (route: string, status: string) => operations.find((op) => op.route === route)?.responses[status]
    t.same(Object.keys(answer('GET /SKILL.md', '200')?.content ?? {}), ['text/markdown'])
    t.same(Object.keys(answer('GET /skills/growth/SKILL.md', '200')?.content ?? {}), ['text/markdown'])
    t.same(Object.keys(answer('GET /llms.txt', '200')?.content ?? {}), ['text/plain'])
    t.same(Object.keys(answer('GET /oauth/authorize', '200')?.content ?? {}), ['text/html'])
    t.notOk(answer('GET /oauth/authorize', '302')?.content, 'a redirect has no body')
    t.same(Object.keys(answer('POST /oauth/token', '200')?.content?.['application/json']?.schema.properties ?? {}), ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope'])
    for (const route of ['POST /oauth/token', 'POST /oauth/revoke', 'POST /oauth/register']) {
      for (const status of route === 'POST /oauth/register' ? ['400', '429'] : ['400', '401', '429']) {
        t.same(Object.keys(answer(route, status)?.content?.['application/json']?.schema.properties ?? {}), ['error', 'error_description'], `${route} ${status}: OAuth's error object`)
      }
    }
    t.ok(answer('POST /oauth/register', '201'), 'registration answers 201')
    t.ok(answer('GET /.well-known/oauth-authorization-server', '200')?.content?.['application/json']?.schema.properties?.token_endpoint)
    t.ok(answer('GET /.well-known/oauth-protected-resource/mcp', '200')?.content?.['application/json']?.schema.properties?.authorization_servers)
    t.ok(answer('POST /mcp', '200')?.content?.['application/json']?.schema.properties?.jsonrpc)
  })

  t.test('the webhooks section: every event type, its envelope and its data\'s schema', async (t) => {
    const { webhookEventTypes } = await import('../../schemas/webhooks.ts')
    const hooks = (res.json() as { webhooks: Record<string, { post: { operationId: string; requestBody: { content: { 'application/json': { schema: { properties: Record<string, { const?: string; properties?: Record<string, unknown> }>; required: string[] } } } }; parameters: { name: string }[] } }> }).webhooks
    t.same(Object.keys(hooks).sort(), [...webhookEventTypes, 'webhook.test'].sort(), 'one entry per event type, and webhook.test')
    for (const [type, hook] of Object.entries(hooks)) {
      const schema = hook.post.requestBody.content['application/json'].schema
      t.same(schema.required, ['type', 'timestamp', 'data'], `${type}: the envelope`)
      t.equal(schema.properties.type!.const, type, `${type}: its type`)
      t.ok(Object.keys(schema.properties.data!.properties ?? {}).length > 1, `${type}: data has a schema of its own`)
      t.same(hook.post.parameters.map((p) => p.name), ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
    }
    t.ok('event_id' in hooks['opportunity.reviewed']!.post.requestBody.content['application/json'].schema.properties.data!.properties! && 'review' in hooks['opportunity.reviewed']!.post.requestBody.content['application/json'].schema.properties.data!.properties!)
    t.ok('metrics' in hooks['digest.ready']!.post.requestBody.content['application/json'].schema.properties.data!.properties!)
    const ids = Object.values(hooks).map((h) => h.post.operationId)
    t.equal(new Set([...ids, ...operations.map((op) => op.operationId)]).size, ids.length + operations.length, 'operationIds unique beside the paths\' ones')
  })

  t.test('every operation has a unique operationId', async (t) => {
    const ids = operations.map((op) => op.operationId)
    t.ok(ids.length > 30)
    t.same(ids.filter((id) => !id), [], 'none missing')
    t.equal(new Set(ids).size, ids.length, 'none repeated')
  })

  t.test('each tool has a call with its own arguments and result', async (t) => {
    for (const contract of app.registry.contracts()) {
      const call = doc.paths[`/v1/tools/${contract.name}`]?.post
      t.ok(call, `POST /v1/tools/${contract.name} is documented`)
      t.equal(call?.operationId, `call_${contract.name}`)
      t.same(call?.requestBody?.content['application/json']?.schema, JSON.parse(JSON.stringify(contract.input_schema)), `${contract.name}: request body is its input schema`)
      t.ok(call?.responses['200']?.content?.['application/json']?.schema.properties?.result, `${contract.name}: result documented`)
    }
    t.notOk(doc.paths['/v1/tools/{name}']?.post, 'the catch-all call route is not documented')
  })

  t.test('the routes with a CSV answer declare text/csv beside JSON', async (t) => {
    for (const path of ['/api/v1/mcp/projects/{project_id}/opportunities', '/api/v1/mcp/projects/{project_id}/daily-ops', '/api/v1/mcp/projects/{project_id}/daily-event-summary']) {
      const content = doc.paths[path]?.get?.responses['200']?.content
      t.same(Object.keys(content ?? {}).sort(), ['application/json', 'text/csv'], `${path}: JSON and CSV`)
      t.ok(content?.['application/json']?.schema.properties, `${path}: the JSON answer keeps its schema`)
    }
    t.same(Object.keys(doc.paths['/api/v1/mcp/projects/{project_id}/event-stream']?.get?.responses['200']?.content ?? {}), ['application/json'], 'a route without a CSV answer: JSON only')
  })

  t.test('operation routes carry their operation name; the console is not an API', async (t) => {
    t.equal(doc.paths['/api/v1/mcp/projects/{project_id}/opportunities/{event_id}/review']?.patch?.operationId, 'review_opportunity')
    t.equal(doc.paths['/v1/projects/{project}']?.get?.operationId, 'get_project')
    t.same(Object.keys(doc.paths).filter((p) => p.startsWith('/console')), [])
  })
})
