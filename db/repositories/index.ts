// Every repository, built over one database handle; decorated onto the app as `repos`.
import type { Queryable } from '../client.ts'
import { createApiKeysRepository } from './api-keys.ts'
import { createEventsRepository } from './events.ts'
import { createOpportunitiesRepository } from './opportunities.ts'
import { createMemoriesRepository } from './memories.ts'
import { createSignalsRepository } from './signals.ts'
import { createOAuthRepository } from './oauth.ts'
import { createSessionsRepository } from './sessions.ts'
import { createProjectsRepository } from './projects.ts'
import { createRateLimitsRepository } from './rate-limits.ts'
import { createUsersRepository } from './users.ts'
import { createWorkspacesRepository } from './workspaces.ts'

export function createRepositories(db: Queryable) {
  return {
    workspaces: createWorkspacesRepository(db),
    users: createUsersRepository(db),
    projects: createProjectsRepository(db),
    apiKeys: createApiKeysRepository(db),
    opportunities: createOpportunitiesRepository(db),
    events: createEventsRepository(db),
    memories: createMemoriesRepository(db),
    signals: createSignalsRepository(db),
    oauth: createOAuthRepository(db),
    sessions: createSessionsRepository(db),
    rateLimits: createRateLimitsRepository(db),
  }
}

export type Repositories = ReturnType<typeof createRepositories>
