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
    'Project creation: a new project in your workspace with its card (slug and name required, the rest optional); you ' +
    'become its owner. Returns the card.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Composite([Type.Object({ slug, name }), Type.Partial(Type.Object(optional))], { additionalProperties: false }),
  output: ProjectWithRole,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  examples: {
    valid: [
      { title: 'A project with its slug and name', args: { slug: 'acme-analytics', name: 'Acme Analytics' } },
      {
        title: 'A project with its whole card',
        args: {
          slug: 'acme-mobile',
          name: 'Acme Mobile',
          description: 'The mobile app of Acme Analytics: experiment results on the go',
          website: 'https://mobile.acme.example',
          audience: 'Product managers at B2B SaaS companies',
          value_proposition: 'See which growth experiment won before your standup',
          goals: ['2,000 weekly active users by June', '30% of web users on mobile'],
          channels: ['App Store search', 'in-app banner on the web app'],
          stage: 'beta',
          timezone: 'Europe/Berlin',
        },
      },
    ],
    invalid: [
      { title: 'No name', args: { slug: 'acme-analytics' }, field: 'name' },
      { title: 'A slug with capitals and spaces', args: { slug: 'Acme Analytics', name: 'Acme Analytics' }, field: 'slug' },
      { title: 'A time zone that does not exist', args: { slug: 'acme-analytics', name: 'Acme Analytics', timezone: 'Mars/Olympus_Mons' }, field: 'timezone' },
      { title: 'An owner: you become the owner', args: { slug: 'acme-analytics', name: 'Acme Analytics', owner: 'ada@example.com' }, field: 'owner' },
    ],
  },
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
