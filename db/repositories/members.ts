// The people of a workspace: invitations (a role per project, a single-use link kept as its
// token's hash), members' roles per project, and removal from a project or from the workspace.
// Every write is one transaction; the conditions that make a write legal (an invitation still
// open, a project left with an owner) are in its own statements, never read first in JavaScript.
// Whatever changes a role, a membership or a user's standing goes through the settings cache
// (db/settings-cache.ts), whose triggers tell every other instance (migrations 0008 and 0014).
import { and, asc, eq, gt, inArray, isNull, ne, sql } from '../orm.ts'
import { isUniqueViolation, type Queryable } from '../client.ts'
import { apiKeys, invitationProjects, invitations, memberships, oauthGrants, passwordResets, projects, sessions, users, workspaces } from '../schema.ts'
import { newId } from '../ids.ts'
import { SettingsCache } from '../settings-cache.ts'
import { clearAssignments } from './assignees.ts'
import type { Role } from '../../schemas/atoms.ts'

export interface InvitedProject {
  projectId: string
  role: Role
}

/** A project of an invitation or a membership, as pages and tools name it. */
export interface ProjectRole {
  id: string
  slug: string
  name: string
  role: Role
}

/** Why an invitation link does not work (any more). */
export type InvitationState = 'pending' | 'expired' | 'accepted' | 'cancelled'

/** A write refused for a reason the caller words (the transaction changed nothing). */
class Refusal extends Error {
  readonly reason: string
  readonly detail: string
  constructor(reason: string, detail = '') {
    super(reason)
    this.reason = reason
    this.detail = detail
  }
}

/** The projects of some invitations, with their roles, by invitation id. */
async function invitationProjectsOf(db: Queryable, ids: string[]): Promise<Map<string, ProjectRole[]>> {
  const out = new Map<string, ProjectRole[]>()
  if (ids.length === 0) return out
  const rows = await db
    .select({ invitationId: invitationProjects.invitationId, id: projects.id, slug: projects.slug, name: projects.name, role: invitationProjects.role })
    .from(invitationProjects)
    .innerJoin(projects, eq(projects.id, invitationProjects.projectId))
    .where(inArray(invitationProjects.invitationId, ids))
    .orderBy(asc(projects.createdAt), asc(projects.id))
  for (const { invitationId, ...project } of rows) {
    const list = out.get(invitationId) ?? []
    list.push(project)
    out.set(invitationId, list)
  }
  return out
}

/**
 * Locks the rows of these projects (in id order, so that two writers never wait on each other in
 * a circle): the membership changes of one project take turns, and "is an owner left?" is
 * answered with no other change in between.
 */
async function lockProjects(tx: Queryable, projectIds: string[]) {
  if (projectIds.length === 0) return
  await tx.select({ id: projects.id }).from(projects).where(inArray(projects.id, [...projectIds].sort())).orderBy(asc(projects.id)).for('update')
}

/** The projects among these that have no owner (left after a change in the same transaction). */
async function ownerless(tx: Queryable, projectIds: string[]): Promise<{ id: string; slug: string }[]> {
  if (projectIds.length === 0) return []
  return tx
    .select({ id: projects.id, slug: projects.slug })
    .from(projects)
    .where(and(
      inArray(projects.id, projectIds),
      // Spelled out: drizzle writes a column of the select's own table unqualified, which inside
      // the subquery would name the subquery's own column.
      sql`not exists (select 1 from memberships m join users u on u.id = m.user_id where m.project_id = "projects"."id" and m.role = 'owner' and u.removed_at is null)`
    ))
    .orderBy(asc(projects.slug))
}

export function createMembersRepository(db: Queryable, cache = new SettingsCache()) {
  return {
    /**
     * A new invitation of `email` to the workspace with a role in each project; any invitation
     * still open for that email in the workspace is cancelled by it (its link stops working).
     * `tokenHash` is the only trace of the link's token. Resolves to the invitation, or
     * `{ ok: false }` when another invitation for the same email was being made at the same
     * moment (the one-pending-invitation index refused this one).
     */
    async invite(input: { workspaceId: string; email: string; invitedBy: string | null; projects: InvitedProject[]; tokenHash: string; now: Date; expiresAt: Date }) {
      const email = input.email.toLowerCase()
      try {
        return await db.transaction(async (tx) => {
          const replaced = await tx
            .update(invitations)
            .set({ cancelledAt: input.now })
            .where(and(eq(invitations.workspaceId, input.workspaceId), eq(invitations.email, email), isNull(invitations.acceptedAt), isNull(invitations.cancelledAt)))
            .returning({ id: invitations.id })
          const [row] = await tx
            .insert(invitations)
            .values({ id: newId('inv'), workspaceId: input.workspaceId, email, tokenHash: input.tokenHash, invitedBy: input.invitedBy, createdAt: input.now, expiresAt: input.expiresAt })
            .returning()
          await tx.insert(invitationProjects).values(input.projects.map((p) => ({ invitationId: row!.id, projectId: p.projectId, role: p.role })))
          return { ok: true as const, invitation: row!, replaced: replaced.map((r) => r.id) }
        })
      } catch (err) {
        if (isUniqueViolation(err)) return { ok: false as const }
        throw err
      }
    },

    /** The workspace's invitations not accepted or cancelled (expired ones too, marked by their expires_at), newest first, with their projects and who sent them. */
    async pending(workspaceId: string) {
      const rows = await db
        .select({ id: invitations.id, email: invitations.email, createdAt: invitations.createdAt, expiresAt: invitations.expiresAt, invitedBy: users.email })
        .from(invitations)
        .leftJoin(users, eq(users.id, invitations.invitedBy))
        .where(and(eq(invitations.workspaceId, workspaceId), isNull(invitations.acceptedAt), isNull(invitations.cancelledAt)))
        .orderBy(sql`${invitations.createdAt} desc`, asc(invitations.id))
      const byId = await invitationProjectsOf(db, rows.map((r) => r.id))
      return rows.map((r) => ({ ...r, projects: byId.get(r.id) ?? [] }))
    },

    /** One open invitation of the workspace (not accepted or cancelled; perhaps expired), with its projects. */
    async findPending(workspaceId: string, id: string) {
      const [row] = await db
        .select({ id: invitations.id, email: invitations.email, expiresAt: invitations.expiresAt })
        .from(invitations)
        .where(and(eq(invitations.workspaceId, workspaceId), eq(invitations.id, id), isNull(invitations.acceptedAt), isNull(invitations.cancelledAt)))
      if (!row) return undefined
      return { ...row, projects: (await invitationProjectsOf(db, [row.id])).get(row.id) ?? [] }
    },

    /** Cancels an open invitation of the workspace (its link stops working); false when there is none. */
    async cancel(workspaceId: string, id: string, now: Date): Promise<boolean> {
      const rows = await db
        .update(invitations)
        .set({ cancelledAt: now })
        .where(and(eq(invitations.workspaceId, workspaceId), eq(invitations.id, id), isNull(invitations.acceptedAt), isNull(invitations.cancelledAt)))
        .returning({ id: invitations.id })
      return rows.length > 0
    },

    /** The invitation whose link carries the token of this hash, with what its page shows and whether it still works at `now`. */
    async findByToken(tokenHash: string, now: Date) {
      const [row] = await db
        .select({
          id: invitations.id,
          workspaceId: invitations.workspaceId,
          workspaceName: workspaces.name,
          email: invitations.email,
          invitedBy: users.email,
          expiresAt: invitations.expiresAt,
          acceptedAt: invitations.acceptedAt,
          cancelledAt: invitations.cancelledAt,
        })
        .from(invitations)
        .innerJoin(workspaces, eq(workspaces.id, invitations.workspaceId))
        .leftJoin(users, eq(users.id, invitations.invitedBy))
        .where(eq(invitations.tokenHash, tokenHash))
      if (!row) return undefined
      const state: InvitationState = row.acceptedAt ? 'accepted' : row.cancelledAt ? 'cancelled' : row.expiresAt <= now ? 'expired' : 'pending'
      return { ...row, state, projects: (await invitationProjectsOf(db, [row.id])).get(row.id) ?? [] }
    },

    /**
     * Accepts an invitation, once: the first conditional UPDATE that finds it open wins, any
     * other (a second tab, a replay) finds it accepted. In the same transaction the account is
     * made (or, for a member once removed from this workspace, brought back) with the chosen
     * password, and the invitation's memberships are added. Refusals change nothing:
     * `gone` (unknown, used, cancelled or expired), `other_workspace` (the email has an account
     * in another workspace), `already_member` (an active member of this workspace).
     */
    async accept(input: { tokenHash: string; passwordHash: string; now: Date }) {
      try {
        return await cache.changes(db.transaction(async (tx) => {
          const [invitation] = await tx
            .update(invitations)
            .set({ acceptedAt: input.now })
            .where(and(eq(invitations.tokenHash, input.tokenHash), isNull(invitations.acceptedAt), isNull(invitations.cancelledAt), gt(invitations.expiresAt, input.now)))
            .returning({ id: invitations.id, workspaceId: invitations.workspaceId, email: invitations.email })
          if (!invitation) throw new Refusal('gone')
          const [existing] = await tx.select().from(users).where(eq(users.email, invitation.email)).for('update')
          let userId: string
          if (!existing) {
            const [created] = await tx
              .insert(users)
              .values({ id: newId('usr'), workspaceId: invitation.workspaceId, email: invitation.email, passwordHash: input.passwordHash, workspaceRole: 'member', passwordChangedAt: input.now })
              .returning({ id: users.id })
            userId = created!.id
          } else if (existing.workspaceId !== invitation.workspaceId) {
            throw new Refusal('other_workspace')
          } else if (existing.removedAt === null) {
            throw new Refusal('already_member')
          } else {
            // A member once removed from this workspace comes back, with the new password only.
            await tx.update(users).set({ removedAt: null, passwordHash: input.passwordHash, passwordChangedAt: input.now, workspaceRole: 'member' }).where(eq(users.id, existing.id))
            userId = existing.id
          }
          await tx.execute(sql`
            insert into ${memberships} (user_id, project_id, role, created_at)
            select ${userId}, ip.project_id, ip.role, ${input.now.toISOString()}::timestamptz
            from ${invitationProjects} ip where ip.invitation_id = ${invitation.id}
            on conflict (user_id, project_id) do update set role = excluded.role`)
          await tx.update(invitations).set({ acceptedBy: userId }).where(eq(invitations.id, invitation.id))
          const [user] = await tx.select().from(users).where(eq(users.id, userId))
          return { ok: true as const, user: user!, invitationId: invitation.id }
        }))
      } catch (err) {
        if (err instanceof Refusal) return { ok: false as const, reason: err.reason as 'gone' | 'other_workspace' | 'already_member' }
        // The email was taken by an account made at the same moment (another acceptance).
        if (isUniqueViolation(err)) return { ok: false as const, reason: 'gone' as const }
        throw err
      }
    },

    /**
     * The active members of the workspace who belong to at least one of `projectIds`, each with
     * their roles in those projects (oldest member first).
     */
    async list(workspaceId: string, projectIds: string[]) {
      if (projectIds.length === 0) return []
      const rows = await db
        .select({
          id: users.id,
          email: users.email,
          workspaceRole: users.workspaceRole,
          createdAt: users.createdAt,
          project: { id: projects.id, slug: projects.slug, name: projects.name, role: memberships.role },
        })
        .from(users)
        .innerJoin(memberships, eq(memberships.userId, users.id))
        .innerJoin(projects, eq(projects.id, memberships.projectId))
        .where(and(eq(users.workspaceId, workspaceId), isNull(users.removedAt), inArray(memberships.projectId, projectIds)))
        .orderBy(asc(users.createdAt), asc(users.id), asc(projects.createdAt), asc(projects.id))
      const members = new Map<string, { id: string; email: string; workspaceRole: 'owner' | 'member'; createdAt: Date; projects: ProjectRole[] }>()
      for (const { project, ...user } of rows) {
        const member = members.get(user.id) ?? { ...user, projects: [] }
        member.projects.push(project)
        members.set(user.id, member)
      }
      return [...members.values()]
    },

    /** The active members of the workspace in none of `projectIds` (a workspace owner's listing shows them too). */
    async outside(workspaceId: string, projectIds: string[]) {
      return db
        .select({ id: users.id, email: users.email, workspaceRole: users.workspaceRole, createdAt: users.createdAt })
        .from(users)
        .where(and(
          eq(users.workspaceId, workspaceId),
          isNull(users.removedAt),
          projectIds.length === 0 ? undefined : sql`not exists (select 1 from memberships m where m.user_id = "users"."id" and m.project_id in ${projectIds})`
        ))
        .orderBy(asc(users.createdAt), asc(users.id))
    },

    /** An active member of the workspace by email, with every project they belong to. */
    async find(workspaceId: string, email: string) {
      const [user] = await db
        .select({ id: users.id, email: users.email, workspaceRole: users.workspaceRole })
        .from(users)
        .where(and(eq(users.workspaceId, workspaceId), eq(users.email, email.toLowerCase()), isNull(users.removedAt)))
      if (!user) return undefined
      const projectRoles = await db
        .select({ id: projects.id, slug: projects.slug, name: projects.name, role: memberships.role })
        .from(memberships)
        .innerJoin(projects, eq(projects.id, memberships.projectId))
        .where(eq(memberships.userId, user.id))
        .orderBy(asc(projects.createdAt), asc(projects.id))
      return { ...user, projects: projectRoles }
    },

    /**
     * Gives the member `role` in the project (adding the membership when they had none), unless
     * that leaves the project without an owner. Resolves to the role they had before (null: none).
     */
    async setRole(input: { userId: string; projectId: string; role: Role; now: Date }) {
      try {
        return await cache.changes(db.transaction(async (tx) => {
          await lockProjects(tx, [input.projectId])
          const [before] = await tx.select({ role: memberships.role }).from(memberships).where(and(eq(memberships.userId, input.userId), eq(memberships.projectId, input.projectId)))
          await tx
            .insert(memberships)
            .values({ userId: input.userId, projectId: input.projectId, role: input.role, createdAt: input.now })
            .onConflictDoUpdate({ target: [memberships.userId, memberships.projectId], set: { role: input.role } })
          if ((await ownerless(tx, [input.projectId])).length > 0) throw new Refusal('last_owner')
          return { ok: true as const, previous: before?.role ?? null }
        }))
      } catch (err) {
        if (err instanceof Refusal) return { ok: false as const, reason: 'last_owner' as const }
        throw err
      }
    },

    /**
     * Ends the member's membership of one project, unless they are its last owner; false when they
     * had none. Their assignments there end in the same transaction (by `actorUserId`, at `now`).
     */
    async removeFromProject(input: { userId: string; projectId: string; actorUserId?: string | null; now?: Date }) {
      try {
        return await cache.changes(db.transaction(async (tx) => {
          await lockProjects(tx, [input.projectId])
          const gone = await tx.delete(memberships).where(and(eq(memberships.userId, input.userId), eq(memberships.projectId, input.projectId))).returning({ role: memberships.role })
          if (gone.length === 0) return { ok: false as const, reason: 'not_member' as const }
          if ((await ownerless(tx, [input.projectId])).length > 0) throw new Refusal('last_owner')
          const unassigned = await clearAssignments(tx, { userId: input.userId, projectIds: [input.projectId], actorUserId: input.actorUserId ?? null, now: input.now ?? new Date() })
          return { ok: true as const, previous: gone[0]!.role, unassigned }
        }))
      } catch (err) {
        if (err instanceof Refusal) return { ok: false as const, reason: 'last_owner' as const }
        throw err
      }
    },

    /**
     * Removes the user from the workspace, all in one transaction: they are marked removed, lose
     * every membership, their keys are revoked, their OAuth grants (and the tokens issued under
     * them) withdrawn, their console sessions ended and their open password-reset links spent.
     * Every instance drops what it kept of them at the commit (the triggers of migration 0008). Their
     * assignments in those projects end too (by `actorUserId`).
     * Refused when a project would be left without an owner (`last_owner`, naming them).
     */
    async removeFromWorkspace(input: { workspaceId: string; userId: string; now: Date; actorUserId?: string | null }) {
      try {
        return await cache.changes(db.transaction(async (tx) => {
          const theirs = await tx.select({ projectId: memberships.projectId }).from(memberships).where(eq(memberships.userId, input.userId))
          const projectIds = theirs.map((m) => m.projectId)
          await lockProjects(tx, projectIds)
          const [user] = await tx
            .update(users)
            .set({ removedAt: input.now })
            .where(and(eq(users.id, input.userId), eq(users.workspaceId, input.workspaceId), isNull(users.removedAt)))
            .returning({ id: users.id })
          if (!user) throw new Refusal('not_member')
          const memberRows = await tx.delete(memberships).where(eq(memberships.userId, input.userId)).returning({ projectId: memberships.projectId })
          const left = await ownerless(tx, memberRows.map((m) => m.projectId))
          if (left.length > 0) throw new Refusal('last_owner', left.map((p) => p.slug).join(', '))
          // Their assignments end with their memberships.
          const unassigned = await clearAssignments(tx, { userId: input.userId, projectIds: memberRows.map((m) => m.projectId), actorUserId: input.actorUserId ?? null, now: input.now })
          const keys = await tx.update(apiKeys).set({ revokedAt: input.now }).where(and(eq(apiKeys.userId, input.userId), isNull(apiKeys.revokedAt))).returning({ id: apiKeys.id })
          const grants = await tx.update(oauthGrants).set({ revokedAt: input.now }).where(and(eq(oauthGrants.userId, input.userId), isNull(oauthGrants.revokedAt))).returning({ id: oauthGrants.id })
          const ended = await tx.delete(sessions).where(eq(sessions.userId, input.userId)).returning({ sid: sessions.sid })
          await tx.update(passwordResets).set({ usedAt: input.now }).where(and(eq(passwordResets.userId, input.userId), isNull(passwordResets.usedAt)))
          return { ok: true as const, projects: memberRows.length, unassigned, keysRevoked: keys.length, grantsRevoked: grants.length, sessionsEnded: ended.length }
        }))
      } catch (err) {
        if (err instanceof Refusal) return { ok: false as const, reason: err.reason as 'not_member' | 'last_owner', projects: err.detail }
        throw err
      }
    },

    /** The workspace's longest-standing owner still a member (operator commands act as them). */
    async workspaceOwner(workspaceId: string) {
      const [row] = await db
        .select({ id: users.id, email: users.email, workspaceId: users.workspaceId })
        .from(users)
        .where(and(eq(users.workspaceId, workspaceId), eq(users.workspaceRole, 'owner'), isNull(users.removedAt)))
        .orderBy(asc(users.createdAt), asc(users.id))
        .limit(1)
      return row
    },

    /** The workspace of an invitation (operator commands name an invitation by its id alone). */
    async invitationWorkspace(id: string): Promise<string | undefined> {
      const [row] = await db.select({ workspaceId: invitations.workspaceId }).from(invitations).where(eq(invitations.id, id))
      return row?.workspaceId
    },

    /** An account with this email in another workspace than `workspaceId` (an email names one account in the deployment). */
    async elsewhere(workspaceId: string, email: string): Promise<boolean> {
      const [row] = await db.select({ id: users.id }).from(users).where(and(eq(users.email, email.toLowerCase()), ne(users.workspaceId, workspaceId)))
      return row !== undefined
    },
  }
}
