// What the member operations share: who may manage whom (project owners, the workspace owner;
// never a read-only key) and the wire form of a project's role.
import type { WorkspaceContext } from '../core/operations.ts'
import type { ProjectAccess } from '../core/access.ts'
import { appError } from '../core/errors.ts'
import type { ProjectRole as ProjectRoleRow } from '../db/repositories/members.ts'
import type { Role } from '../schemas/atoms.ts'

/** A write about members: a read-only key never makes one. */
export function refuseReadOnly(ctx: WorkspaceContext) {
  if (ctx.principal.readOnly) throw appError('Forbidden', 'This key is read-only: it cannot change members or invitations.')
}

/** The project as the caller reaches it, where they must be owner; NotFound or Forbidden otherwise. */
export async function ownedProject(ctx: WorkspaceContext, ref: string): Promise<ProjectAccess> {
  const project = await ctx.repos.projects.access(ctx.principal, ref)
  if (!project) throw appError('NotFound', `Project '${ref}' was not found.`)
  if (project.role !== 'owner') throw appError('Forbidden', `Managing members needs the owner role in project '${project.slug}'; your access is ${project.role}.`)
  return project
}

/** Whether the caller is the workspace's owner (a read-only or project-narrowed key never acts as one). */
export async function isWorkspaceOwner(ctx: WorkspaceContext): Promise<boolean> {
  if (ctx.principal.readOnly || ctx.principal.projectId) return false
  const user = await ctx.repos.users.find(ctx.principal.userId)
  return user?.workspaceRole === 'owner'
}

/** Whether the caller owns every one of these projects (as they reach them). */
export async function ownsAll(ctx: WorkspaceContext, projectIds: string[]): Promise<boolean> {
  for (const id of projectIds) {
    const project = await ctx.repos.projects.access(ctx.principal, id)
    if (project?.role !== 'owner') return false
  }
  return true
}

export const toProjectRole = (p: ProjectRoleRow | { id: string; slug: string; name: string; role: Role }) => ({ project: p.slug, id: p.id, name: p.name, role: p.role })

export const normalEmail = (email: string) => email.trim().toLowerCase()
