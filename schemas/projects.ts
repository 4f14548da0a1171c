import { Type, type Static } from '@sinclair/typebox'
import { Role, Timestamp } from './atoms.ts'

const List = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 50, description })

export const Slug = Type.String({
  pattern: '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$',
  description: 'Unique in the workspace.',
})

/** The editable fields of a project card; POST requires slug and name, PATCH sends any. */
export const ProjectCardFields = {
  slug: Slug,
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.String({ maxLength: 5000 }),
  website: Type.String({ maxLength: 2048, description: 'Product website, or "".' }),
  audience: Type.String({ maxLength: 2000, description: 'Who the product is for.' }),
  value_proposition: Type.String({ maxLength: 2000 }),
  goals: List('Growth goals.'),
  channels: List('Acquisition channels.'),
  stage: Type.String({ maxLength: 100, description: 'e.g. idea, beta, launched, growth.' }),
  timezone: Type.String({
    minLength: 1,
    maxLength: 64,
    description: 'IANA time zone of "today" and the daily metrics, e.g. Europe/Berlin. Default UTC.',
  }),
}

export const ProjectCard = Type.Object({
  id: Type.String(),
  slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  website: Type.String(),
  audience: Type.String(),
  value_proposition: Type.String(),
  goals: Type.Array(Type.String()),
  channels: Type.Array(Type.String()),
  stage: Type.String(),
  timezone: Type.String(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type ProjectCard = Static<typeof ProjectCard>

export const ProjectWithRole = Type.Composite([ProjectCard, Type.Object({ role: Role })])
