// OpenAPI 3 description generated from the routes' TypeBox schemas, at /openapi.json,
// and a browsable reference at /docs (@fastify/swagger-ui).
//
// Both load with their first request, not at start (about 3 MB of an idle server's memory):
// a start only records each route's options as it is added. The first /openapi.json (or /docs,
// /docs/json, /docs/yaml) builds a small Fastify instance that registers @fastify/swagger as any
// application does, adds the recorded routes to it (described only: nothing there validates,
// serializes or answers), asks it for the document once it is ready, and closes it; the document
// is kept. The first /docs request builds another small instance holding @fastify/swagger (in
// its static mode, over that document) and @fastify/swagger-ui (with @fastify/static), and every
// /docs request is answered by it through `inject`: its status, headers and body become this
// reply's, and its refusals are this app's own (a 404 worded as the not-found handler words it,
// a 403 in the error shape): /docs answers as the plugin did when it was registered at start (a
// HEAD of a missing file is now a 404 like its GET, not a 405).
import fp from 'fastify-plugin'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify'
import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import { appError, clientError } from '../core/errors.ts'
import { webhookEnvelope, webhookEventData } from '../schemas/webhook-events.ts'

/**
 * OpenAPI 3.1's top-level `webhooks`: one entry per event type, the POST growthdesk sends a
 * subscription (Standard Webhooks headers, the envelope with that type's `data`), answered 2xx.
 */
export function webhooksSection() {
  const headers = {
    'webhook-id': { required: true, description: 'The message id (msg_…): the same on every attempt and replay; de-duplicate by it.', schema: { type: 'string' } },
    'webhook-timestamp': { required: true, description: 'The attempt\'s time, Unix seconds.', schema: { type: 'string' } },
    'webhook-signature': { required: true, description: 'Space-separated `v1,<base64 HMAC-SHA256>` (the whsec_ secret; and the previous one for 24 h after a rotation) and/or `v1a,<base64 ed25519>` (the whpk_ public key) of `id.timestamp.body`.', schema: { type: 'string' } },
  }
  return Object.fromEntries(Object.entries(webhookEventData).map(([type, data]) => [type, {
    post: {
      operationId: `webhook_${type.replace('.', '_')}`,
      summary: `${type} (webhook)`,
      description: `What a subscription to ${type} receives (docs/webhooks.md). With format "slack", a Slack incoming-webhook message ({text, blocks}) made from it instead.`,
      tags: ['webhooks'],
      parameters: Object.entries(headers).map(([name, h]) => ({ name, in: 'header', ...h })),
      requestBody: { required: true, content: { 'application/json': { schema: webhookEnvelope(type, data) } } },
      responses: {
        '2XX': { description: 'Received: any 2xx within 10 s. Anything else is retried for over 3 days; 410 Gone disables the subscription; a 429\'s or 503\'s Retry-After is honoured.' },
      },
      security: [],
    },
  }]))
}

/** The OpenAPI document @fastify/swagger makes. */
type OpenApiDocument = ReturnType<FastifyInstance['swagger']>

function swaggerOptions(publicUrl: string): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'growthdesk',
        version: '1',
        description: 'Growth opportunities, review pipeline, daily metrics, project cards and memories. Errors: {"error":{"code","message","details"}}.',
      },
      servers: [{ url: publicUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'gdm_, gds_, gdi_ or gdo_ key' } } },
      webhooks: webhooksSection() as never,
    },
    transform: ({ schema, url, route }) => {
      // The console is HTML for people, not an API: it is not documented here.
      if (url.startsWith('/console')) return { schema: { ...schema, hide: true }, url }
      const method = String(route.method).toLowerCase()
      return {
        url,
        schema: {
          ...schema,
          // Routes that take a credential say so (`bearer`); every other documented route is public.
          security: schema?.security ?? [],
          // Operation routes carry the operation's name; the few others get one from method and path.
          operationId: schema?.operationId ?? `${method}${url.replace(/[^a-zA-Z0-9]+/g, '_').replace(/_+$/, '')}`,
        },
      }
    },
  }
}

/**
 * The document of the recorded routes: @fastify/swagger registered on an instance of its own, in
 * its dynamic mode, which sees each route as it is added there, as it would have in the app.
 */
async function buildDocument(app: FastifyInstance, routes: RouteOptions[], publicUrl: string): Promise<OpenApiDocument> {
  const { default: swagger } = await import('@fastify/swagger')
  // HEAD routes come with the recorded ones (the app made them for its GET routes).
  const host = Fastify({ logger: false, exposeHeadRoutes: false, routerOptions: { ignoreTrailingSlash: true } })
  try {
    // The routes are described there, never called: no validator or serializer is compiled.
    host.setValidatorCompiler(() => () => true)
    host.setSerializerCompiler(() => (data) => JSON.stringify(data))
    for (const schema of Object.values(app.getSchemas())) host.addSchema(schema)
    await host.register(swagger, swaggerOptions(publicUrl))
    const handler = async () => undefined
    for (const { method, url, schema, config, constraints } of routes) host.route({ method, url, schema, config, constraints, handler })
    await host.ready()
    return host.swagger()
  } finally {
    await host.close()
  }
}

/** A Fastify instance holding only @fastify/swagger-ui under /docs, over the given document. */
async function buildDocsApp(document: () => Promise<OpenApiDocument>): Promise<FastifyInstance> {
  const [{ default: swagger }, { default: swaggerUi }] = await Promise.all([import('@fastify/swagger'), import('@fastify/swagger-ui')])
  const docs = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } })
  await docs.register(swagger, { mode: 'static', specification: { document: await document() as never } })
  await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
  await docs.ready()
  return docs
}

/** Response headers that belong to one connection or are set again by this reply. */
const NOT_COPIED = new Set(['content-length', 'connection', 'keep-alive', 'transfer-encoding', 'date'])

async function openapiPlugin(app: FastifyInstance, options: { publicUrl: string }) {
  const routes: RouteOptions[] = []
  app.addHook('onRoute', (route) => {
    routes.push(route)
  })

  // One build each, shared by concurrent first requests; a failed build is tried again by the next request.
  let documentBuild: Promise<OpenApiDocument> | undefined
  const document = () => {
    documentBuild ??= buildDocument(app, routes, options.publicUrl).catch((err: unknown) => {
      documentBuild = undefined
      throw err
    })
    return documentBuild
  }
  let docsBuild: Promise<FastifyInstance> | undefined
  const docsApp = () => {
    docsBuild ??= buildDocsApp(document).catch((err: unknown) => {
      docsBuild = undefined
      throw err
    })
    return docsBuild
  }
  app.addHook('onClose', async () => {
    if (docsBuild) await (await docsBuild.catch(() => undefined))?.close()
  })

  app.get('/openapi.json', { schema: { hide: true } }, async () => document())

  // Every /docs request, answered by the docs instance. A HEAD is asked as a GET there: Fastify's
  // HEAD route of this GET sends the same headers without the body, as it did for the plugin's routes.
  const forward = async (request: FastifyRequest, reply: FastifyReply) => {
    const docs = await docsApp()
    const headers = { ...request.headers }
    delete headers['content-length']
    delete headers['transfer-encoding']
    delete headers.connection
    const res = await docs.inject({ method: 'GET', url: request.url, headers })
    // The not-found handler's answer, thrown from this route (which stays the request's route).
    if (res.statusCode === 404) throw appError('NotFound', `There is no route ${request.method} ${request.url.split('?')[0]}.`)
    if (res.statusCode >= 500) throw new Error(`the docs instance answered ${res.statusCode} to ${request.url}`)
    if (res.statusCode >= 400) throw clientError(res.statusCode)
    for (const [name, value] of Object.entries(res.headers)) {
      if (!NOT_COPIED.has(name) && value !== undefined) reply.header(name, value)
    }
    // No body (a redirect, a 304) is sent as none, without a content type of its own.
    return reply.code(res.statusCode).send(res.rawPayload.length === 0 ? undefined : res.rawPayload)
  }
  app.get('/docs', { schema: { hide: true } }, forward)
  app.get('/docs/*', { schema: { hide: true } }, forward)
}

export default fp(openapiPlugin, { name: 'openapi' })
