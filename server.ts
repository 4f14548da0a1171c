// The only file that listens: loads the configuration, builds the app, bootstraps an
// empty database once, and shuts down gracefully on SIGINT/SIGTERM.
// Node's compile cache first, then everything else: a warm start reuses the compiled (and
// type-stripped) modules instead of parsing them again (about half of the module load).
// `npm start` runs start.js, which turns it on before this file itself is read.
import module from 'node:module'
module.enableCompileCache?.()
const loadStarted = performance.now()

const { default: closeWithGrace } = await import('close-with-grace')
const { buildApp } = await import('./app.ts')
const { ConfigError, loadConfig } = await import('./config.ts')
const { DatabaseInUseError } = await import('./db/client.ts')
const { PluginError } = await import('./plugins/tool-plugins.ts')
const { SecretsKeyError } = await import('./db/secret-box.ts')
const { bootstrap, describeBootstrap } = await import('./bin/admin.ts')
const { postgresQueuePatched } = await import('./db/postgres-patch.ts')
const modulesLoaded = performance.now()

function fail(message: string): never {
  process.stderr.write(`growthdesk: ${message}\n`)
  process.exit(1)
}

let config
try {
  config = loadConfig()
} catch (err) {
  if (err instanceof ConfigError) fail(err.message)
  throw err
}

let app
try {
  app = await buildApp({ config })
} catch (err) {
  if (err instanceof DatabaseInUseError || err instanceof PluginError || err instanceof SecretsKeyError) fail(err.message)
  throw err
}
const appBuilt = performance.now()

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})

// Listening before a first start creates anything: a port in use must not cost the only copy of
// the owner's password and keys (printed once below, for a database the failed start would
// have left no longer empty).
try {
  await app.listen({ host: config.host, port: config.port })
} catch (err) {
  await app.close()
  // A plugin's hook that failed when the app became ready (an operation added too late).
  if (err instanceof PluginError) fail(err.message)
  const code = (err as NodeJS.ErrnoException).code
  fail(code === 'EADDRINUSE'
    ? `Port ${config.port} on ${config.host} is in use by another process: stop it, or set PORT to a free port.`
    : `Could not listen on ${config.host}:${config.port}: ${(err as Error).message}`)
}

if ((await app.repos.workspaces.count()) === 0) {
  const first = await bootstrap(app)
  // Printed once, to the terminal, never through the logger: these are the only copies.
  process.stdout.write(
    [
      '',
      'growthdesk: first start — created a workspace, an owner and a demo project.',
      ...describeBootstrap(first, config.publicUrl),
      '',
    ].join('\n') + '\n'
  )
}

// Where the start went, in milliseconds since the process began (bench/start.ts reads this line).
const ms = (n: number) => Math.round(n)
const { openMs, migrateMs } = app.databaseTimings
app.log.info({
  startup: {
    node: ms(loadStarted),
    modules: ms(modulesLoaded - loadStarted),
    databaseOpen: ms(openMs),
    migrations: ms(migrateMs),
    plugins: ms(appBuilt - modulesLoaded - openMs - migrateMs),
    firstStart: ms(performance.now() - appBuilt),
    ready: ms(performance.now()),
  },
}, `ready in ${ms(performance.now())} ms`)
if (config.database.kind === 'postgres' && !postgresQueuePatched()) {
  app.log.warn('postgres.js is installed without growthdesk\'s fix of its pool queue (patches/, applied by `npm install` and `npm ci`; an install with --ignore-scripts skips it): the server gets slower the longer it runs. Run `npx patch-package` in the app\'s folder, then restart.')
}

// Start-up leaves garbage behind and a young generation grown to its largest (two 8 MB
// semi-spaces), which an idle server would keep. A second after the start, one memory-reducing
// collection (V8's "last resort" GC: it compacts, shrinks the young generation and returns free
// pages) hands that back: idle RSS on PostgreSQL ~102 -> ~89 MB (bench:start). npm start runs Node
// with --expose-gc for it; the function is taken off the global object at once, so nothing else
// calls it. A request that arrives at that moment waits for the collection (~85 ms here, once).
const collect = globalThis.gc
globalThis.gc = undefined
if (collect) {
  setTimeout(() => {
    const started = performance.now()
    collect({ type: 'major', execution: 'sync', flavor: 'last-resort' })
    app.log.debug({ ms: ms(performance.now() - started) }, 'start-up garbage collected')
  }, 1000).unref()
}
