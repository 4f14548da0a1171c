// Builds the growthdesk app. The server, the CLI and every test use this one factory;
// only server.ts listens.
import type { Socket } from 'node:net'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.ts'
import { coercingAjv, MAX_JSON_DEPTH, nestsDeeperThan, serializerOf, strictAjv, validatorOf } from './core/validation.ts'
import { appError } from './core/errors.ts'
import { isPasswordHashCost, PASSWORD_HASH_COST } from './core/passwords.ts'
import databasePlugin from './plugins/database.ts'
import repositoriesPlugin from './plugins/repositories.ts'
import replicasPlugin from './plugins/replicas.ts'
import secretsPlugin from './plugins/secrets.ts'
import registryPlugin from './plugins/registry.ts'
import toolPluginsPlugin, { loadToolPlugins, type PluginSource } from './plugins/tool-plugins.ts'
import builtinTools from './tools/index.ts'
import webhooksPlugin from './plugins/webhooks.ts'
import retentionPlugin from './plugins/retention.ts'
import eventRetentionPlugin from './plugins/event-retention.ts'
import counterFoldsPlugin from './plugins/counter-folds.ts'
import alertsPlugin from './plugins/alerts.ts'
import mailPlugin from './plugins/mail.ts'
import digestsPlugin from './plugins/digests.ts'
import errorsPlugin, { frameworkErrors } from './plugins/errors.ts'
import authPlugin from './plugins/auth.ts'
import fairUsePlugin from './plugins/fair-use.ts'
import healthRoutes from './routes/health.ts'
import projectApiRoutes from './routes/project-api.ts'
import eventsRoutes from './routes/events.ts'
import toolsApiRoutes from './routes/tools-api.ts'
import projectRoutes from './routes/projects.ts'
import webhookRoutes from './routes/webhooks.ts'
import agentDocsRoutes from './routes/agent-docs.ts'
import openapiPlugin from './plugins/openapi.ts'
import corsPlugin from './plugins/cors.ts'
import mcpRoutes from './routes/mcp.ts'
import oauthMetadataRoutes from './routes/oauth-metadata.ts'
import oauthRoutes from './routes/oauth.ts'
import consolePlugin from './routes/console/index.ts'
import secureJson from 'secure-json-parse'

export interface BuildOptions {
  config: Config
  /** pino options, or false for silence (tests, CLI). Defaults to the configured level. */
  logger?: FastifyServerOptions['logger']
  /** The clock for metrics, expiry and "today"; tests pin it. */
  now?: () => Date
  /** Check every operation's result against its output schema (tests turn it on). */
  checkOutputs?: boolean
  /**
   * Tool plugins loaded after the built-in tools and those of the configuration
   * (GROWTHDESK_PLUGINS): plugin functions, or module specifiers as in the configuration.
   */
  plugins?: PluginSource[]
  /**
   * scrypt's cost (N, a power of two) for the passwords this app hashes (admin bootstrap and
   * create-user); default 2^15. Tests pass a low one: their thousands of users would otherwise
   * spend minutes of CPU in scrypt. A hash carries its cost: any stored one still verifies.
   */
  passwordHashCost?: number
  /** Told of every statement the read replicas' repositories send, with the replica's name (tests count them; DatabaseConfig.onQuery is the primary's). */
  onReplicaQuery?: (sql: string, replica: string) => void
  /** The MCP tools/call fast lane (routes/mcp-fast.ts); false: the SDK answers every POST /mcp. Default true. */
  mcpFastLane?: boolean
  /** Told which path answered each POST /mcp that reached the MCP server: the fast lane or the SDK. */
  onMcpPath?: (path: 'fast' | 'sdk') => void
  /**
   * The deadline of a Client ID Metadata Document fetch, in ms (routes/oauth-client-metadata.ts:
   * METADATA_TIMEOUT_MS, 5 s). Not configuration: tests shorten it to keep their own time short.
   */
  clientMetadataTimeoutMs?: number
  /**
   * The server key of the secrets at rest is lost: values it sealed are replaced or dropped at
   * start instead of stopping it (growthdesk admin rotate-secrets-key --forget-unreadable).
   */
  forgetUnreadableSecrets?: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /** scrypt's cost for new password hashes (BuildOptions.passwordHashCost). */
    passwordHashCost: number
  }
}

export const BODY_LIMIT = 1024 * 1024

/**
 * After a refusal sent before the request's body has all arrived (a 413 decided from
 * Content-Length, a 415, a 401 before the body is read), the rest of the body is read and
 * discarded for up to this many bytes or this long, then the connection is cut: a lingering
 * close, as nginx does. Closing at once would reset the connection while the client is still
 * sending, and a reset makes its TCP stack drop the answer it has not read yet: Node's fetch
 * saw `EPIPE` or `ECONNRESET` instead of the 413.
 */
export const LINGER_MAX_BYTES = 16 * 1024 * 1024
export const LINGER_MS = 5_000

function lingerAfterEarlyRefusal(app: FastifyInstance) {
  app.addHook('onSend', async (request, reply, payload) => {
    const req = request.raw
    const socket = req.socket as Socket & { destroySoon?(): void }
    // A body still arriving on a real connection (app.inject's requests have neither).
    if (req.complete !== false || typeof socket.destroySoon !== 'function' || reply.statusCode < 400 || reply.statusCode >= 500) return payload
    // Node closes a connection after its last answer with `socket.destroySoon()` (Fastify asks
    // for that after a body it will not read, and so may the client): for this socket, while
    // the body is still arriving, that becomes half a close — the write side ends after the
    // answer, the read side goes on and Node's parser discards what arrives.
    let closing = false
    const destroySoon = socket.destroySoon
    socket.destroySoon = function (this: Socket) {
      if (req.complete) return destroySoon.call(this)
      closing = true
      this.end()
    }
    const restore = () => {
      delete (socket as Partial<typeof socket>).destroySoon
    }
    // The rest of the body is read here (Node would dump it, uncounted), and discarded.
    let discarded = 0
    const stop = (cut: boolean) => {
      clearTimeout(timer)
      req.off('data', count)
      req.off('end', ended)
      restore()
      if (cut || closing) socket.destroy()
    }
    const ended = () => stop(false)
    const count = (chunk: Buffer) => {
      discarded += chunk.length
      if (discarded > LINGER_MAX_BYTES) stop(true)
    }
    const timer = setTimeout(() => stop(true), LINGER_MS).unref()
    req.on('data', count)
    req.once('end', ended)
    socket.once('close', () => clearTimeout(timer))
    req.resume()
    return payload
  })
}

/** Query-string values that are, or look like, credentials: never in a log line. */
const SECRET_PARAM = /key|token|secret|password|code|session/i
/** A path segment that is a secret (an invitation or password-reset link's token, gdv_/gdp_…). */
const SECRET_SEGMENT = /gd[a-z]_[0-9A-Za-z]{8,}/g
export function redactUrl(url: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url.replace(SECRET_SEGMENT, '[redacted]')
  const params = new URLSearchParams(url.slice(q + 1))
  for (const [name, value] of params) {
    if (SECRET_PARAM.test(name) || /gd[a-z]_[0-9A-Za-z]{8,}/.test(value)) params.set(name, '[redacted]')
  }
  return `${url.slice(0, q).replace(SECRET_SEGMENT, '[redacted]')}?${params.toString()}`
}

/**
 * One log line per request, written when it completes: method, URL (redacted), host, address,
 * status, response time and request id, at info. Fastify's default writes two (`incoming
 * request`, then `request completed`) with the same data, which cost a fast call ~10 % more
 * server CPU than one; no line at all saves another ~10–20 % (docs/benchmarks.md, "The shipped
 * configuration"), which LOG_REQUESTS=false gives. A request that errors is logged at error
 * either way, and everything else Fastify logs (errors, the start lines) is unchanged.
 */
class OneLinePerRequest extends LogController {
  private readonly logRequests: boolean
  /** The app's logger without the redact paths, for the request line (see requestCompleted). */
  private unredacted: FastifyBaseLogger | undefined
  /** pino's value of `info`: the line is written when the request's logger is at info or below (the health checks' route is at warn). */
  private static readonly INFO = 30

  constructor(logRequests: boolean) {
    super()
    this.logRequests = logRequests
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored')
    else if (this.logRequests && (reply.log as FastifyBaseLogger & { levelVal: number }).levelVal <= OneLinePerRequest.INFO) {
      // The same line as reply.log.info would write (the request's id first, then the fields),
      // without the redact paths: its fields are the serializers' output (method, the URL
      // redacted by redactUrl, host, address, port, status), which hold no header or body, and
      // the paths' wildcards cost ~4 % of a fast call's server CPU (docs/benchmarks.md).
      this.unredacted ??= request.server.log.child({}, { redact: [] })
      this.unredacted.info({ reqId: request.id, req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed')
    }
  }
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    serializers: {
      // Fastify's request fields, with the URL's credentials redacted; anything else logged
      // under `req` passes as it is (the redact paths below still apply to it).
      req(req: { method?: string; url?: unknown; hostname?: string; ip?: string; socket?: { remotePort?: number } }) {
        if (typeof req?.url !== 'string') return req as Record<string, unknown>
        return { method: req.method, url: redactUrl(req.url), host: req.hostname, remoteAddress: req.ip, remotePort: req.socket?.remotePort }
      },
    },
    // Credentials never reach a log line, wherever they appear.
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        'headers.cookie',
        '*.headers.authorization',
        '*.headers.cookie',
        '*.authorization',
        '*.cookie',
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
  // The tool plugins' modules first: one that cannot be loaded stops the start before anything opens.
  const plugins = await loadToolPlugins([builtinTools, ...(config.plugins ?? []), ...(options.plugins ?? [])])
  const passwordHashCost = options.passwordHashCost ?? PASSWORD_HASH_COST
  if (!isPasswordHashCost(passwordHashCost)) throw new TypeError(`passwordHashCost must be a power of two above 1, not ${passwordHashCost}`)
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    logController: new OneLinePerRequest(config.logRequests ?? true),
    bodyLimit: BODY_LIMIT,
    return503OnClosing: true,
    // A request must arrive whole within REQUEST_TIMEOUT_MS (a half-sent body is closed then),
    // an idle connection is closed after KEEP_ALIVE_TIMEOUT_MS.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionTimeout: config.requestTimeoutMs * 2,
    // Node checks request timeouts on this interval (30 s by default): a second is cheap and
    // closes a stalled request within a second of its deadline.
    http: { connectionsCheckingInterval: 1000, headersTimeout: Math.min(10_000, config.requestTimeoutMs) },
    // Node's own answers to requests it cannot parse (431 headers too large, 400) in the API's shape.
    clientErrorHandler: (err: Error & { code?: string }, socket) => {
      const [status, reason, code, message] = err.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'Request Header Fields Too Large', 'request_header_fields_too_large', 'The request headers are larger than the server accepts (16 KiB).']
        : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
          ? [408, 'Request Timeout', 'request_timeout', 'The request did not arrive in time.']
          : [400, 'Bad Request', 'invalid_request', 'The request could not be parsed as HTTP.']
      const body = JSON.stringify({ error: { code, message } })
      if (socket.writable) {
        socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`)
      } else socket.destroy()
    },
    // Opening and migrating the embedded database can take many seconds on a loaded 2-core
    // machine; Fastify's 10 s default failed starts there. A database that does not answer is
    // reported by its driver's own connect timeout.
    pluginTimeout: 120_000,
    forceCloseConnections: 'idle',
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors,
    // A hop count becomes "trust the nearest n proxies" (Fastify's types take no number).
    trustProxy: typeof config.trustProxy === 'number' ? (_address: string, hop: number) => hop < (config.trustProxy as number) : (config.trustProxy ?? false),
  }).withTypeProvider<TypeBoxTypeProvider>()
  app.decorate('passwordHashCost', passwordHashCost)

  lingerAfterEarlyRefusal(app)

  // Compiled on first use (core/validation.ts), not by Fastify's ready step.
  app.setValidatorCompiler(({ schema, httpPart }) => validatorOf(httpPart === 'body' ? strictAjv : coercingAjv, schema))
  app.setSerializerCompiler(({ schema }) => serializerOf(schema))

  // Like Fastify's own JSON parser (prototype-poisoning safe), but an empty body is no body,
  // so `DELETE` or a tool call without arguments need not send `{}`.
  // Bodies are JSON (forms only where the console and OAuth register their own parser):
  // text/plain gets a clear 415 instead of reaching a handler as a string.
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    const text = (body as string).trim()
    if (text === '') return done(null, undefined)
    let value: unknown
    try {
      value = secureJson.parse(text, { protoAction: 'error', constructorAction: 'error' })
    } catch {
      return done(Object.assign(new Error('invalid JSON'), { code: 'FST_ERR_CTP_INVALID_JSON_BODY', statusCode: 400 }), undefined)
    }
    if (nestsDeeperThan(value)) return done(appError('InvalidArguments', `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`), undefined)
    done(null, value)
  })

  try {
    await app.register(errorsPlugin)
    await app.register(databasePlugin, { database: config.database })
    await app.register(secretsPlugin, { secrets: config.secrets, forgetUnreadable: options.forgetUnreadableSecrets })
    await app.register(repositoriesPlugin, { settingsCacheTtlMs: config.settingsCacheTtlMs })
    await app.register(replicasPlugin, { database: config.database, replicas: config.replicas, onReplicaQuery: options.onReplicaQuery })
    const webhookPolicy = { allowPrivateNetworks: config.webhooks?.allowPrivateNetworks ?? false, production: config.production }
    // Before the registry: operations send mail (an invitation) through it.
    await app.register(mailPlugin, { mail: config.mail })
    await app.register(registryPlugin, { now: options.now ?? (() => new Date()), checkOutputs: options.checkOutputs, webhookPolicy, publicUrl: config.publicUrl })
    await app.register(webhooksPlugin, { policy: webhookPolicy, enabled: config.webhooks?.enabled ?? false })
    await app.register(retentionPlugin, { intervalMs: config.retention?.intervalMs ?? 0 })
    await app.register(eventRetentionPlugin, { timer: config.eventPartitions !== undefined, retentionDays: config.eventPartitions?.retentionDays ?? null })
    await app.register(counterFoldsPlugin, { intervalMs: config.counterFolds?.intervalMs ?? 0, now: options.now ?? (() => new Date()) })
    // Alerts are delivered through the webhook outbox: their day-close timer runs with its worker.
    await app.register(alertsPlugin, { enabled: config.webhooks?.enabled ?? false })
    await app.register(digestsPlugin, { enabled: config.digests?.enabled ?? false, publicUrl: config.publicUrl })
    await app.register(fairUsePlugin, { limits: config.rateLimit })
    await app.register(authPlugin, { publicUrl: config.publicUrl })

    await app.register(corsPlugin, { publicUrl: config.publicUrl, allowedOrigins: config.allowedOrigins })
    await app.register(openapiPlugin, { publicUrl: config.publicUrl })
    // After the documentation (a plugin's own routes are documented too) and before every
    // consumer of the registry, which it seals.
    await app.register(toolPluginsPlugin, { plugins })

    await app.register(healthRoutes)
    await app.register(agentDocsRoutes, { publicUrl: config.publicUrl })
    await app.register(projectApiRoutes, { prefix: '/api/v1/mcp' })
    await app.register(eventsRoutes)
    await app.register(toolsApiRoutes, { prefix: '/v1' })
    await app.register(projectRoutes, { prefix: '/v1' })
    await app.register(webhookRoutes, { prefix: '/v1' })
    await app.register(oauthMetadataRoutes, { publicUrl: config.publicUrl })
    await app.register(oauthRoutes, { publicUrl: config.publicUrl })
    await app.register(consolePlugin, { publicUrl: config.publicUrl, clientMetadataPrivateNetwork: config.oauthClientMetadataPrivateNetwork, clientMetadataTimeoutMs: options.clientMetadataTimeoutMs })
    await app.register(mcpRoutes, { publicUrl: config.publicUrl, allowedOrigins: config.allowedOrigins, fastLane: options.mcpFastLane, onPath: options.onMcpPath, conformanceFixtures: config.conformanceFixtures })
  } catch (err) {
    // A plugin failed after the database opened: close it (and its lock) before giving up.
    await app.close().catch(() => {})
    throw err
  }
  return app
}
