// Every repository, built over one database handle; decorated onto the app as `repos`.
import type { Queryable } from '../client.ts'
import { SettingsCache } from '../settings-cache.ts'
import { createApiKeysRepository } from './api-keys.ts'
import { createEventsRepository } from './events.ts'
import { createPartitionsRepository } from './partitions.ts'
import { createOpportunitiesRepository } from './opportunities.ts'
import { createMergesRepository } from './merges.ts'
import { createMemoriesRepository } from './memories.ts'
import { createMembersRepository } from './members.ts'
import { createSignalsRepository } from './signals.ts'
import { createOAuthRepository } from './oauth.ts'
import { createSessionsRepository } from './sessions.ts'
import { createProjectsRepository } from './projects.ts'
import { createRateLimitsRepository } from './rate-limits.ts'
import { createUsersRepository } from './users.ts'
import { createWorkspacesRepository } from './workspaces.ts'
import { createWebhooksRepository } from './webhooks.ts'
import { createPasswordsRepository } from './passwords.ts'
import { createCommentsRepository } from './comments.ts'
import { createTagsRepository } from './tags.ts'
import { createAssigneesRepository } from './assignees.ts'
import { createSavedViewsRepository } from './saved-views.ts'
import { createRetentionRepository } from './retention.ts'
import { createAlertsRepository } from './alerts.ts'
import { createDigestsRepository } from './digests.ts'
import { noSealer, type Sealer } from '../secret-box.ts'

/** `cache` keeps credentials, roles and settings while it hears of every change (db/settings-cache.ts);
 * without one (the CLI's transactions), every lookup reads the database. `box` seals and opens the
 * secrets the database keeps (db/secret-box.ts); without one, sealing or opening throws. */
export function createRepositories(db: Queryable, cache: SettingsCache = new SettingsCache(), box: Sealer = noSealer) {
  return {
    workspaces: createWorkspacesRepository(db, cache),
    users: createUsersRepository(db, cache),
    members: createMembersRepository(db, cache),
    projects: createProjectsRepository(db, cache),
    apiKeys: createApiKeysRepository(db, cache),
    opportunities: createOpportunitiesRepository(db),
    merges: createMergesRepository(db),
    events: createEventsRepository(db),
    partitions: createPartitionsRepository(db),
    memories: createMemoriesRepository(db),
    signals: createSignalsRepository(db),
    oauth: createOAuthRepository(db, cache),
    sessions: createSessionsRepository(db, box),
    rateLimits: createRateLimitsRepository(db),
    webhooks: createWebhooksRepository(db, box),
    passwords: createPasswordsRepository(db),
    comments: createCommentsRepository(db),
    tags: createTagsRepository(db),
    assignees: createAssigneesRepository(db),
    savedViews: createSavedViewsRepository(db),
    retention: createRetentionRepository(db),
    alerts: createAlertsRepository(db),
    digests: createDigestsRepository(db),
  }
}

export type Repositories = ReturnType<typeof createRepositories>
