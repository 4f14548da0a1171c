import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { ProjectWithRole } from '../schemas/projects.ts'

export default defineOperation({
  name: 'get_project',
  title: 'Read the project card',
  description:
    'Project card: what the product is, for whom, its goals, channels, stage and time zone, with your role. Read it ' +
    'before suggesting growth ideas.',
  scope: 'project',
  role: 'viewer',
  input: Type.Object({}, { additionalProperties: false }),
  output: ProjectWithRole,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'The project card and your role', args: {} }],
    invalid: [{ title: 'A choice of fields: the card comes whole', args: { fields: ['goals'] }, field: 'fields' }],
  },
  async handler(_args, ctx) {
    const card = (await ctx.repos.projects.find(ctx.project.id))!
    return { ...card, role: ctx.project.role }
  },
})
