// Folds queued first sightings into retention's cells in the background, so that a read, which
// folds what is left before it answers (exactness never waits on this), finds little to do. Every
// interval: each project with queued rows, one after another (retention_apply takes one project at
// a time, and instances share the work: a project another instance is folding waits its turn).
// Off when the interval is 0 or the configuration leaves it out (tests fold in the read).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { runPeriodically } from './periodic.ts'

declare module 'fastify' {
  interface FastifyInstance {
    retention: { foldQueued(): Promise<number> }
  }
}

async function retentionPlugin(app: FastifyInstance, options: { intervalMs: number }) {
  async function foldQueued(): Promise<number> {
    let total = 0
    for (const projectId of await app.repos.retention.queuedProjects()) total += await app.repos.retention.fold(projectId)
    return total
  }
  app.decorate('retention', { foldQueued })
  if (options.intervalMs <= 0) return

  runPeriodically(app, { what: 'retention fold', intervalMs: options.intervalMs, work: foldQueued })
}

export default fp(retentionPlugin, { name: 'retention', dependencies: ['repositories'] })
