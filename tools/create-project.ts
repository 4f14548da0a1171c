import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { checkTimeZone, writtenCard } from './project-card.ts'
import { ProjectCardFields, ProjectWithRole } from '../schemas/projects.ts'

const { slug, name, ...optional } = ProjectCardFields

export default defineOperation({
  name: 'create_project',
  title: 'Create a project',
  description:
    'Create a project in your workspace with its card (slug and name required; description, website, audience, ' +
    'value_proposition, goals, channels, stage, timezone optional). You become its owner. Returns the card.',
  scope: 'workspace',
  role: 'viewer',
  input: Type.Composite([Type.Object({ slug, name }), Type.Partial(Type.Object(optional))], { additionalProperties: false }),
  output: ProjectWithRole,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  async handler(args, ctx) {
    if (ctx.principal.readOnly || ctx.principal.projectId) {
      throw appError('Forbidden', 'This key is read-only or limited to one project; it cannot create projects.')
    }
    checkTimeZone(args.timezone)
    const result = await ctx.repos.projects.create({
      ...args,
      workspaceId: ctx.principal.workspaceId,
      ownerId: ctx.principal.userId,
      now: ctx.now(),
    })
    return { ...writtenCard(args.slug, result), role: 'owner' as const }
  },
})
