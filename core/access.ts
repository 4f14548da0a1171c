// Who is calling and what they may do: the principal behind a credential and role ranks.
import type { KeyKind } from '../db/keys.ts'
import type { Role } from '../schemas/atoms.ts'
import type { ProjectAccessRow } from '../db/repositories/projects.ts'

export interface Principal {
  /** The credential, 'console' for a signed-in console session, 'operator' for the CLI. */
  keyId: string
  kind: KeyKind | 'session' | 'operator'
  userId: string
  email: string
  workspaceId: string
  /** The key only reaches this project (ingest keys always; others optionally). */
  projectId: string | null
  /** The key never acts above `viewer`. */
  readOnly: boolean
}

/** A project as the principal reaches it, with the role it acts with there (the membership role, capped by the key). */
export type ProjectAccess = ProjectAccessRow

const rank: Record<Role, number> = { viewer: 1, reviewer: 2, owner: 3 }

export function roleAtLeast(role: Role, needed: Role): boolean {
  return rank[role] >= rank[needed]
}

/** The principal of a user signed in to the console: their own full access. */
export function sessionPrincipal(user: { id: string; email: string; workspaceId: string }): Principal {
  return { keyId: 'console', kind: 'session', userId: user.id, email: user.email, workspaceId: user.workspaceId, projectId: null, readOnly: false }
}

/** The CLI's administrative actions, run by the operator on behalf of a user: that user's own access. */
export function operatorPrincipal(user: { id: string; email: string; workspaceId: string }): Principal {
  return { keyId: 'operator', kind: 'operator', userId: user.id, email: user.email, workspaceId: user.workspaceId, projectId: null, readOnly: false }
}

/**
 * Whose writes a read must see (db/replicas.ts, read_marks): the credential for keys and OAuth
 * tokens (`key:<keyId>`), the user for a console session or the CLI (`user:<userId>`), whose
 * keyId names no credential.
 */
export function readerOf(principal: Principal): string {
  return principal.kind === 'session' || principal.kind === 'operator' ? `user:${principal.userId}` : `key:${principal.keyId}`
}
