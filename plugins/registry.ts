// Builds the operation registry once at start: every tool file, validators compiled.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Static } from '@sinclair/typebox'
import { Registry, type Operation } from '../core/operations.ts'
import { operations } from '../tools/index.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** Runs an operation as the authenticated caller (routes are adapters onto this). */
    operate<O extends Operation>(op: O, args: unknown, projectRef?: string): Promise<Static<O['output']>>
  }
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
  app.decorateRequest('operate', function (this: FastifyRequest, op: Operation, args: unknown, projectRef?: string) {
    return registry.call(op.name, args, { principal: this.principal, projectRef, log: this.log }) as Promise<never>
  })
}

export default fp(registryPlugin, { name: 'registry', dependencies: ['repositories'] })
