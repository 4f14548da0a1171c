import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { isTimeZone } from '../core/time.ts'
import { isUniqueViolation } from '../db/client.ts'
import { ProjectCardFields, ProjectWithRole } from '../schemas/projects.ts'
import { cardColumns, toProjectCard } from '../db/repositories/projects.ts'

export const ProjectCardPatch = Type.Partial(Type.Object(ProjectCardFields), { additionalProperties: false })

export default defineOperation({
  name: 'update_project',
  title: 'Update the project card',
  description:
    'Change fields of the project card; only the fields you send change (slug, name, description, website, audience, ' +
    'value_proposition, goals, channels, stage, timezone). Changing the time zone re-computes the daily metrics. ' +
    'Owner only. Returns the updated card.',
  scope: 'project',
  role: 'owner',
  input: ProjectCardPatch,
  output: ProjectWithRole,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async handler(args, ctx) {
    if (Object.keys(args).length === 0) {
      throw appError('InvalidArguments', 'Send at least one field of the project card to change.', [{ path: '', message: 'must have at least one field' }])
    }
    if (args.timezone !== undefined && !isTimeZone(args.timezone)) {
      throw appError('InvalidArguments', `'${args.timezone}' is not an IANA time zone.`, [{ path: 'timezone', message: 'must be an IANA time zone such as Europe/Berlin' }])
    }
    try {
      const row = await ctx.repos.projects.update(ctx.project.id, cardColumns(args), ctx.now())
      if (!row) throw appError('NotFound', `Project '${ctx.project.slug}' was not found.`)
      return { ...toProjectCard(row), role: ctx.project.role }
    } catch (err) {
      if (isUniqueViolation(err)) throw appError('Conflict', `The slug '${args.slug}' is taken in this workspace.`, [{ path: 'slug', message: 'is taken' }])
      throw err
    }
  },
})
