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
  })
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}

export default fp(openapiPlugin, { name: 'openapi' })
