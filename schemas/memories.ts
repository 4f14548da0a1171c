import { Type, type Static } from '@sinclair/typebox'
import { Timestamp } from './atoms.ts'

export const MemoryId = Type.String({ pattern: '^mem_[0-9A-Za-z]{1,40}$', description: 'The memory id (mem_…).' })

export const MemoryFields = {
  content: Type.String({ minLength: 1, maxLength: 8000, description: 'What to remember, at most 8000 characters.' }),
  tags: Type.Array(Type.String({ pattern: '^[^\\s,]{1,50}$', description: 'A tag: 1–50 characters, no spaces or commas.' }), {
    maxItems: 20,
    uniqueItems: true,
    description: 'Up to 20 tags.',
  }),
  source: Type.String({ maxLength: 200, description: 'Where it came from (a person, a tool, a URL).' }),
}

export const Memory = Type.Object({
  id: Type.String(),
  project: Type.String({ description: 'The project id.' }),
  content: Type.String(),
  tags: Type.Array(Type.String()),
  source: Type.String(),
  created_by: Type.Union([Type.String(), Type.Null()], { description: 'Email of the user who added it.' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type Memory = Static<typeof Memory>
