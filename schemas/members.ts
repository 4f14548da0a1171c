// Members of a workspace and invitations to it: a role per project.
import { Type } from '@sinclair/typebox'
import { ProjectRef, Role, StringEnum, Timestamp } from './atoms.ts'

export const MemberEmail = Type.String({ format: 'email', minLength: 3, maxLength: 254, description: 'The person\'s email address (one account per email in the deployment).' })

export const InvitationId = Type.String({ pattern: '^inv_[0-9A-Za-z]{1,40}$', description: 'The invitation id (inv_…), from list_members.' })

/** A project and a role in it, as a caller names them. */
export const ProjectRoleArg = Type.Object({
  project: ProjectRef,
  role: Role,
}, { additionalProperties: false })

/** A project and a role in it, as results name them. */
export const ProjectRole = Type.Object({
  project: Type.String({ description: 'The project\'s slug.' }),
  id: Type.String({ description: 'The project\'s id (prj_…).' }),
  name: Type.String(),
  role: Role,
})

export const Member = Type.Object({
  id: Type.String({ description: 'The user id (usr_…).' }),
  email: Type.String(),
  workspace_role: StringEnum(['owner', 'member'] as const, { description: 'owner: manages the workspace\'s settings and may remove any member.' }),
  you: Type.Boolean({ description: 'Whether this is the caller.' }),
  joined_at: Timestamp(),
  projects: Type.Array(ProjectRole, { description: 'Their role in each project you can see.' }),
})

export const Invitation = Type.Object({
  id: Type.String({ description: 'The invitation id (inv_…): cancel_invitation takes it.' }),
  email: Type.String(),
  invited_by: Type.Union([Type.String(), Type.Null()], { description: 'Who sent it (null: the account is gone).' }),
  created_at: Timestamp(),
  expires_at: Timestamp(),
  expired: Type.Boolean({ description: 'Past expires_at: the link no longer works (invite again for a new one).' }),
  projects: Type.Array(ProjectRole),
})
