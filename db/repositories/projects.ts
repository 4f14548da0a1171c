import { and, asc, eq, lazily, or, sql, PgDialect } from '../orm.ts'
import { enqueueWebhooks } from './webhooks.ts'
import { isoMillis, isUniqueViolation, preparedRows, type Queryable } from '../client.ts'
import { dailyEventCounts, dailyEventUsers, events, memberships, projects, userActivity, users } from '../schema.ts'
import { projectSeq } from './events.ts'
import { createPartitionsRepository } from './partitions.ts'
import { newId } from '../ids.ts'
import { SettingsCache } from '../settings-cache.ts'
import type { Role } from '../../schemas/atoms.ts'
import type { Static, TObject } from '@sinclair/typebox'
import type { ProjectCard, ProjectCardFields } from '../../schemas/projects.ts'

export type ProjectRow = typeof projects.$inferSelect

/** Who asks, as far as the database needs to know (core's Principal fits). */
export interface AccessPrincipal {
  workspaceId: string
  userId: string
  /** The key only reaches this project. */
  projectId: string | null
  /** The key never acts above `viewer`. */
  readOnly: boolean
}

/** A project as a principal reaches it (core/access.ts calls it ProjectAccess). */
export interface ProjectAccessRow {
  id: string
  slug: string
  name: string
  timezone: string
  /** The caller's role here: the membership role, capped by the key. */
  role: Role
  /** The caller's identity in this project's events. */
  distinctId: string
}

/** A card write: the card, or why not (the unique (workspace, slug) index refused the slug). */
export type CardWrite =
  | { ok: true; project: ProjectCard }
  | { ok: false; reason: 'slug_taken' }
  /** A new time zone re-derives the rollups from raw events, and those of days before `since` were dropped by EVENTS_RETENTION_DAYS. */
  | { ok: false; reason: 'raw_events_dropped'; since: string | null }

/** The membership role, capped at viewer for a read-only key. */
const cappedRole = (role: Role, principal: AccessPrincipal): Role => (principal.readOnly ? 'viewer' : role)

/** Runs a card write; a unique violation (the slug is the only unique card column) answers slug_taken. */
async function slugChecked<T>(write: () => Promise<T>): Promise<T | { ok: false; reason: 'slug_taken' }> {
  try {
    return await write()
  } catch (err) {
    if (isUniqueViolation(err)) return { ok: false, reason: 'slug_taken' }
    throw err
  }
}

type ProjectCardInput = Partial<Omit<typeof projects.$inferInsert, 'id' | 'workspaceId' | 'createdAt' | 'updatedAt'>>
/** Card fields by their API names (snake_case), as the tools receive them. */
export type CardFields = Partial<Static<TObject<typeof ProjectCardFields>>>

export function createProjectsRepository(db: Queryable, cache = new SettingsCache()) {
  /** By who asks and the reference: the project and the membership role (not yet capped by the key). */
  const reached = cache.lookup<ProjectAccessRow>()
  const findCard = lazily(() => preparedRows(db, { toSQL: cardQuery }, 'project_card', cardOf))
  return {
    /**
     * Creates a project and makes `ownerId` its owner, atomically; `now` (the app clock) stamps it.
     * slug_taken when the workspace has a project with that slug.
     */
    async create(input: { workspaceId: string; ownerId: string; now?: Date } & CardFields & { slug: string; name: string }): Promise<CardWrite> {
      const { workspaceId, ownerId, now, ...fields } = input
      const card = { ...cardColumns(fields), slug: fields.slug, name: fields.name }
      return slugChecked(async () => {
        const row = await db.transaction(async (tx) => {
          const stamps = now ? { createdAt: now, updatedAt: now } : {}
          const [row] = await tx.insert(projects).values({ ...card, ...stamps, id: newId('prj'), workspaceId }).returning()
          await tx.insert(memberships).values({ userId: ownerId, projectId: row!.id, role: 'owner' })
          return row!
        })
        return { ok: true, project: toProjectCard(row) }
      })
    },

    /** Projects with this id or slug in any workspace (operator commands only). */
    async findAnywhere(ref: string): Promise<ProjectRow[]> {
      return db.select().from(projects).where(or(eq(projects.id, ref), eq(projects.slug, ref))).limit(5)
    },

    /** A project of the workspace by id or slug, regardless of who asks. */
    async findInWorkspace(workspaceId: string, ref: string): Promise<ProjectRow | undefined> {
      const [row] = await db
        .select()
        .from(projects)
        .where(and(eq(projects.workspaceId, workspaceId), or(eq(projects.id, ref), eq(projects.slug, ref))))
        .limit(1)
      return row
    },

    /**
     * The project `ref` (id or slug) as the principal may see it, with the role it acts
     * with there; undefined when it does not exist, is in another workspace, the user is no
     * member, or the key is narrowed to another project (all answer 404 alike).
     */
    async access(principal: AccessPrincipal, ref: string): Promise<ProjectAccessRow | undefined> {
      const who = `${principal.workspaceId}\u0000${principal.userId}\u0000${principal.projectId ?? ''}\u0000${ref}`
      const row = await reached.get(who, async () => {
        const [row] = await db
          .select({
            id: projects.id,
            slug: projects.slug,
            name: projects.name,
            timezone: projects.timezone,
            role: memberships.role,
            distinctId: sql<string>`coalesce(${memberships.distinctId}, ${users.email})`,
          })
          .from(projects)
          .innerJoin(memberships, and(eq(memberships.projectId, projects.id), eq(memberships.userId, principal.userId)))
          .innerJoin(users, eq(users.id, memberships.userId))
          .where(
            and(
              eq(projects.workspaceId, principal.workspaceId),
              or(eq(projects.id, ref), eq(projects.slug, ref)),
              principal.projectId ? eq(projects.id, principal.projectId) : undefined
            )
          )
          .limit(1)
        return row
      })
      if (!row) return undefined
      return { ...row, role: cappedRole(row.role, principal) }
    },

    /** The projects the principal reaches, as cards with the role it acts with there. */
    async listForUser(principal: AccessPrincipal): Promise<{ project: ProjectCard; role: Role }[]> {
      const rows = await db
        .select({ project: projects, role: memberships.role })
        .from(projects)
        .innerJoin(memberships, and(eq(memberships.projectId, projects.id), eq(memberships.userId, principal.userId)))
        .where(and(eq(projects.workspaceId, principal.workspaceId), principal.projectId ? eq(projects.id, principal.projectId) : undefined))
        .orderBy(asc(projects.createdAt), asc(projects.id))
      return rows.map((r) => ({ project: toProjectCard(r.project), role: cappedRole(r.role, principal) }))
    },

    /** The project card (get_project's read: a named statement, array rows). */
    async find(projectId: string): Promise<ProjectCard | undefined> {
      const [card] = await findCard().execute({ projectId })
      return card
    },

    /**
     * Changes only the sent card fields in one UPDATE. A new time zone re-derives every
     * event's local day and the rollups in the same transaction; ingestion takes a share
     * lock on the project row, so no batch lands half in the old zone. Undefined when the
     * project is gone; slug_taken when another project of the workspace has the new slug.
     */
    async update(projectId: string, fields: CardFields, now: Date): Promise<CardWrite | undefined> {
      const card = cardColumns(fields)
      return slugChecked(() =>
        cache.changes(db.transaction(async (tx): Promise<CardWrite | undefined> => {
          const [before] = await tx.select({ timezone: projects.timezone }).from(projects).where(eq(projects.id, projectId)).for('update')
          if (!before) return undefined
          const zoneChanges = card.timezone !== undefined && card.timezone !== before.timezone
          if (zoneChanges) {
            const dropped = await rawEventsDropped(tx, projectId)
            if (dropped) return dropped
          }
          const [row] = await tx.update(projects).set({ ...card, updatedAt: now }).where(eq(projects.id, projectId)).returning()
          if (zoneChanges) await rebuildRollups(tx, projectId, card.timezone!)
          const project = toProjectCard(row!)
          await enqueueWebhooks(tx, projectId, 'project.updated', now, [project])
          return { ok: true, project }
        }))
      )
    },

    /** The longest-standing owner of a project (operator commands act as them). */
    async firstOwner(projectId: string) {
      const [row] = await db
        .select({ id: users.id, email: users.email })
        .from(memberships)
        .innerJoin(users, eq(users.id, memberships.userId))
        .where(and(eq(memberships.projectId, projectId), eq(memberships.role, 'owner')))
        .orderBy(asc(memberships.createdAt))
        .limit(1)
      return row
    },

  }
}

/**
 * Refuses a rebuild that would lose days: the project has rollup days before the first day of the
 * oldest event partition (retention dropped their raw events), or rollups and no partition at all.
 */
async function rawEventsDropped(tx: Queryable, projectId: string): Promise<CardWrite | undefined> {
  const since = await createPartitionsRepository(tx).oldestDay()
  const [first] = await tx
    .select({ day: sql<string | null>`min(${dailyEventCounts.day})` })
    .from(dailyEventCounts)
    .where(eq(dailyEventCounts.projectId, projectId))
  if (!first?.day || (since !== null && first.day >= since)) return undefined
  return { ok: false, reason: 'raw_events_dropped', since }
}

/** Recomputes event days and all rollups of one project from its raw events. */
async function rebuildRollups(tx: Queryable, projectId: string, timeZone: string) {
  await tx.delete(dailyEventUsers).where(eq(dailyEventUsers.projectId, projectId))
  await tx.delete(dailyEventCounts).where(eq(dailyEventCounts.projectId, projectId))
  await tx.delete(userActivity).where(eq(userActivity.projectId, projectId))
  // The project's events are found by project_seq, which leads the event indexes.
  const seq = projectSeq(projectId)
  // A new day can fall in the month before or after those with partitions: create them first.
  await tx.execute(sql`
    select events_ensure_partitions(min(day) - 1, max(day) + 1) from events where project_seq = ${seq}`)
  // The same uuid on the same new day would be one event (the unique key holds the day): the later copy goes.
  await tx.execute(sql`
    delete from events e using events f
    where e.project_seq = ${seq} and f.project_seq = ${seq} and f.uuid = e.uuid and f.id < e.id
      and (f.occurred_at at time zone ${timeZone})::date = (e.occurred_at at time zone ${timeZone})::date`)
  await tx.update(events).set({ day: sql`(${events.occurredAt} at time zone ${timeZone})::date` }).where(eq(events.projectSeq, seq))
  await tx.execute(sql`
    insert into daily_event_users (project_id, event, day, distinct_id)
    select distinct project_id, event, day, distinct_id from events where project_seq = ${seq}`)
  await tx.execute(sql`
    insert into daily_event_counts (project_id, day, event, events, unique_users)
    select project_id, day, event, count(*), count(distinct distinct_id) from events
    where project_seq = ${seq} group by project_id, day, event`)
  // Retention's cells from the new days (the queue is emptied: the rebuild covers it).
  await tx.execute(sql`select retention_rebuild(${projectId})`)
  await tx.execute(sql`
    insert into user_activity (project_id, distinct_id, last_active_day)
    select project_id, distinct_id, max(day) from events
    where project_seq = ${seq} and event = 'daily_use' group by project_id, distinct_id`)
}

/**
 * The card by id, its columns in the order `cardOf` reads them. Not from the access check's
 * cached row: that cache holds only what its NOTIFY trigger covers (slug, name, time zone), and
 * a card changed by another instance would be served stale.
 */
const cardQuery = () => new PgDialect().sqlToQuery(sql`
  select id, slug, name, description, website, audience, value_proposition, goals, channels, stage, timezone,
         created_at, updated_at
  from projects where id = ${sql.placeholder('projectId')}`)

const cardOf = (v: unknown[]): ProjectCard => ({
  id: v[0] as string,
  slug: v[1] as string,
  name: v[2] as string,
  description: v[3] as string,
  website: v[4] as string,
  audience: v[5] as string,
  value_proposition: v[6] as string,
  goals: v[7] as string[],
  channels: v[8] as string[],
  stage: v[9] as string,
  timezone: v[10] as string,
  created_at: isoMillis(v[11] as string),
  updated_at: isoMillis(v[12] as string),
})

function toProjectCard(row: ProjectRow): ProjectCard {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    website: row.website,
    audience: row.audience,
    value_proposition: row.valueProposition,
    goals: row.goals,
    channels: row.channels,
    stage: row.stage,
    timezone: row.timezone,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** API field names (snake_case) → columns, keeping only the fields that were sent. */
function cardColumns(card: CardFields): ProjectCardInput {
  const { value_proposition, ...rest } = card
  return { ...rest, ...(value_proposition !== undefined ? { valueProposition: value_proposition } : {}) }
}
