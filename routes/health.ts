import { Type } from '@sinclair/typebox'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ErrorResponse } from '../schemas/atoms.ts'
import { appError, errorBody, UNAVAILABLE_RETRY_AFTER } from '../core/errors.ts'

const Health = Type.Object({ status: Type.Literal('ok') })

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', {
    schema: { tags: ['health'], summary: 'Liveness: 200 when the database answers (and, embedded, can write)', response: { 200: Health, 503: ErrorResponse } },
    logLevel: 'warn',
  }, async (request, reply) => {
    // The catalogue's 503, as every surface answers it (core/errors.ts), with its Retry-After.
    const unavailable = (message: string) => reply.code(503).header('retry-after', UNAVAILABLE_RETRY_AFTER).send(errorBody(appError('Unavailable', message)))
    try {
      await app.database.ping()
    } catch (err) {
      request.log.error({ err }, 'database ping failed')
      return unavailable('The database does not answer.')
    }
    // A database that answers but cannot write (the embedded one's disk is full) is not healthy:
    // its writes are answered 503 until space returns (checked here by a probe write).
    const problem = app.database.writeProblem?.()
    if (problem) {
      request.log.error({ problem }, 'database cannot write')
      return unavailable(problem)
    }
    return { status: 'ok' as const }
  })
}

export default healthRoutes
