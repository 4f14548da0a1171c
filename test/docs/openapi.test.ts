// The OpenAPI document is derived from the operations: Redocly's recommended rules find no
// error in it, every operation has an operationId, each tool has a documented call with its
// own arguments and result, and the console's HTML pages are not in it.
import t from 'tap'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { buildTestApp } from '../helpers/app.ts'

t.test('the OpenAPI document', async (t) => {
  const app = await buildTestApp(t)
  const res = await app.inject({ method: 'GET', url: '/openapi.json' })
  t.equal(res.statusCode, 200)
  const doc = res.json() as { paths: Record<string, Record<string, { operationId?: string; requestBody?: { content: Record<string, { schema: unknown }> }; responses: Record<string, { content?: Record<string, { schema: { properties?: Record<string, unknown> } }> }> }>> }

  t.test('passes Redocly lint (recommended rules) with no error', async (t) => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source: res.body, absoluteRef: 'openapi.json', config })
    const errors = problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`)
    t.same(errors, [], 'no lint errors')
  })

  t.test('every operation has a unique operationId', async (t) => {
    const ids = Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((op) => op.operationId))
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
