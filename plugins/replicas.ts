// Read replicas (DATABASE_REPLICA_URLS; db/replicas.ts): decorated as `app.replicas`, the router
// the registry sends lag-tolerant reads through, or null when none are configured — then nothing
// of it runs, not one statement.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { DatabaseConfig } from '../db/client.ts'
import { ReadRouter, type ReadRouterOptions } from '../db/replicas.ts'
import type { ReplicasConfig } from '../config.ts'

declare module 'fastify' {
  interface FastifyInstance {
    replicas: ReadRouter | null
  }
}

export interface ReplicasPluginOptions {
  database: DatabaseConfig
  replicas?: ReplicasConfig | undefined
  /** Told of every statement the replicas' repositories send (tests count them). */
  onReplicaQuery?: ReadRouterOptions['onReplicaQuery']
  /** How often the replicas are polled (default db/replicas.ts POLL_INTERVAL_MS). */
  pollIntervalMs?: number
}

async function replicasPlugin(app: FastifyInstance, options: ReplicasPluginOptions) {
  const urls = options.replicas?.urls ?? []
  if (urls.length === 0) {
    app.decorate('replicas', null)
    return
  }
  // config.ts refuses this for the environment; a configuration built in code is checked here.
  if (options.database.kind !== 'postgres') throw new Error('Read replicas (DATABASE_REPLICA_URLS) need a PostgreSQL primary (DATABASE_URL); the embedded database has none.')
  const router = await ReadRouter.open(app.database, app.repos, {
    primaryUrl: options.database.url,
    urls,
    maxLagMs: options.replicas?.maxLagMs ?? 10_000,
    box: app.secrets.box,
    onReplicaQuery: options.onReplicaQuery,
    pollIntervalMs: options.pollIntervalMs,
  })
  for (const state of router.states()) {
    if (!state.usable) app.log.warn({ replica: state.name, reason: state.reason }, 'a read replica is not usable yet: the primary serves its reads')
  }
  app.decorate('replicas', router)
  // Before the database closes (hooks run in reverse order of registration).
  app.addHook('onClose', async () => {
    await router.close()
  })
}

export default fp(replicasPlugin, { name: 'replicas', dependencies: ['database', 'repositories', 'secrets'] })
