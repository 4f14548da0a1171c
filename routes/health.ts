import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorResponse } from '../schemas/atoms.ts'

const Health = Type.Object({ status: Type.Literal('ok') })

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    schema: { tags: ['health'], summary: 'Liveness: 200 when the database answers', response: { 200: Health, 503: ErrorResponse } },
    logLevel: 'warn',
  }, async (request, reply) => {
    try {
      await app.database.ping()
      return { status: 'ok' as const }
    } catch (err) {
      request.log.error({ err }, 'database ping failed')
      return reply.code(503).send({ error: { code: 'unavailable', message: 'The database does not answer.' } })
    }
  })
}

export default healthRoutes
