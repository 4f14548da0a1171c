// The operation registry, empty: the tool plugins fill it (plugins/tool-plugins.ts), then it is
// sealed. Every surface reaches an operation through it (`callTool`, `invoke`).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { Registry } from '../core/operations.ts'
import type { WebhookPolicy } from '../core/webhooks.ts'

declare module 'fastify' {
  interface FastifyInstance {
    registry: Registry
    /** The clock every operation and metric reads; tests pin it. */
    now: () => Date
  }
}

export interface RegistryPluginOptions {
  now: () => Date
  /** Check every result against its operation's output schema (tests). */
  checkOutputs?: boolean
  webhookPolicy?: WebhookPolicy
  /** PUBLIC_URL: the start of every link an operation makes (an invitation's). */
  publicUrl: string
}

async function registryPlugin(app: FastifyInstance, options: RegistryPluginOptions) {
  const registry = new Registry({ repos: app.repos, now: options.now, checkOutputs: options.checkOutputs, webhookPolicy: options.webhookPolicy, mail: app.mail, publicUrl: options.publicUrl, reads: app.replicas ?? undefined })
  app.decorate('now', options.now)
  app.decorate('registry', registry)
}

export default fp(registryPlugin, { name: 'registry', dependencies: ['repositories', 'replicas', 'mail'] })
