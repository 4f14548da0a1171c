// The only file that listens: loads the configuration, builds the app, bootstraps an
// empty database once, and shuts down gracefully on SIGINT/SIGTERM.
import closeWithGrace from 'close-with-grace'
import { buildApp } from './app.ts'
import { ConfigError, loadConfig } from './config.ts'
import { DatabaseInUseError } from './db/client.ts'
import { bootstrap, describeBootstrap } from './core/admin.ts'

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
  if (err instanceof DatabaseInUseError) fail(err.message)
  throw err
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

closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
  if (err) app.log.error({ err }, 'shutting down after an error')
  else app.log.info({ signal }, 'shutting down')
  await app.close()
})

try {
  await app.listen({ host: config.host, port: config.port })
} catch (err) {
  app.log.error({ err }, 'could not listen')
  await app.close()
  process.exit(1)
}
