import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { checkTimeZone, writtenCard } from './project-card.ts'
import { ProjectCardFields, ProjectWithRole } from '../schemas/projects.ts'

export const ProjectCardPatch = Type.Partial(Type.Object(ProjectCardFields), { additionalProperties: false })

export default defineOperation({
  name: 'update_project',
  title: 'Update the project card',
  description:
    'Project card update: only the fields you send change; a new time zone recomputes the daily metrics. Owner only. ' +
    'Returns the card.',
  scope: 'project',
  toolset: 'admin',
  role: 'owner',
  input: ProjectCardPatch,
  output: ProjectWithRole,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'New goals and stage', args: { goals: ['500 weekly active teams by June', '20 paying customers'], stage: 'growth' } },
      { title: 'Count the days in New York time', args: { timezone: 'America/New_York' } },
    ],
    invalid: [
      { title: 'Nothing to change', args: {}, field: '' },
      { title: 'Goals as one text instead of a list', args: { goals: 'grow' }, field: 'goals' },
      { title: 'A time zone that does not exist', args: { timezone: 'Mars/Olympus_Mons' }, field: 'timezone' },
      { title: 'An id: the project is `project`', args: { id: 'prj_4Wq8Zt2Lx6Cv1Bn9Mk3s', stage: 'growth' }, field: 'id' },
    ],
  },
  async handler(args, ctx) {
    if (Object.keys(args).length === 0) {
      throw appError('InvalidArguments', 'Send at least one field of the project card to change.', [{ path: '', message: 'must have at least one field' }])
    }
    checkTimeZone(args.timezone)
    const result = await ctx.repos.projects.update(ctx.project.id, args, ctx.now())
    if (!result) throw appError('NotFound', `Project '${ctx.project.slug}' was not found.`)
    return { ...writtenCard(args.slug, result), role: ctx.project.role }
  },
})
