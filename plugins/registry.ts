// Builds the operation registry once at start: every tool file, validators compiled.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Registry } from '../core/operations.ts'
import { operations } from '../tools/index.ts'

declare module 'fastify' {
  interface FastifyInstance {
    registry: Registry
    /** The clock every operation and metric reads; tests pin it. */
    now: () => Date
  }
}

async function registryPlugin(app: FastifyInstance, options: { now: () => Date }) {
  const registry = new Registry({ repos: app.repos, now: options.now })
  for (const op of operations) registry.add(op)
  app.decorate('now', options.now)
  app.decorate('registry', registry)
}

export default fp(registryPlugin, { name: 'registry', dependencies: ['repositories'] })
