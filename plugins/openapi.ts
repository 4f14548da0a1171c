// OpenAPI 3 description generated from the routes' TypeBox schemas, at /openapi.json,
// and a browsable reference at /docs (@fastify/swagger-ui).
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'

async function openapiPlugin(app: FastifyInstance, options: { publicUrl: string }) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'growthdesk',
        version: '1',
        description: 'Growth opportunities, review pipeline, daily metrics, project cards and memories. Errors: {"error":{"code","message","details"}}.',
      },
      servers: [{ url: options.publicUrl }],
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'gdm_, gds_, gdi_ or gdo_ key' } } },
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
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}

export default fp(openapiPlugin, { name: 'openapi' })
