// The repositories (all SQL lives there), decorated as `app.repos`, with the cache of
// credentials, roles and settings they share (db/settings-cache.ts), kept only while this
// instance listens for every change to them.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createRepositories, type Repositories } from '../db/repositories/index.ts'
import { SETTINGS_CHANNEL, SettingsCache } from '../db/settings-cache.ts'

declare module 'fastify' {
  interface FastifyInstance {
    repos: Repositories
    settingsCache: SettingsCache
  }
}

export interface RepositoriesPluginOptions {
  /** Default 10 s; 0 keeps nothing. */
  settingsCacheTtlMs?: number | undefined
}

async function repositoriesPlugin(app: FastifyInstance, options: RepositoriesPluginOptions) {
  const cache = new SettingsCache({ ttlMs: options.settingsCacheTtlMs })
  app.decorate('settingsCache', cache)
  app.decorate('repos', createRepositories(app.db, cache, app.secrets.box))
  if (cache.ttlMs === 0) return
  const stop = await app.database.listen(SETTINGS_CHANNEL, {
    notify: () => cache.changed(),
    up: () => cache.setListening(true),
    down: () => {
      cache.setListening(false)
      app.log.warn('not listening for changes to credentials and settings: nothing is cached until it listens again')
    },
  })
  // Before the database closes (hooks run in reverse order of registration).
  app.addHook('onClose', async () => {
    cache.setListening(false)
    await stop()
  })
}

export default fp(repositoriesPlugin, { name: 'repositories', dependencies: ['database', 'secrets'] })
