// One error handler and one not-found handler for the whole app (set at the root, so
// every surface answers with the same body), including Fastify's own failures.
import fp from 'fastify-plugin'
import FindMyWay, { type HTTPVersion } from 'find-my-way'
import type { FastifyError, FastifyInstance, HTTPMethods } from 'fastify'
import { appError, detailsFromValidation, errorBody, invalidArguments } from '../core/errors.ts'

const fastifyErrors: Record<string, (err: FastifyError) => Error> = {
  FST_ERR_CTP_INVALID_JSON_BODY: () => appError('InvalidJson', 'The request body is not valid JSON.'),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    appError('InvalidJson', "The request body is empty but Content-Type is application/json; send a JSON value such as {}."),
  FST_ERR_CTP_BODY_TOO_LARGE: () => appError('PayloadTooLarge', 'The request body is larger than the 1 MiB limit.'),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (err) => appError('UnsupportedMediaType', `${err.message}. Send Content-Type: application/json.`),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => appError('InvalidArguments', 'The Content-Length header does not match the body.'),
}

async function errorsPlugin(app: FastifyInstance) {
  // Fastify answers 404 for a known path with another method; a router of our own tells
  // the two apart so a wrong method is a 405 with `Allow`.
  const paths = FindMyWay<HTTPVersion.V1>({ ignoreTrailingSlash: true })
  const methodsByPath = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    const methods = ([] as HTTPMethods[]).concat(route.method as HTTPMethods | HTTPMethods[])
    let set = methodsByPath.get(route.url)
    if (!set) {
      set = new Set()
      methodsByPath.set(route.url, set)
      paths.on('GET', route.url, () => {}, { url: route.url })
    }
    for (const m of methods) set.add(m)
  })

  app.setNotFoundHandler(async (request, reply) => {
    const path = request.url.split('?')[0]!
    const found = paths.find('GET', path)
    const allowed = found ? methodsByPath.get((found.store as { url: string }).url) : undefined
    if (allowed && !allowed.has(request.method)) {
      const allow = [...allowed].filter((m) => m !== 'HEAD').join(', ')
      reply.header('Allow', allow)
      return reply.code(405).send(errorBody(appError('MethodNotAllowed', `${request.method} is not allowed on ${path}; use ${allow}.`)))
    }
    return reply.code(404).send(errorBody(appError('NotFound', `There is no route ${request.method} ${path}.`)))
  })

  app.setErrorHandler(async (error: FastifyError & { details?: unknown }, request, reply) => {
    let err: FastifyError & { details?: never } = error as never
    if (error.validation) {
      err = invalidArguments(detailsFromValidation(error.validation as never)) as never
    } else if (error.code && fastifyErrors[error.code]) {
      err = fastifyErrors[error.code]!(error) as never
    } else if (error.code === 'FST_ERR_RATE_LIMIT' || error.statusCode === 429) {
      err = appError('RateLimited', error.message) as never
    }
    const status = err.code?.startsWith('GD_') ? (err.statusCode ?? 500) : 500
    if (status >= 500) {
      request.log.error({ err: error }, 'request failed')
      const body = status === 503 ? errorBody(err) : errorBody(appError('Internal', 'Something went wrong on our side; it has been logged.'))
      return reply.code(status).send(body)
    }
    return reply.code(status).send(errorBody(err))
  })
}

export default fp(errorsPlugin, { name: 'errors' })
