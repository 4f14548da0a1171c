// The repositories (all SQL lives there), decorated as `app.repos`.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createRepositories, type Repositories } from '../db/repositories/index.ts'

declare module 'fastify' {
  interface FastifyInstance {
    repos: Repositories
  }
}

async function repositoriesPlugin(app: FastifyInstance) {
  app.decorate('repos', createRepositories(app.db))
}

export default fp(repositoriesPlugin, { name: 'repositories', dependencies: ['database'] })
