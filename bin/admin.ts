// Administrative actions shared by the CLI and the server's first start: they act on the
// database directly, or run an operation (tools/) as the operator, never through a credential.
import type { FastifyInstance } from 'fastify'
import { createRepositories } from '../db/repositories/index.ts'
import { generatePassword, hashPassword } from '../core/passwords.ts'
import { operatorPrincipal } from '../core/access.ts'
import { switchTool } from '../core/tool-settings.ts'
import createKeyOperation from '../tools/create-key.ts'
import revokeKeyOperation from '../tools/revoke-key.ts'
import createPasswordResetOperation from '../tools/create-password-reset.ts'
import inviteMemberOperation from '../tools/invite-member.ts'
import listMembersOperation from '../tools/list-members.ts'
import updateMemberOperation from '../tools/update-member.ts'
import removeMemberOperation from '../tools/remove-member.ts'
import cancelInvitationOperation from '../tools/cancel-invitation.ts'
import type { Operation } from '../core/operations.ts'
import type { Static } from '@sinclair/typebox'
import type { KeyKind } from '../db/keys.ts'
import type { Role } from '../schemas/atoms.ts'

export class AdminError extends Error {
  override name = 'AdminError'
}

export function slugify(text: string): string {
  const slug = text
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
  return slug || 'workspace'
}

export interface BootstrapResult {
  workspace: { id: string; name: string }
  user: { id: string; email: string; password: string }
  project: { id: string; slug: string }
  keys: { mcp: string; service: string; ingest: string }
}

/** Creates a workspace, its owner (random password), a project and one key of each kind, atomically. */
export async function bootstrap(
  app: FastifyInstance,
  input: { workspace?: string; email?: string; project?: string } = {}
): Promise<BootstrapResult> {
  const name = input.workspace?.trim() || 'Default workspace'
  const email = (input.email?.trim() || `owner@${slugify(name)}.local`).toLowerCase()
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new AdminError(`'${email}' is not an email address.`)
  if (await app.repos.users.findByEmail(email)) {
    throw new AdminError(`A user with the email ${email} exists already; pass another --email.`)
  }
  const password = generatePassword()
  const passwordHash = await hashPassword(password, app.passwordHashCost)
  const projectName = input.project?.trim() || 'Demo project'
  return app.db.transaction(async (tx) => {
    const repos = createRepositories(tx)
    const workspace = await repos.workspaces.create(name)
    const user = await repos.users.create({ workspaceId: workspace.id, email, passwordHash, workspaceRole: 'owner' })
    const created = await repos.projects.create({
      now: app.now(),
      workspaceId: workspace.id,
      ownerId: user.id,
      name: projectName,
      slug: slugify(projectName),
    })
    // The workspace is new: no slug can be taken in it yet.
    if (!created.ok) throw new AdminError(`The slug '${slugify(projectName)}' is taken.`)
    const project = created.project
    const key = (kind: KeyKind, projectId: string | null = null) =>
      repos.apiKeys.create({ workspaceId: workspace.id, userId: user.id, kind, name: `bootstrap ${kind} key`, projectId })
    return {
      workspace: { id: workspace.id, name: workspace.name },
      user: { id: user.id, email: user.email, password },
      project: { id: project.id, slug: project.slug },
      keys: {
        mcp: (await key('mcp')).key,
        service: (await key('service')).key,
        ingest: (await key('ingest', project.id)).key,
      },
    }
  })
}

/** The one-time credentials of a bootstrap, as lines for a terminal (server first start, CLI). */
export function describeBootstrap(r: BootstrapResult, publicUrl: string): string[] {
  return [
    `  console:   ${publicUrl}/console`,
    `  workspace: ${r.workspace.name} (${r.workspace.id})   (--workspace of admin commands)`,
    `  email:     ${r.user.email}`,
    `  password:  ${r.user.password}`,
    `  project:   ${r.project.slug} (${r.project.id})`,
    `  MCP key:   ${r.keys.mcp}   (project-side API /api/v1/mcp, MCP /mcp)`,
    `  service:   ${r.keys.service}   (tools REST API /v1, MCP /mcp)`,
    `  ingest:    ${r.keys.ingest}   (POST /v1/events for ${r.project.slug})`,
    'These are shown once and stored only as hashes: copy them now.',
    'Later: growthdesk admin list-keys shows every key (masked) with its id; admin list-workspaces the workspace ids.',
  ]
}

/** A project by id, or by slug when exactly one workspace has that slug. */
async function findProject(app: FastifyInstance, ref: string) {
  const rows = await app.repos.projects.findAnywhere(ref)
  if (rows.length === 0) throw new AdminError(`No project '${ref}'.`)
  if (rows.length > 1) throw new AdminError(`The slug '${ref}' is used in ${rows.length} workspaces; pass the project id (prj_…).`)
  return rows[0]!
}

export async function createUser(app: FastifyInstance, input: { email: string; project: string; role: Role }) {
  const email = input.email.trim().toLowerCase()
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new AdminError(`'${input.email}' is not an email address.`)
  const project = await findProject(app, input.project)
  if (await app.repos.users.findByEmail(email)) throw new AdminError(`A user with the email ${email} exists already.`)
  const password = generatePassword()
  const passwordHash = await hashPassword(password, app.passwordHashCost)
  return app.db.transaction(async (tx) => {
    const repos = createRepositories(tx)
    const user = await repos.users.create({ workspaceId: project.workspaceId, email, passwordHash })
    await repos.users.setMembership({ userId: user.id, projectId: project.id, role: input.role })
    const key = (kind: KeyKind) => repos.apiKeys.create({ workspaceId: project.workspaceId, userId: user.id, kind, name: `${kind} key` })
    return {
      user: { id: user.id, email: user.email, password },
      keys: { mcp: (await key('mcp')).key, service: (await key('service')).key },
    }
  })
}

type Acting = { id: string; email: string; workspaceId: string }

/** Runs an operation as `user` on the operator's behalf; its refusals become one line for the operator. */
async function actingAs<O extends Operation>(app: FastifyInstance, user: Acting, op: O, args: Record<string, unknown>, projectRef?: string): Promise<Static<O['output']>> {
  try {
    return await app.registry.invoke(op, args, { principal: operatorPrincipal(user), projectRef, surface: 'cli', log: app.log })
  } catch (err) {
    if ((err as { statusCode?: number }).statusCode !== undefined) throw new AdminError((err as Error).message)
    throw err
  }
}

/** A key for the user with that email, by the one key-issuing policy (the create_key operation). */
export async function createKey(
  app: FastifyInstance,
  input: { email: string; kind: Exclude<KeyKind, 'oauth'>; project?: string; name?: string; readOnly?: boolean; expiresAt?: Date }
) {
  const user = await app.repos.users.findByEmail(input.email)
  if (!user) throw new AdminError(`No user with the email ${input.email}.`)
  const args = {
    kind: input.kind,
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.project !== undefined ? { project: input.project } : {}),
    ...(input.readOnly !== undefined ? { read_only: input.readOnly } : {}),
    ...(input.expiresAt !== undefined ? { expires_at: input.expiresAt.toISOString() } : {}),
  }
  return actingAs(app, user, createKeyOperation, args)
}

/** Revokes a key by its id, as the operator acting for the key's owner (the revoke_key operation). */
export async function revokeKey(app: FastifyInstance, id: string) {
  const key = /^key_[0-9A-Za-z]{1,40}$/.test(id) ? await app.repos.apiKeys.find(id) : undefined
  const owner = key && (await app.repos.users.find(key.userId))
  if (!owner) throw new AdminError(`No key with the id ${id}.`)
  return actingAs(app, owner, revokeKeyOperation, { id })
}

/** The CLI's `tool enable|disable`: switchTool as the operator, for any workspace. */
export async function setToolEnabled(app: FastifyInstance, input: { workspace: string; tool: string; enabled: boolean }) {
  const result = await switchTool(app, input)
  if (!result.ok && result.reason === 'unknown_tool') throw new AdminError(`There is no tool named '${input.tool}'. Known: ${app.registry.names().join(', ') || 'none'}.`)
  if (!result.ok) throw new AdminError(`No workspace with the id ${input.workspace}.`)
  return { workspace: input.workspace, tool: input.tool, enabled: input.enabled, disabled_tools: result.disabled }
}

/** Every key, for `admin list-keys`: who, what, where it reaches, and whether it still works (at `now`). */
export async function listKeys(app: FastifyInstance, filter: { workspace?: string; email?: string; kinds?: KeyKind[]; activeOnly?: boolean }) {
  if (filter.workspace !== undefined && !/^wsp_[0-9A-Za-z]{1,40}$/.test(filter.workspace)) {
    throw new AdminError(`'${filter.workspace}' is not a workspace id (wsp_…); admin list-workspaces shows them.`)
  }
  const email = filter.email?.trim().toLowerCase()
  if (email !== undefined && !(await app.repos.users.findByEmail(email))) throw new AdminError(`No user with the email ${filter.email}.`)
  const now = app.now()
  const rows = await app.repos.apiKeys.listAll({ workspaceId: filter.workspace, email, kinds: filter.kinds })
  const keys = rows.map((k) => ({
    id: k.id,
    workspace: k.workspaceId,
    user: k.email,
    kind: k.kind,
    name: k.name,
    display: k.display,
    project: k.projectId === null ? null : { id: k.projectId, slug: k.projectSlug ?? '' },
    read_only: k.readOnly,
    expires_at: k.expiresAt?.toISOString() ?? null,
    expired: k.expiresAt !== null && k.expiresAt <= now,
    created_at: k.createdAt.toISOString(),
    last_used_at: k.lastUsedAt?.toISOString() ?? null,
    revoked_at: k.revokedAt?.toISOString() ?? null,
  }))
  return filter.activeOnly ? keys.filter((k) => !k.expired && k.revoked_at === null) : keys
}

/** Every workspace, for `admin list-workspaces`: the ids that `--workspace` takes. */
export async function listWorkspaces(app: FastifyInstance) {
  const rows = await app.repos.workspaces.listAll()
  return rows.map((w) => ({ id: w.id, name: w.name, users: w.users, projects: w.projects, disabled_tools: w.disabledTools, created_at: w.createdAt.toISOString() }))
}

/**
 * A single-use link, valid for one hour, that sets a new password for the user with that email
 * (the create_password_reset operation, as the operator acting for that user): for the owner who
 * lost the first start's password. Printed, never mailed: the operator hands it over.
 */
export async function resetPassword(app: FastifyInstance, input: { email: string }): Promise<{ email: string; link: string; expires_at: string }> {
  const email = input.email.trim().toLowerCase()
  const user = await app.repos.users.findByEmail(email)
  if (!user) throw new AdminError(`No user with the email ${email}.`)
  const r = await actingAs(app, user, createPasswordResetOperation, { email })
  // The operator's link is returned, never mailed (the operation mails only for the console).
  return { email: r.email, link: r.link!, expires_at: r.expires_at }
}

// ---------------------------------------------------------------------------------------
// Members and invitations: the operator runs the same operations as the console and the tools,
// acting as a project's first owner, the workspace's owner, or (--as) a member of their choice.

/** The member `email` of the workspace (for --as), or an AdminError. */
async function memberOf(app: FastifyInstance, workspaceId: string, email: string): Promise<Acting> {
  const user = await app.repos.users.findByEmail(email.trim())
  if (!user || user.workspaceId !== workspaceId) throw new AdminError(`No member of that workspace has the email ${email}.`)
  return user
}

async function projectOwner(app: FastifyInstance, project: { id: string; slug: string; workspaceId: string }): Promise<Acting> {
  const owner = await app.repos.projects.firstOwner(project.id)
  if (!owner) throw new AdminError(`Project '${project.slug}' has no owner to act as; pass --as with a member's email.`)
  return { ...owner, workspaceId: project.workspaceId }
}

async function workspaceOwner(app: FastifyInstance, workspaceId: string): Promise<Acting> {
  const owner = await app.repos.members.workspaceOwner(workspaceId)
  if (!owner) throw new AdminError(`Workspace ${workspaceId} has no owner to act as; pass --as with a member's email.`)
  return owner
}

/** Invites `email` to the projects' workspace with a role in each, as the first project's first owner (or --as); the link is returned once. */
export async function inviteMember(app: FastifyInstance, input: { email: string; projects: { project: string; role: Role }[]; as?: string }) {
  const first = input.projects[0]
  if (!first) throw new AdminError('Name at least one --project with its --role.')
  const project = await findProject(app, first.project)
  const actor = input.as ? await memberOf(app, project.workspaceId, input.as) : await projectOwner(app, project)
  const projects = input.projects.map((p, i) => ({ project: i === 0 ? project.id : p.project, role: p.role }))
  return actingAs(app, actor, inviteMemberOperation, { email: input.email.trim(), projects })
}

/** The members of a workspace and its open invitations, as its owner sees them (or --as). */
export async function listMembers(app: FastifyInstance, input: { workspace: string; as?: string }) {
  if (!/^wsp_[0-9A-Za-z]{1,40}$/.test(input.workspace)) throw new AdminError(`'${input.workspace}' is not a workspace id (wsp_…); admin list-workspaces shows them.`)
  const actor = input.as ? await memberOf(app, input.workspace, input.as) : await workspaceOwner(app, input.workspace)
  return { acting_as: actor.email, ...(await actingAs(app, actor, listMembersOperation, {})) }
}

/** Sets a member's role in a project (adding them to it), as the project's first owner. */
export async function updateMember(app: FastifyInstance, input: { email: string; project: string; role: Role }) {
  const project = await findProject(app, input.project)
  return actingAs(app, await projectOwner(app, project), updateMemberOperation, { email: input.email.trim(), role: input.role }, project.id)
}

/** Removes a member from one project (as its first owner) or from their workspace (as its owner). */
export async function removeMember(app: FastifyInstance, input: { email: string; project?: string }) {
  if (input.project !== undefined) {
    const project = await findProject(app, input.project)
    return actingAs(app, await projectOwner(app, project), removeMemberOperation, { email: input.email.trim(), from_project: project.id })
  }
  const member = await app.repos.users.findByEmail(input.email.trim())
  if (!member) throw new AdminError(`No member has the email ${input.email}.`)
  const owner = await workspaceOwner(app, member.workspaceId)
  if (owner.id === member.id) throw new AdminError(`${member.email} owns the workspace and cannot be removed from it.`)
  return actingAs(app, owner, removeMemberOperation, { email: member.email })
}

/** Cancels an open invitation by its id, as its workspace's owner. */
export async function cancelInvitation(app: FastifyInstance, id: string) {
  const workspaceId = /^inv_[0-9A-Za-z]{1,40}$/.test(id) ? await app.repos.members.invitationWorkspace(id) : undefined
  if (!workspaceId) throw new AdminError(`No invitation with the id ${id}.`)
  return actingAs(app, await workspaceOwner(app, workspaceId), cancelInvitationOperation, { id })
}
