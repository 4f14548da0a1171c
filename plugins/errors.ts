// One error handler and one not-found handler for the whole app (set at the root, so
// every surface answers with the same body), including Fastify's own failures.
import fp from 'fastify-plugin'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import { appError, clientError, errorBody, errorResponse, UNAVAILABLE_RETRY_AFTER, validationFailed } from '../core/errors.ts'

const fastifyErrors: Record<string, (err: FastifyError) => Error> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => appError('InvalidJson', 'The request body is not valid JSON.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    appError('InvalidJson', 'The request body is empty but Content-Type is application/json; send a JSON value such as {}.'),
  FST_ERR_CTP_BODY_TOO_LARGE: () => appError('PayloadTooLarge', 'The request body is larger than the 1 MiB limit.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (err) => appError('UnsupportedMediaType', `${err.message}. Send Content-Type: application/json.`),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => appError('InvalidArguments', 'The Content-Length header does not match the body.'),
}

/**
 * For Fastify's `frameworkErrors` server option: failures before routing (a URL with broken
 * percent-encoding) never reach the error handler and would otherwise get Fastify's own body.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // No hook has run yet (they run once a route is found): the header every response carries is set here.
  reply.header('x-content-type-options', 'nosniff')
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return reply.code(400).send(errorBody(appError('InvalidArguments', 'A path segment is longer than the 100 characters an id or slug can have.')))
  }
  if (error.code === 'FST_ERR_BAD_URL') {
    return reply.code(400).send(errorBody(appError('InvalidArguments', 'The request URL is not valid: it has a malformed percent-encoding.')))
  }
  request.log.error({ err: error }, 'request failed before routing')
  return reply.code(500).send(errorBody(appError('Internal', 'Something went wrong on our side; it has been logged.')))
}

/** Order of methods in `Allow`; others follow alphabetically. */
const methodOrder = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
const byMethodOrder = (a: string, b: string) =>
  (methodOrder.indexOf(a) + 1 || 99) - (methodOrder.indexOf(b) + 1 || 99) || a.localeCompare(b)

async function errorsPlugin(app: FastifyInstance) {
  // Fastify answers 404 for a known path with another method; asking its router (findRoute)
  // under every method some route has tells the two apart, so a wrong method is a 405 with
  // `Allow`. HEAD and OPTIONS do not count: the CORS plugin answers OPTIONS on every path
  // (`*`), which must not turn every unknown path into a 405.
  const methods = new Set<HTTPMethods>()
  app.addHook('onRoute', (route) => {
    for (const method of ([] as HTTPMethods[]).concat(route.method)) {
      if (method !== 'HEAD' && method !== 'OPTIONS') methods.add(method)
    }
  })

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0]!
    const allowed = [...methods].filter((method) => app.findRoute({ method, url: path })).sort(byMethodOrder)
    if (allowed.length > 0 && !allowed.includes(request.method as HTTPMethods)) {
      const allow = allowed.join(', ')
      reply.header('Allow', allow)
      return reply.code(405).send(errorBody(appError('MethodNotAllowed', `${request.method} is not allowed on ${path}; use ${allow}.`)))
    }
    return reply.code(404).send(errorBody(appError('NotFound', `There is no route ${request.method} ${path}.`)))
  })

  app.setErrorHandler(async (error: FastifyError & { details?: unknown }, request, reply) => {
    let err: FastifyError & { details?: never } = error as never
    if (error.validation) {
      err = validationFailed(error.validation as never) as never
    } else if (error.code && fastifyErrors[error.code]) {
      err = fastifyErrors[error.code]!(error) as never
    } else if (error.code === 'FST_ERR_RATE_LIMIT' || error.statusCode === 429) {
      err = appError('RateLimited', error.message) as never
    } else if (error.code?.startsWith('FST_') && error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      // A Fastify plugin's own refusal (@fastify/static's FST_STATIC_FORBIDDEN_PATH): its status, in
      // the error shape, not a 500. Any other error with a status is still unexpected: a 500.
      err = clientError(error.statusCode) as never
    }
    const { status, body, internal } = errorResponse(err)
    if (internal) request.log.error({ err: error }, 'request failed')
    if (status === 503) {
      // The database is away for a moment (a lost connection, a full disk): never a 500.
      if (body.error.code === 'unavailable') request.log.warn({ err: error }, 'database unavailable')
      reply.header('retry-after', UNAVAILABLE_RETRY_AFTER)
    }
    return reply.code(status).send(body)
  })
}

export default fp(errorsPlugin, { name: 'errors' })
