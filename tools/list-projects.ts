import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { ProjectWithRole } from '../schemas/projects.ts'

export default defineOperation({
  name: 'list_projects',
  title: 'List projects',
  description:
    'Projects you can reach, each with its project card and your role. Call it first: the other tools take a ' +
    'project\'s id or slug as `project`.',
  scope: 'workspace',
  role: 'viewer',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({ items: Type.Array(ProjectWithRole) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'Every project you can reach', args: {} }],
    invalid: [{ title: 'A project: it lists them all', args: { project: 'acme-web' }, field: 'project' }],
  },
  async handler(_args, ctx) {
    const rows = await ctx.repos.projects.listForUser(ctx.principal)
    return { items: rows.map((r) => ({ ...r.project, role: r.role })) }
  },
})
