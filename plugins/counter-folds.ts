// Folds the counter shards of finished days into one row a day (fold_counter_shards, migration
// 0021), so that a metrics read touches one row per (day, event) whatever the ingestion
// concurrency was. Once at start and then every interval; instances may all run it (a fold
// running elsewhere turns the others away at once). Reads are exact with or without it: it only
// keeps them flat. Off when the interval is 0 or the configuration leaves it out (tests call
// foldShards).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { runPeriodically } from './periodic.ts'

declare module 'fastify' {
  interface FastifyInstance {
    counterFolds: { foldShards(): Promise<number> }
  }
}

async function counterFoldsPlugin(app: FastifyInstance, options: { intervalMs: number; now: () => Date }) {
  const foldShards = () => app.repos.events.foldShards(options.now())
  app.decorate('counterFolds', { foldShards })
  if (options.intervalMs <= 0) return

  // At start too (not awaited: the start does not wait for it), then every interval.
  runPeriodically(app, { what: 'counter shard fold', intervalMs: options.intervalMs, firstAfterMs: 0, work: foldShards })
}

export default fp(counterFoldsPlugin, { name: 'counter-folds', dependencies: ['repositories'] })
