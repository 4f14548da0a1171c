import t from 'tap'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { ConfigError, loadConfig } from '../config.ts'

const root = path.resolve(import.meta.dirname, '..')

t.test('defaults: 127.0.0.1:3000, embedded database in ./.data, public URL from host and port', async (t) => {
  t.same(loadConfig({}), {
    production: false,
    host: '127.0.0.1',
    port: 3000,
    publicUrl: 'http://127.0.0.1:3000',
    database: { kind: 'pglite', dataDir: path.resolve('./.data'), sync: true },
    replicas: { urls: [], maxLagMs: 10_000 },
    allowedOrigins: [],
    trustProxy: false,
    logLevel: 'info',
    logRequests: true,
    oauthClientMetadataPrivateNetwork: false,
    requestTimeoutMs: 25_000,
    keepAliveTimeoutMs: 72_000,
    settingsCacheTtlMs: 10_000,
    rateLimit: { max: 300, ingestMax: 1000, windowMs: 10_000, authFailures: 30, authFailureWindowMs: 60_000, concurrency: 8 },
    webhooks: { enabled: true, allowPrivateNetworks: false },
    retention: { intervalMs: 5000 },
    eventPartitions: { retentionDays: null },
    counterFolds: { intervalMs: 60_000 },
    digests: { enabled: true },
    plugins: [],
    secrets: { key: null, keyFile: path.resolve('./.data/secrets.key'), previous: [] },
  })
})

t.test('GROWTHDESK_PLUGINS: a comma-separated list, blanks and empty entries ignored', async (t) => {
  t.same(loadConfig({ GROWTHDESK_PLUGINS: 'acme-tools, /opt/local.js ,,./mine.js' }).plugins, ['acme-tools', '/opt/local.js', './mine.js'])
  t.same(loadConfig({ GROWTHDESK_PLUGINS: ' ' }).plugins, [])
})

t.test('SECRETS_KEY and SECRETS_KEY_PREVIOUS: 32-byte keys in base64 or hex, never echoed', async (t) => {
  const key = randomBytes(32)
  const other = randomBytes(32)
  const base64 = key.toString('base64')
  t.equal(base64.length, 44)
  t.same(loadConfig({ SECRETS_KEY: base64 }).secrets, { key, keyFile: path.resolve('./.data/secrets.key'), previous: [] }, 'base64 (openssl rand -base64 32)')
  t.same(loadConfig({ SECRETS_KEY: key.toString('hex') }).secrets?.key, key, 'hex (openssl rand -hex 32)')
  t.same(loadConfig({ SECRETS_KEY: key.toString('base64url') }).secrets?.key, key, 'base64url, without padding')
  t.same(loadConfig({ SECRETS_KEY: base64, SECRETS_KEY_PREVIOUS: `${other.toString('hex')}, ${key.toString('base64')}` }).secrets?.previous, [other, key], 'a list of older keys')
  t.same(loadConfig({ DATA_DIR: '/var/lib/growthdesk' }).secrets, { key: null, keyFile: '/var/lib/growthdesk/secrets.key', previous: [] }, 'unset: the key file in DATA_DIR')
  t.same(loadConfig({ DATABASE_URL: 'postgres://db/gd' }).secrets?.keyFile, path.resolve('./.data/secrets.key'), 'on PostgreSQL too')
  t.same(loadConfig({ DATABASE_URL: 'memory://' }).secrets, { key: null, keyFile: null, previous: [] }, 'memory://: no file (a key for the process)')
  const short = randomBytes(31).toString('base64')
  for (const [env, variable, length] of [
    [{ SECRETS_KEY: short }, 'SECRETS_KEY', short.length],
    [{ SECRETS_KEY: `${base64}x` }, 'SECRETS_KEY', 45],
    [{ SECRETS_KEY: key.toString('hex').slice(1) }, 'SECRETS_KEY', 63],
    [{ SECRETS_KEY_PREVIOUS: `${base64},` }, 'SECRETS_KEY_PREVIOUS', 45],
  ] as const) {
    let caught: unknown
    try {
      loadConfig(env)
    } catch (err) {
      caught = err
    }
    t.type(caught, ConfigError)
    t.equal((caught as ConfigError).variable, variable)
    t.equal((caught as ConfigError).message, `Invalid configuration: ${variable} (${length} characters, not shown) — expected ${
      variable === 'SECRETS_KEY'
        ? 'a 32-byte key in base64 (44 characters, e.g. from `openssl rand -base64 32`) or hex (64 characters)'
        : 'a comma-separated list of 32-byte keys, each in base64 (44 characters) or hex (64 characters)'}.`)
    t.notMatch((caught as ConfigError).message, base64.slice(0, 20), 'the value is not in the message')
  }
})

t.test('COUNTER_FOLD_INTERVAL_MS: 60 s by default, 0 turns the fold off', async (t) => {
  t.same(loadConfig({}).counterFolds, { intervalMs: 60_000 })
  t.same(loadConfig({ COUNTER_FOLD_INTERVAL_MS: '0' }).counterFolds, { intervalMs: 0 })
  t.throws(() => loadConfig({ COUNTER_FOLD_INTERVAL_MS: '-1' }), /COUNTER_FOLD_INTERVAL_MS/)
})

t.test('RETENTION_FOLD_INTERVAL_MS: 5 s by default, 0 turns the background fold off', async (t) => {
  t.same(loadConfig({}).retention, { intervalMs: 5000 })
  t.same(loadConfig({ RETENTION_FOLD_INTERVAL_MS: '0' }).retention, { intervalMs: 0 })
  t.throws(() => loadConfig({ RETENTION_FOLD_INTERVAL_MS: '-1' }), /RETENTION_FOLD_INTERVAL_MS/)
})

t.test('EVENTS_RETENTION_DAYS: unset keeps every raw event; else a whole number of days ≥ 1', async (t) => {
  t.same(loadConfig({}).eventPartitions, { retentionDays: null })
  t.same(loadConfig({ EVENTS_RETENTION_DAYS: '' }).eventPartitions, { retentionDays: null }, 'empty is unset')
  t.same(loadConfig({ EVENTS_RETENTION_DAYS: '30' }).eventPartitions, { retentionDays: 30 })
  t.same(loadConfig({ EVENTS_RETENTION_DAYS: '1' }).eventPartitions, { retentionDays: 1 })
  for (const bad of ['0', '-1', '1.5', '30d', '1e3', 'forever']) {
    t.throws(() => loadConfig({ EVENTS_RETENTION_DAYS: bad }), {
      name: 'ConfigError',
      message: `Invalid configuration: EVENTS_RETENTION_DAYS=${JSON.stringify(bad)} — expected a whole number of days from 1 to 1000000 to keep raw events (unset: keep everything).`,
    }, bad)
  }
})

t.test('WEBHOOKS_ENABLED and WEBHOOKS_ALLOW_PRIVATE_NETWORKS: true or false', async (t) => {
  t.same(loadConfig({ WEBHOOKS_ENABLED: 'false', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' }).webhooks, { enabled: false, allowPrivateNetworks: true })
  t.throws(() => loadConfig({ WEBHOOKS_ENABLED: 'yes' }), /WEBHOOKS_ENABLED="yes" — expected true or false/)
  t.throws(() => loadConfig({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: '1' }), /WEBHOOKS_ALLOW_PRIVATE_NETWORKS="1"/)
})

t.test('DIGESTS_ENABLED: true or false', async (t) => {
  t.same(loadConfig({ DIGESTS_ENABLED: 'false' }).digests, { enabled: false })
  t.throws(() => loadConfig({ DIGESTS_ENABLED: 'on' }), /DIGESTS_ENABLED="on" — expected true or false/)
})

t.test('DATABASE_REPLICA_URLS and DATABASE_REPLICA_MAX_LAG_MS: replicas of a PostgreSQL primary', async (t) => {
  const primary = 'postgres://app@db-primary:5432/growthdesk'
  t.same(loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'postgres://app@db-r1:5432/growthdesk, postgresql://app@db-r2/growthdesk' }).replicas,
    { urls: ['postgres://app@db-r1:5432/growthdesk', 'postgresql://app@db-r2/growthdesk'], maxLagMs: 10_000 })
  t.same(loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'postgres://app@db-r1/growthdesk', DATABASE_REPLICA_MAX_LAG_MS: '2500' }).replicas, { urls: ['postgres://app@db-r1/growthdesk'], maxLagMs: 2500 })
  t.same(loadConfig({ DATABASE_URL: primary }).replicas, { urls: [], maxLagMs: 10_000 }, 'none by default')
  t.throws(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgres://app@db-r1/growthdesk' }), /DATABASE_REPLICA_URLS is set without a PostgreSQL DATABASE_URL/, 'the embedded database has no replicas')
  t.throws(() => loadConfig({ DATABASE_URL: 'memory://', DATABASE_REPLICA_URLS: 'postgres://app@db-r1/growthdesk' }), /without a PostgreSQL DATABASE_URL/)
  t.throws(() => loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'mysql://db-r1/growthdesk' }), /DATABASE_REPLICA_URLS="mysql:\/\/db-r1\/growthdesk" — expected a comma-separated list of postgres:\/\/ URLs/)
  t.throws(() => loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'postgres://db-r1/x,,postgres://db-r2/x' }), /DATABASE_REPLICA_URLS=/)
  t.throws(() => loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_URLS: 'postgres://[::1/x' }), /DATABASE_REPLICA_URLS has "postgres:\/\/\[::1\/x", which is not a URL/)
  t.throws(() => loadConfig({ DATABASE_URL: primary, DATABASE_REPLICA_MAX_LAG_MS: '-1' }), /DATABASE_REPLICA_MAX_LAG_MS="-1" — expected milliseconds from 0/)
})

t.test('SETTINGS_CACHE_TTL_MS: milliseconds from 0 (nothing kept) to 600000', async (t) => {
  t.equal(loadConfig({ SETTINGS_CACHE_TTL_MS: '0' }).settingsCacheTtlMs, 0)
  t.equal(loadConfig({ SETTINGS_CACHE_TTL_MS: '600000' }).settingsCacheTtlMs, 600_000)
  t.throws(() => loadConfig({ SETTINGS_CACHE_TTL_MS: '600001' }), /SETTINGS_CACHE_TTL_MS="600001" — expected milliseconds from 0/)
  t.throws(() => loadConfig({ SETTINGS_CACHE_TTL_MS: '1e3' }), /SETTINGS_CACHE_TTL_MS="1e3"/)
})

t.test('RATE_LIMIT_*: whole numbers in range, 0 turns a limit off', async (t) => {
  t.same(loadConfig({ RATE_LIMIT_MAX: '50', RATE_LIMIT_INGEST_MAX: '0', RATE_LIMIT_WINDOW_SECONDS: '60', RATE_LIMIT_AUTH_FAILURES: '5' }).rateLimit,
    { max: 50, ingestMax: 0, windowMs: 60_000, authFailures: 5, authFailureWindowMs: 60_000, concurrency: 8 })
  t.throws(() => loadConfig({ RATE_LIMIT_MAX: '-1' }), /RATE_LIMIT_MAX="-1" — expected requests per credential per window/)
  t.throws(() => loadConfig({ RATE_LIMIT_WINDOW_SECONDS: '0' }), /RATE_LIMIT_WINDOW_SECONDS="0" — expected the rate-limit window in seconds, from 1 to 3600/)
  t.throws(() => loadConfig({ RATE_LIMIT_AUTH_FAILURES: 'many' }), /RATE_LIMIT_AUTH_FAILURES="many"/)
})

t.test('REQUEST_TIMEOUT_MS and KEEP_ALIVE_TIMEOUT_MS: whole milliseconds in range', async (t) => {
  t.equal(loadConfig({ REQUEST_TIMEOUT_MS: '5000' }).requestTimeoutMs, 5000)
  t.equal(loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '10000' }).keepAliveTimeoutMs, 10000)
  t.throws(() => loadConfig({ REQUEST_TIMEOUT_MS: '10' }), /REQUEST_TIMEOUT_MS="10" — expected milliseconds from 1000 to 600000/)
  t.throws(() => loadConfig({ KEEP_ALIVE_TIMEOUT_MS: 'soon' }), /KEEP_ALIVE_TIMEOUT_MS="soon"/)
})

t.test('OAUTH_CLIENT_METADATA_PRIVATE_NETWORK: true or false, nothing else', async (t) => {
  t.equal(loadConfig({ OAUTH_CLIENT_METADATA_PRIVATE_NETWORK: 'true' }).oauthClientMetadataPrivateNetwork, true)
  t.equal(loadConfig({ OAUTH_CLIENT_METADATA_PRIVATE_NETWORK: 'false' }).oauthClientMetadataPrivateNetwork, false)
  t.throws(() => loadConfig({ OAUTH_CLIENT_METADATA_PRIVATE_NETWORK: 'yes' }), /OAUTH_CLIENT_METADATA_PRIVATE_NETWORK="yes" — expected true or false/)
})

t.test('TRUST_PROXY: true, false, a hop count or proxy addresses', async (t) => {
  t.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true)
  t.equal(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2)
  t.same(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16' }).trustProxy, ['10.0.0.1', '192.168.0.0/16'])
  t.throws(() => loadConfig({ TRUST_PROXY: 'maybe' }), new ConfigError('TRUST_PROXY', 'Invalid configuration: TRUST_PROXY="maybe" — expected true, false, a number of proxy hops, or comma-separated proxy addresses/CIDRs.'))
})

t.test('ALLOWED_ORIGINS is a comma-separated list of origins', async (t) => {
  t.same(loadConfig({ ALLOWED_ORIGINS: 'https://app.example.com, http://localhost:6274' }).allowedOrigins, [
    'https://app.example.com',
    'http://localhost:6274',
  ])
  let caught: unknown
  try {
    loadConfig({ ALLOWED_ORIGINS: 'app.example.com' })
  } catch (err) {
    caught = err
  }
  t.type(caught, ConfigError)
  t.equal((caught as ConfigError).variable, 'ALLOWED_ORIGINS')
  t.match((caught as ConfigError).message, /^Invalid configuration: ALLOWED_ORIGINS="app\.example\.com" — expected /)
})

t.test('empty values count as unset', async (t) => {
  t.same(loadConfig({ PORT: '', HOST: '', DATABASE_URL: '', LOG_LEVEL: '' }), loadConfig({}))
})

t.test('values are read and transformed once', async (t) => {
  const config = loadConfig({ HOST: '0.0.0.0', PORT: '8080', DATA_DIR: '/var/lib/growthdesk', LOG_LEVEL: 'warn' })
  t.equal(config.host, '0.0.0.0')
  t.equal(config.port, 8080)
  t.equal(config.publicUrl, 'http://127.0.0.1:8080', 'listening everywhere: clients are told the loopback address')
  t.same(config.database, { kind: 'pglite', dataDir: '/var/lib/growthdesk', sync: true })
  t.equal(config.logLevel, 'warn')
  t.same(loadConfig({ DATA_DIR: 'state/db' }).database, { kind: 'pglite', dataDir: path.resolve('state/db'), sync: true })
  t.same(loadConfig({ EMBEDDED_SYNC: 'false' }).database, { kind: 'pglite', dataDir: path.resolve('./.data'), sync: false })
  t.throws(() => loadConfig({ EMBEDDED_SYNC: 'no' }), /EMBEDDED_SYNC="no" — expected true or false/)
  t.equal(loadConfig({ PORT: '0' }).port, 0)
  t.equal(loadConfig({ PORT: '65535' }).port, 65535)
  t.equal(loadConfig({ HOST: '::1' }).publicUrl, 'http://[::1]:3000', 'an IPv6 host is bracketed in the URL')
})

t.test('DATABASE_URL picks the backend', async (t) => {
  t.same(loadConfig({ DATABASE_URL: 'memory://' }).database, { kind: 'pglite', dataDir: undefined })
  t.same(loadConfig({ DATABASE_URL: 'postgres://u@db.internal:5432/gd' }).database, { kind: 'postgres', url: 'postgres://u@db.internal:5432/gd' })
  t.same(loadConfig({ DATABASE_URL: 'postgresql://u@db/gd' }).database, { kind: 'postgres', url: 'postgresql://u@db/gd' })
  t.same(
    loadConfig({ DATABASE_URL: 'memory://', DATA_DIR: '/somewhere' }).database,
    { kind: 'pglite', dataDir: undefined },
    'memory:// wins over DATA_DIR'
  )
})

t.test('PUBLIC_URL loses its trailing slashes', async (t) => {
  t.equal(loadConfig({ PUBLIC_URL: 'https://gd.example.com/' }).publicUrl, 'https://gd.example.com')
  t.equal(loadConfig({ PUBLIC_URL: 'https://gd.example.com/growth//' }).publicUrl, 'https://gd.example.com/growth')
  t.equal(loadConfig({ PUBLIC_URL: 'http://localhost:8080' }).publicUrl, 'http://localhost:8080')
  t.equal(loadConfig({ PUBLIC_URL: 'https://gd.example.com/', PORT: '9999' }).publicUrl, 'https://gd.example.com', 'PORT does not change an explicit PUBLIC_URL')
})

t.test('a bad variable is rejected with a message naming it', async (t) => {
  const cases: [Record<string, string>, string, string][] = [
    [{ PORT: 'abc' }, 'PORT', 'Invalid configuration: PORT="abc" — expected an integer from 0 to 65535.'],
    [{ PORT: '70000' }, 'PORT', 'Invalid configuration: PORT="70000" — expected an integer from 0 to 65535.'],
    [{ PORT: '-1' }, 'PORT', 'Invalid configuration: PORT="-1" — expected an integer from 0 to 65535.'],
    // Number-like text that a loose conversion would quietly turn into another port.
    [{ PORT: '3000.5' }, 'PORT', 'Invalid configuration: PORT="3000.5" — expected an integer from 0 to 65535.'],
    [{ PORT: '1e3' }, 'PORT', 'Invalid configuration: PORT="1e3" — expected an integer from 0 to 65535.'],
    [{ PORT: '0x10' }, 'PORT', 'Invalid configuration: PORT="0x10" — expected an integer from 0 to 65535.'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL', 'Invalid configuration: LOG_LEVEL="loud" — expected one of fatal, error, warn, info, debug, trace, silent.'],
    [
      { DATABASE_URL: 'mysql://x' },
      'DATABASE_URL',
      'Invalid configuration: DATABASE_URL="mysql://x" — expected a postgres:// URL, or memory:// for an in-memory embedded database.',
    ],
    [
      { DATABASE_URL: 'memory://other' },
      'DATABASE_URL',
      'Invalid configuration: DATABASE_URL="memory://other" — expected a postgres:// URL, or memory:// for an in-memory embedded database.',
    ],
    [
      { PUBLIC_URL: 'not-a-url' },
      'PUBLIC_URL',
      'Invalid configuration: PUBLIC_URL="not-a-url" — expected an absolute http(s) URL such as https://growthdesk.example.com.',
    ],
    [
      { PUBLIC_URL: 'ftp://gd.example.com' },
      'PUBLIC_URL',
      'Invalid configuration: PUBLIC_URL="ftp://gd.example.com" — expected an absolute http(s) URL such as https://growthdesk.example.com.',
    ],
    [
      { MCP_CONFORMANCE_FIXTURES: 'yes' },
      'MCP_CONFORMANCE_FIXTURES',
      'Invalid configuration: MCP_CONFORMANCE_FIXTURES="yes" — expected true or false (true only to run the MCP conformance suite, never in production).',
    ],
    [
      { MCP_CONFORMANCE_FIXTURES: 'true', NODE_ENV: 'production' },
      'MCP_CONFORMANCE_FIXTURES',
      'Invalid configuration: MCP_CONFORMANCE_FIXTURES=true with NODE_ENV=production — the conformance fixtures (test tools anyone with a key can call) are for running the MCP conformance suite, never for a deployment.',
    ],
  ]
  for (const [env, variable, message] of cases) {
    let caught: unknown
    try {
      loadConfig(env)
    } catch (err) {
      caught = err
    }
    t.type(caught, ConfigError, `${JSON.stringify(env)} throws ConfigError`)
    const err = caught as ConfigError
    t.equal(err.variable, variable, `${JSON.stringify(env)} names ${variable}`)
    t.equal(err.message, message)
    t.equal(err.name, 'ConfigError')
  }
})

t.test('NODE_ENV=production, and only that value, makes a production configuration', async (t) => {
  t.equal(loadConfig({ NODE_ENV: 'production' }).production, true)
  for (const value of ['development', 'test', 'Production', 'prod', '']) t.equal(loadConfig({ NODE_ENV: value }).production, false, `NODE_ENV=${JSON.stringify(value)}`)
  t.same(loadConfig({ NODE_ENV: 'production' }), { ...loadConfig({}), production: true }, 'nothing else changes')
})

t.test('MCP_CONFORMANCE_FIXTURES: off unless set to true', async (t) => {
  t.equal(loadConfig({}).conformanceFixtures, undefined, 'off by default')
  t.equal(loadConfig({ MCP_CONFORMANCE_FIXTURES: 'false' }).conformanceFixtures, undefined)
  t.equal(loadConfig({ MCP_CONFORMANCE_FIXTURES: 'true' }).conformanceFixtures, true)
})

t.test('only the variables of the schema are read', async (t) => {
  t.same(loadConfig({ PORT: '4000', SERVICE_API_KEY: 'x', NODE_OPTIONS: '--inspect' }), loadConfig({ PORT: '4000' }))
})

t.test('the server refuses a bad PORT with one line on stderr and exit code 1', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: 'abc', DATABASE_URL: 'memory://', LOG_LEVEL: 'info' }
  delete env.HOST
  delete env.PUBLIC_URL
  delete env.NODE_OPTIONS
  const child = spawn(process.execPath, ['server.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk) => (stdout += chunk))
  child.stderr.on('data', (chunk) => (stderr += chunk))
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)))
  clearTimeout(timer)
  t.equal(code, 1)
  t.equal(stdout, '')
  t.equal(stderr, 'growthdesk: Invalid configuration: PORT="abc" — expected an integer from 0 to 65535.\n')
  t.equal(stderr.trimEnd().split('\n').length, 1)
})
