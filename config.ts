// The one place that reads the environment: a TypeBox schema with defaults,
// validated once, then turned into the Config every other module receives.
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import path from 'node:path'
import type { DatabaseConfig } from './db/client.ts'
import { decodeSecretsKey, SECRETS_KEY_FILE } from './db/secret-box.ts'

/** A 32-byte key: 64 hex digits, or base64 (44 characters with the `=`, 43 without; URL-safe too). */
const SECRETS_KEY = '(?:[0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)'

export const EnvSchema = Type.Object({
  HOST: Type.String({ default: '127.0.0.1', minLength: 1 }),
  PORT: Type.Integer({ default: 3000, minimum: 0, maximum: 65535 }),
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^/\\s]+(/[^\\s]*)?$' })),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^(postgres(ql)?://|memory://$)' })),
  DATABASE_REPLICA_URLS: Type.String({ default: '', pattern: '^(postgres(ql)?://[^\\s,]+(\\s*,\\s*postgres(ql)?://[^\\s,]+)*)?$' }),
  DATABASE_REPLICA_MAX_LAG_MS: Type.Integer({ default: 10_000, minimum: 0, maximum: 3_600_000 }),
  DATA_DIR: Type.String({ default: './.data', minLength: 1 }),
  EMBEDDED_SYNC: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  ALLOWED_ORIGINS: Type.String({ default: '', pattern: '^(https?://[^/,\\s]+)?(,\\s*https?://[^/,\\s]+)*$' }),
  TRUST_PROXY: Type.String({ default: 'false', pattern: '^(true|false|\\d{1,2}|[0-9a-fA-F.:/]+(,\\s*[0-9a-fA-F.:/]+)*)$' }),
  OAUTH_CLIENT_METADATA_PRIVATE_NETWORK: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  REQUEST_TIMEOUT_MS: Type.Integer({ default: 25_000, minimum: 1000, maximum: 600_000 }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ default: 72_000, minimum: 1000, maximum: 600_000 }),
  RATE_LIMIT_MAX: Type.Integer({ default: 300, minimum: 0, maximum: 1_000_000 }),
  RATE_LIMIT_INGEST_MAX: Type.Integer({ default: 1000, minimum: 0, maximum: 1_000_000 }),
  RATE_LIMIT_WINDOW_SECONDS: Type.Integer({ default: 10, minimum: 1, maximum: 3600 }),
  RATE_LIMIT_AUTH_FAILURES: Type.Integer({ default: 30, minimum: 0, maximum: 1_000_000 }),
  RATE_LIMIT_CONCURRENCY: Type.Integer({ default: 8, minimum: 0, maximum: 10_000 }),
  SETTINGS_CACHE_TTL_MS: Type.Integer({ default: 10_000, minimum: 0, maximum: 600_000 }),
  WEBHOOKS_ENABLED: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  RETENTION_FOLD_INTERVAL_MS: Type.Integer({ default: 5000, minimum: 0, maximum: 3_600_000 }),
  EVENTS_RETENTION_DAYS: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  COUNTER_FOLD_INTERVAL_MS: Type.Integer({ default: 60_000, minimum: 0, maximum: 86_400_000 }),
  DIGESTS_ENABLED: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  GROWTHDESK_PLUGINS: Type.String({ default: '' }),
  SMTP_URL: Type.Optional(Type.String({ pattern: '^smtps?://[^\\s]+$' })),
  MAIL_FROM: Type.Optional(Type.String({ minLength: 3, maxLength: 320, pattern: '^[^\\r\\n]*@[^\\r\\n]*$' })),
  SECRETS_KEY: Type.Optional(Type.String({ pattern: `^${SECRETS_KEY}$` })),
  SECRETS_KEY_PREVIOUS: Type.Optional(Type.String({ pattern: `^${SECRETS_KEY}(\\s*,\\s*${SECRETS_KEY})*$` })),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
    { default: 'info' }
  ),
  LOG_REQUESTS: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'true' }),
  MCP_CONFORMANCE_FIXTURES: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
  /** Any value; only `production` changes anything (Config.production). */
  NODE_ENV: Type.Optional(Type.String()),
})
type Env = Static<typeof EnvSchema>

const checkEnv = TypeCompiler.Compile(EnvSchema)
const secretVariables = new Set<keyof Env>(['SECRETS_KEY', 'SECRETS_KEY_PREVIOUS', 'SMTP_URL'])

const hints: Record<keyof Env, string> = {
  HOST: 'a host name or address to listen on',
  PORT: 'an integer from 0 to 65535',
  PUBLIC_URL: 'an absolute http(s) URL such as https://growthdesk.example.com',
  DATABASE_URL: 'a postgres:// URL, or memory:// for an in-memory embedded database',
  DATABASE_REPLICA_URLS: 'a comma-separated list of postgres:// URLs of streaming replicas of DATABASE_URL\'s server',
  DATABASE_REPLICA_MAX_LAG_MS: 'milliseconds from 0 to 3600000 a replica may lag behind the primary and still serve reads',
  DATA_DIR: 'a folder for the embedded database',
  EMBEDDED_SYNC: 'true or false',
  ALLOWED_ORIGINS: 'a comma-separated list of origins such as https://app.example.com,http://localhost:6274',
  TRUST_PROXY: 'true, false, a number of proxy hops, or comma-separated proxy addresses/CIDRs',
  OAUTH_CLIENT_METADATA_PRIVATE_NETWORK: 'true or false',
  REQUEST_TIMEOUT_MS: 'milliseconds from 1000 to 600000 in which a whole request must arrive',
  KEEP_ALIVE_TIMEOUT_MS: 'milliseconds from 1000 to 600000 an idle keep-alive connection stays open',
  RATE_LIMIT_MAX: 'requests per credential per window, an integer from 0 (no limit) to 1000000',
  RATE_LIMIT_INGEST_MAX: 'event batches per credential per window, an integer from 0 (no limit) to 1000000',
  RATE_LIMIT_WINDOW_SECONDS: 'the rate-limit window in seconds, from 1 to 3600',
  RATE_LIMIT_AUTH_FAILURES: 'failed authentications per client address per minute, an integer from 0 (no limit) to 1000000',
  RATE_LIMIT_CONCURRENCY: 'concurrent requests per credential per instance, an integer from 0 (no limit) to 10000',
  SETTINGS_CACHE_TTL_MS: 'milliseconds from 0 (no cache) to 600000 an instance may keep a credential, role or setting',
  WEBHOOKS_ENABLED: 'true or false',
  WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true or false',
  RETENTION_FOLD_INTERVAL_MS: 'milliseconds from 0 (off: reads fold what is queued) to 3600000 between background folds of retention',
  EVENTS_RETENTION_DAYS: 'a whole number of days from 1 to 1000000 to keep raw events (unset: keep everything)',
  COUNTER_FOLD_INTERVAL_MS: 'milliseconds from 0 (off) to 86400000 between folds of finished days\' counter shards',
  DIGESTS_ENABLED: 'true or false',
  GROWTHDESK_PLUGINS: 'a comma-separated list of tool plugins: package names (installed beside growthdesk) or absolute paths',
  SMTP_URL: 'an SMTP server URL such as smtp://user:pass@smtp.example.com:587 (STARTTLS) or smtps://user:pass@smtp.example.com:465',
  MAIL_FROM: 'a sender address such as "growthdesk <growthdesk@example.com>"',
  SECRETS_KEY: 'a 32-byte key in base64 (44 characters, e.g. from `openssl rand -base64 32`) or hex (64 characters)',
  SECRETS_KEY_PREVIOUS: 'a comma-separated list of 32-byte keys, each in base64 (44 characters) or hex (64 characters)',
  LOG_LEVEL: 'one of fatal, error, warn, info, debug, trace, silent',
  LOG_REQUESTS: 'true or false',
  MCP_CONFORMANCE_FIXTURES: 'true or false (true only to run the MCP conformance suite, never in production)',
  NODE_ENV: 'production, or anything else for development',
}

/** The database settings; the type lives with the code that opens it. */
export type Database = DatabaseConfig

/** Fair use (plugins/fair-use.ts): a max of 0 turns that limit off. */
export interface RateLimits {
  /** Requests per credential per window on the project-side API, the tools API and MCP. */
  max: number
  /** Event batches (POST /v1/events) per credential per window. */
  ingestMax: number
  windowMs: number
  /** Failed authentications per client address per `authFailureWindowMs`. */
  authFailures: number
  authFailureWindowMs: number
  /** Requests of one credential in progress at once on one instance. */
  concurrency: number
}

export interface Config {
  /** NODE_ENV=production: the stricter choices meant for a deployment (a webhook URL must be https://, even for loopback). */
  production: boolean
  host: string
  port: number
  /** Base URL clients use to reach this deployment; no trailing slash. */
  publicUrl: string
  database: Database
  /**
   * Read replicas (DATABASE_REPLICA_URLS, DATABASE_REPLICA_MAX_LAG_MS; db/replicas.ts): the reads
   * that tolerate a short lag go to a replica that is up and within `maxLagMs` of the primary,
   * and that has replayed the caller's own latest write. No URLs (the default): every read goes
   * to the primary and nothing of this runs.
   */
  replicas?: ReplicasConfig
  /** Browser origins allowed besides PUBLIC_URL's own (CORS and the MCP Origin check). */
  allowedOrigins: string[]
  /** Fastify's trustProxy: behind a TLS-terminating proxy, X-Forwarded-* tell the client's protocol and address. */
  trustProxy?: boolean | number | string[]
  logLevel: Env['LOG_LEVEL']
  /** LOG_REQUESTS: one info line per completed request (default true); false keeps errors and the rest. */
  logRequests?: boolean
  /** A request (headers and body) must arrive whole within this; a half-sent one is closed. */
  requestTimeoutMs: number
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number
  /** Per-credential and per-address limits; absent means none (tests that do not test them). */
  rateLimit?: RateLimits
  /**
   * OAUTH_CLIENT_METADATA_PRIVATE_NETWORK: let the OAuth server fetch Client ID Metadata
   * Documents from private, loopback and link-local addresses, and over http://. Off by default
   * (a client_id URL must not make the server probe its own network); for tests and local use.
   */
  oauthClientMetadataPrivateNetwork?: boolean
  /** How long credentials, roles and settings may be kept in memory (each change drops them at once); 0: never. Default 10 s. */
  settingsCacheTtlMs?: number
  /**
   * Outgoing webhooks: `enabled` runs the delivery worker (WEBHOOKS_ENABLED, default true);
   * `allowPrivateNetworks` lets subscriptions reach private, loopback and link-local addresses
   * (WEBHOOKS_ALLOW_PRIVATE_NETWORKS, default false). Absent: the worker is off (tests).
   */
  webhooks?: { enabled: boolean; allowPrivateNetworks: boolean }
  /** Retention's background fold (RETENTION_FOLD_INTERVAL_MS, default 5 s; 0 off). Absent: off (tests; a read folds what is queued). */
  retention?: { intervalMs: number }
  /** Folds of finished days' counter shards (COUNTER_FOLD_INTERVAL_MS, default 60 s; 0 off). Absent: off (tests call foldShards). */
  counterFolds?: { intervalMs: number }
  /**
   * The raw events' month partitions (plugins/event-retention.ts): created ahead at start and by
   * an hourly timer; with `days` (EVENTS_RETENTION_DAYS; null keeps everything), the months past it
   * are dropped by the same timer. Absent: the start still creates them, no timer (tests call run()).
   */
  eventPartitions?: { retentionDays: number | null }
  /**
   * DIGESTS_ENABLED (default true): this instance sends the projects' due digests every minute
   * (plugins/digests.ts; instances share the work safely). Absent: off (tests call sendDue).
   */
  digests?: { enabled: boolean }
  /**
   * GROWTHDESK_PLUGINS: tool plugins loaded at start, after the built-in tools, in this order:
   * package names resolved from growthdesk's own folder, absolute paths, or paths relative to
   * the current directory (docs/extending.md).
   */
  plugins?: string[]
  /**
   * The server key that seals the secrets the database keeps (webhook signing secrets, the
   * console's cookie secret, a new key waiting for its show-once page; db/secret-box.ts), never
   * stored in the database. `key`: SECRETS_KEY. `keyFile`: DATA_DIR/secrets.key — without
   * SECRETS_KEY the key is read from it, or made there (mode 0600) at the first start; with
   * SECRETS_KEY a key found there only opens what it sealed (the move from file to variable).
   * `previous`: SECRETS_KEY_PREVIOUS, older keys that still open what they sealed (rotation).
   * Neither key nor file (memory://, tests that leave it out): a key for this process only.
   */
  secrets?: SecretsConfig
  /**
   * Outgoing e-mail (SMTP_URL and MAIL_FROM; plugins/mail.ts): invitations and password-reset
   * links are sent by mail. Absent: nothing is sent, and such links are shown to whoever made them.
   */
  mail?: MailConfig
  /**
   * MCP_CONFORMANCE_FIXTURES=true: /mcp also serves the official conformance suite's fixtures
   * (its test tools, prompts and resources, routes/mcp-conformance.ts) for `npm run conformance`.
   * Off by default; refused with NODE_ENV=production.
   */
  conformanceFixtures?: boolean
}

export interface ReplicasConfig {
  /** postgres:// URLs of streaming replicas of the primary (DATABASE_URL). */
  urls: string[]
  /** A replica further behind the primary than this is skipped (default 10 s). */
  maxLagMs: number
}

export interface MailConfig {
  /** SMTP_URL: smtp:// (STARTTLS when the server offers it) or smtps:// (TLS from the start), with any user and password in it. */
  url: string
  /** MAIL_FROM: the From of every message. */
  from: string
}

export interface SecretsConfig {
  key: Buffer | null
  keyFile: string | null
  previous: Buffer[]
}

export class ConfigError extends Error {
  readonly variable: string
  constructor(variable: string, message: string) {
    super(message)
    this.variable = variable
    this.name = 'ConfigError'
  }
}

/** Validates the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {}
  for (const key of Object.keys(EnvSchema.properties) as (keyof Env)[]) {
    const value = env[key]
    if (value !== undefined && value !== '') raw[key] = value
  }
  const converted = Value.Convert(EnvSchema, Value.Default(EnvSchema, { ...raw })) as Record<string, unknown>
  // Value.Convert reads '1e3' as 1, '3000.5' as 3000 and '0x10' as 16: an integer variable
  // must be written in decimal digits, or it stays text and fails the check below.
  for (const [key, schema] of Object.entries(EnvSchema.properties)) {
    const value = raw[key]
    if (schema.type === 'integer' && typeof value === 'string' && !/^\d+$/.test(value)) converted[key] = value
  }
  const firstError = checkEnv.Errors(converted).First()
  if (firstError) {
    const variable = firstError.path.split('/')[1] as keyof Env
    // A key is never echoed, not even a mistyped one: the message reaches logs and terminals.
    const shown = secretVariables.has(variable) ? ` (${String(raw[variable] ?? '').length} characters, not shown)` : `=${JSON.stringify(raw[variable] ?? '')}`
    throw new ConfigError(variable, `Invalid configuration: ${variable}${shown} — expected ${hints[variable]}.`)
  }
  const e = converted as Env
  if (e.MCP_CONFORMANCE_FIXTURES === 'true' && e.NODE_ENV === 'production') {
    throw new ConfigError('MCP_CONFORMANCE_FIXTURES', 'Invalid configuration: MCP_CONFORMANCE_FIXTURES=true with NODE_ENV=production — the conformance fixtures (test tools anyone with a key can call) are for running the MCP conformance suite, never for a deployment.')
  }
  if (e.SMTP_URL !== undefined && e.MAIL_FROM === undefined) {
    throw new ConfigError('MAIL_FROM', 'Invalid configuration: MAIL_FROM is not set — SMTP_URL sends mail, and the mail needs a sender address such as "growthdesk <growthdesk@example.com>".')
  }
  // Listening on every interface says nothing about the address clients use: default to loopback.
  const host = e.HOST === '0.0.0.0' ? '127.0.0.1' : e.HOST === '::' ? '[::1]' : e.HOST.includes(':') ? `[${e.HOST}]` : e.HOST
  const publicUrl = (e.PUBLIC_URL ?? `http://${host}:${e.PORT}`).replace(/\/+$/, '')
  const database: Database =
    e.DATABASE_URL === undefined
      ? { kind: 'pglite', dataDir: path.resolve(e.DATA_DIR), sync: e.EMBEDDED_SYNC === 'true' }
      : e.DATABASE_URL === 'memory://'
        ? { kind: 'pglite', dataDir: undefined }
        : { kind: 'postgres', url: e.DATABASE_URL }
  const replicas: ReplicasConfig = { urls: e.DATABASE_REPLICA_URLS.split(',').map((u) => u.trim()).filter(Boolean), maxLagMs: e.DATABASE_REPLICA_MAX_LAG_MS }
  if (replicas.urls.length > 0 && database.kind !== 'postgres') {
    throw new ConfigError('DATABASE_REPLICA_URLS', 'Invalid configuration: DATABASE_REPLICA_URLS is set without a PostgreSQL DATABASE_URL — replicas stream from a PostgreSQL primary; the embedded database (PGlite) has none.')
  }
  for (const url of replicas.urls) {
    if (!URL.canParse(url)) throw new ConfigError('DATABASE_REPLICA_URLS', `Invalid configuration: DATABASE_REPLICA_URLS has ${JSON.stringify(url)}, which is not a URL — expected ${hints.DATABASE_REPLICA_URLS}.`)
  }
  const allowedOrigins = e.ALLOWED_ORIGINS.split(',').map((o) => o.trim()).filter(Boolean)
  const trustProxy =
    e.TRUST_PROXY === 'true' ? true : e.TRUST_PROXY === 'false' ? false : /^\d+$/.test(e.TRUST_PROXY) ? Number(e.TRUST_PROXY) : e.TRUST_PROXY.split(',').map((a) => a.trim())
  const oauthClientMetadataPrivateNetwork = e.OAUTH_CLIENT_METADATA_PRIVATE_NETWORK === 'true'
  // The patterns above admit only text that decodes to 32 bytes.
  const secrets: SecretsConfig = {
    key: e.SECRETS_KEY === undefined ? null : decodeSecretsKey(e.SECRETS_KEY),
    keyFile: e.DATABASE_URL === 'memory://' ? null : path.resolve(e.DATA_DIR, SECRETS_KEY_FILE),
    previous: (e.SECRETS_KEY_PREVIOUS ?? '').split(',').map((k) => k.trim()).filter(Boolean).map((k) => decodeSecretsKey(k)!),
  }
  return {
    production: e.NODE_ENV === 'production',
    host: e.HOST,
    port: e.PORT,
    publicUrl,
    database,
    replicas,
    allowedOrigins,
    trustProxy,
    logLevel: e.LOG_LEVEL,
    logRequests: e.LOG_REQUESTS === 'true',
    oauthClientMetadataPrivateNetwork,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    settingsCacheTtlMs: e.SETTINGS_CACHE_TTL_MS,
    webhooks: { enabled: e.WEBHOOKS_ENABLED === 'true', allowPrivateNetworks: e.WEBHOOKS_ALLOW_PRIVATE_NETWORKS === 'true' },
    retention: { intervalMs: e.RETENTION_FOLD_INTERVAL_MS },
    eventPartitions: { retentionDays: e.EVENTS_RETENTION_DAYS ?? null },
    counterFolds: { intervalMs: e.COUNTER_FOLD_INTERVAL_MS },
    digests: { enabled: e.DIGESTS_ENABLED === 'true' },
    plugins: e.GROWTHDESK_PLUGINS.split(',').map((p) => p.trim()).filter(Boolean),
    secrets,
    ...(e.MCP_CONFORMANCE_FIXTURES === 'true' ? { conformanceFixtures: true } : {}),
    ...(e.SMTP_URL !== undefined && e.MAIL_FROM !== undefined ? { mail: { url: e.SMTP_URL, from: e.MAIL_FROM } } : {}),
    rateLimit: {
      max: e.RATE_LIMIT_MAX,
      ingestMax: e.RATE_LIMIT_INGEST_MAX,
      windowMs: e.RATE_LIMIT_WINDOW_SECONDS * 1000,
      authFailures: e.RATE_LIMIT_AUTH_FAILURES,
      authFailureWindowMs: 60_000,
      concurrency: e.RATE_LIMIT_CONCURRENCY,
    }
  }
}
