import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorResponse } from '../schemas/atoms.ts'
import { UNAVAILABLE_RETRY_AFTER } from '../core/errors.ts'

const Health = Type.Object({ status: Type.Literal('ok') })

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    schema: { tags: ['health'], summary: 'Liveness: 200 when the database answers (and, embedded, can write)', response: { 200: Health, 503: ErrorResponse } },
    logLevel: 'warn',
  }, async (request, reply) => {
    try {
      await app.database.ping()
    } catch (err) {
      request.log.error({ err }, 'database ping failed')
      return reply.code(503).header('retry-after', UNAVAILABLE_RETRY_AFTER).send({ error: { code: 'unavailable', message: 'The database does not answer.' } })
    }
    // A database that answers but cannot write (the embedded one's disk is full) is not healthy:
    // its writes are answered 503 until space returns (checked here by a probe write).
    const problem = app.database.writeProblem?.()
    if (problem) {
      request.log.error({ problem }, 'database cannot write')
      return reply.code(503).header('retry-after', UNAVAILABLE_RETRY_AFTER).send({ error: { code: 'unavailable', message: problem } })
    }
    return { status: 'ok' as const }
  })
}

export default healthRoutes
