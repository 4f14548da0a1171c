// OpenAPI 3 description generated from the routes' TypeBox schemas, at /openapi.json,
// and a browsable reference at /docs (@fastify/swagger-ui).
//
// Both load with their first request, not at start (about 3 MB of an idle server's memory):
// a start only records each route's options as it is added, as @fastify/swagger's own onRoute
// hook would. The first /openapi.json (or /docs/json, /docs/yaml) hands those routes to
// @fastify/swagger and keeps the function it makes (it caches the document itself). The first
// /docs request builds a small Fastify instance of its own holding @fastify/swagger-ui (with
// @fastify/static), and every /docs request is answered by it through `inject`: its status,
// headers and body become this reply's, and its refusals are this app's own (a 404 worded as the
// not-found handler words it, a 403 in the error shape): /docs answers as the plugin did when it
// was registered at start (a HEAD of a missing file is now a 404 like its GET, not a 405).
import fp from 'fastify-plugin'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify'
import { appError, clientError } from '../core/errors.ts'

/** @fastify/swagger's `swagger()`: the document, or its YAML with `{ yaml: true }`. */
type SwaggerFunction = FastifyInstance['swagger']

function swaggerOptions(publicUrl: string) {
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
    },
    transform: ({ schema, url, route }: { schema: Record<string, unknown> | undefined; url: string; route: RouteOptions }) => {
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

type Hook = (...args: unknown[]) => unknown

/**
 * @fastify/swagger's document function for the recorded routes. The plugin (dynamic mode) adds an
 * onRoute, an onRegister and an onReady hook and decorates `swagger`; here it is given a host
 * that takes exactly those, its onRoute hook is fed every route the app added, and its onReady
 * hook is run, as Fastify would have done at start. Anything else the plugin asked of its host
 * would throw, and the OpenAPI tests fail.
 */
async function buildSwagger(app: FastifyInstance, routes: RouteOptions[], publicUrl: string): Promise<SwaggerFunction> {
  const { fastifySwagger } = (await import('@fastify/swagger')).default as unknown as {
    fastifySwagger: (host: unknown, opts: unknown, done: (err?: Error) => void) => void
  }
  const hooks = new Map<string, Hook>()
  let swagger: SwaggerFunction | undefined
  const host = {
    addHook: (name: string, fn: Hook) => {
      hooks.set(name, fn)
    },
    decorate: (name: string, fn: SwaggerFunction) => {
      if (name === 'swagger') swagger = fn
    },
    getSchemas: () => app.getSchemas(),
  }
  await new Promise<void>((resolve, reject) => fastifySwagger(host, swaggerOptions(publicUrl), (err) => (err ? reject(err) : resolve())))
  const onRoute = hooks.get('onRoute')
  const onReady = hooks.get('onReady')
  if (!onRoute || !onReady || !swagger) throw new Error('@fastify/swagger did not add the hooks and decorator expected of it')
  for (const route of routes) onRoute(route)
  await new Promise((resolve) => onReady(resolve))
  return swagger
}

/** A Fastify instance holding only @fastify/swagger-ui under /docs, over the given document. */
async function buildDocsApp(app: FastifyInstance, swagger: () => Promise<SwaggerFunction>): Promise<FastifyInstance> {
  const { default: swaggerUi } = await import('@fastify/swagger-ui')
  const docs = Fastify({ logger: false, routerOptions: { ignoreTrailingSlash: true } })
  // What swagger-ui needs of @fastify/swagger: the `swagger` decorator, under the plugin's name.
  const swaggerDecorator = await swagger()
  await docs.register(fp(async (instance) => {
    instance.decorate('swagger', swaggerDecorator)
  }, { name: '@fastify/swagger' }))
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
  let swaggerBuild: Promise<SwaggerFunction> | undefined
  const swagger = () => {
    swaggerBuild ??= buildSwagger(app, routes, options.publicUrl).catch((err: unknown) => {
      swaggerBuild = undefined
      throw err
    })
    return swaggerBuild
  }
  let docsBuild: Promise<FastifyInstance> | undefined
  const docsApp = () => {
    docsBuild ??= buildDocsApp(app, swagger).catch((err: unknown) => {
      docsBuild = undefined
      throw err
    })
    return docsBuild
  }
  app.addHook('onClose', async () => {
    if (docsBuild) await (await docsBuild.catch(() => undefined))?.close()
  })

  app.get('/openapi.json', { schema: { hide: true } }, async () => (await swagger())())

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
