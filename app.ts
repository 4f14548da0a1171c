// Builds the growthdesk app. The server, the CLI and every test use this one factory;
// only server.ts listens.
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.ts'
import { coercingAjv, strictAjv } from './core/validation.ts'
import databasePlugin from './plugins/database.ts'
import repositoriesPlugin from './plugins/repositories.ts'
import registryPlugin from './plugins/registry.ts'
import errorsPlugin from './plugins/errors.ts'
import authPlugin from './plugins/auth.ts'
import healthRoutes from './routes/health.ts'
import projectApiRoutes from './routes/project-api.ts'
import eventsRoutes from './routes/events.ts'

export interface BuildOptions {
  config: Config
  /** pino options, or false for silence (tests, CLI). Defaults to the configured level. */
  logger?: FastifyServerOptions['logger']
  /** The clock for metrics, expiry and "today"; tests pin it. */
  now?: () => Date
}

export const BODY_LIMIT = 1024 * 1024

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    // Credentials never reach a log line, wherever they appear.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        '*.password',
        '*.key',
        '*.token',
        '*.secret',
      ],
      censor: '[redacted]',
    },
  }
}

export async function buildApp(options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.setValidatorCompiler(({ schema, httpPart }) =>
    httpPart === 'body' ? strictAjv.compile(schema) : coercingAjv.compile(schema)
  )

  await app.register(errorsPlugin)
  await app.register(databasePlugin, { database: config.database })
  await app.register(repositoriesPlugin)
  await app.register(registryPlugin, { now: options.now ?? (() => new Date()) })
  await app.register(authPlugin, { publicUrl: config.publicUrl })

  await app.register(healthRoutes)
  await app.register(projectApiRoutes, { prefix: '/api/v1/mcp' })
  await app.register(eventsRoutes)
  return app
}
